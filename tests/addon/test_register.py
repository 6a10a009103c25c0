"""The extension registers and unregisters cleanly, as Blender does it."""

import pytest


def skinmodes_classes(bpy):
    """Names of skinmodes classes Blender currently has registered."""
    found = set()
    for base in (bpy.types.Panel, bpy.types.Operator, bpy.types.PropertyGroup):
        for cls in base.__subclasses__():
            if "skinmodes" in cls.__module__ and getattr(cls, "is_registered", False):
                found.add(cls.__name__)
    found |= {n for n in dir(bpy.types) if n.startswith("SKINMODES_")}
    return sorted(found)


def skinmodes_handlers(bpy):
    h = bpy.app.handlers
    lists = [h.frame_change_pre, h.frame_change_post, h.depsgraph_update_post, h.load_post]
    return [h for lst in lists for h in lst if "skinmodes" in getattr(h, "__module__", "")]


def test_enabled_extension_provides_its_ui_and_handlers(addon):
    import bpy

    classes = skinmodes_classes(bpy)
    assert "SKINMODES_PT_main" in classes and "SkinmodesSettings" in classes
    assert hasattr(bpy.ops.skinmodes, "bake") and hasattr(bpy.types.Object, "skinmodes")
    assert len(skinmodes_handlers(bpy)) == 4


def test_register_unregister_twice_leaves_nothing_behind(addon):
    import addon_utils
    import bpy

    name = addon.__name__
    for _ in range(2):
        addon_utils.disable(name, default_set=True)
        assert skinmodes_classes(bpy) == []
        assert skinmodes_handlers(bpy) == []
        assert not hasattr(bpy.types.Object, "skinmodes")
        with pytest.raises(KeyError):
            bpy.ops.skinmodes.bake.get_rna_type()
        addon_utils.enable(name, default_set=True)
        assert "SKINMODES_PT_main" in skinmodes_classes(bpy)
        assert len(skinmodes_handlers(bpy)) == 4
