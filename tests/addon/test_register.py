"""The extension registers and unregisters cleanly, as Blender does it (__init__.py).

Everything register() adds is counted: classes (panels, menus, operators, settings, preferences),
handlers, the material presets' search path and the ``skinmodes_api`` alias.
"""

import sys

import pytest


def skinmodes_classes(bpy):
    """Names of skinmodes classes Blender currently has registered."""
    found = set()
    bases = (bpy.types.Panel, bpy.types.Menu, bpy.types.Operator, bpy.types.PropertyGroup, bpy.types.AddonPreferences)
    for base in bases:
        for cls in base.__subclasses__():
            if "skinmodes" in cls.__module__ and getattr(cls, "is_registered", False):
                found.add(cls.__name__)
    found |= {n for n in dir(bpy.types) if n.startswith("SKINMODES_")}
    return sorted(found)


def skinmodes_handlers(bpy):
    h = bpy.app.handlers
    lists = [h.frame_change_pre, h.frame_change_post, h.depsgraph_update_post, h.load_pre, h.load_post, h.save_post]
    return [h for lst in lists for h in lst if "skinmodes" in getattr(h, "__module__", "")]


def presets_visible(bpy, addon):
    return addon.material_presets.SHIPPED_FOLDER in bpy.utils.preset_paths(addon.core.settings.PRESET_SUBDIR)


def test_enabled_extension_provides_its_ui_and_handlers(addon):
    import bpy

    classes = skinmodes_classes(bpy)
    for name in ("SKINMODES_PT_main", "SkinmodesSettings", "SKINMODES_MT_material_presets", "SkinmodesPreferences"):
        assert name in classes, name
    assert hasattr(bpy.ops.skinmodes, "bake") and hasattr(bpy.ops.skinmodes, "material_preset_add")
    assert hasattr(bpy.types.Object, "skinmodes")
    assert len(skinmodes_handlers(bpy)) == 7  # preview: 4; bake: load_post, save_post; Find Gait: load_pre
    assert bpy.context.preferences.addons[addon.__name__].preferences.bl_rna.identifier == "SkinmodesPreferences"
    assert presets_visible(bpy, addon)
    assert sys.modules["skinmodes_api"] is addon.api


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
        assert not presets_visible(bpy, addon) and "skinmodes_api" not in sys.modules
        addon_utils.enable(name, default_set=True)
        assert "SKINMODES_PT_main" in skinmodes_classes(bpy)
        assert len(skinmodes_handlers(bpy)) == 7  # preview: 4; bake: load_post, save_post; Find Gait: load_pre
        assert presets_visible(bpy, addon) and sys.modules["skinmodes_api"].__name__ == f"{name}.api"
