"""Material presets through Blender's preset system (material_presets.py).

The shipped presets are Blender preset files in the extension, and the one
definition core/settings.py reads; the user's presets are saved, applied and
removed through Blender's own operators.  Values are compared exactly where
both sides store the same float32 and with rel=1e-6 (float32 storage) against
core's float64 values.
"""

import functools
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.addon.test_ui import draw

MENU = "SKINMODES_MT_material_presets"


def material(obj, names):
    return {name: getattr(obj.skinmodes, name) for name in names}


def user_folder(bpy, subdir):
    return Path(bpy.utils.user_resource("SCRIPTS", path=os.path.join("presets", subdir), create=True))


@pytest.fixture
def user_presets(addon):
    """Blender's user preset folder for skinmodes, emptied of what a test saved in it."""
    import bpy

    folder = user_folder(bpy, addon.core.settings.PRESET_SUBDIR)
    before = set(folder.iterdir())
    yield folder
    for path in set(folder.iterdir()) - before:
        path.unlink()


def menu_entries(bpy, addon):
    """The preset names the header's menu lists, drawn by Blender's own Menu.draw_preset."""
    cls = addon.material_presets.SKINMODES_MT_material_presets
    stand_in = SimpleNamespace(
        bl_idname=cls.__name__,
        preset_subdir=cls.preset_subdir,
        preset_operator=cls.preset_operator,
        preset_add_operator=cls.preset_add_operator,
    )
    for name in ("path_menu", "draw_preset"):  # Blender's own Menu methods, bound to the stand-in
        setattr(stand_in, name, functools.partial(getattr(bpy.types.Menu, name), stand_in))
    items = draw(bpy, cls.draw, stand_in)
    return [
        i["draw_string"] for i in items if i.get("operator", "").startswith("bpy.ops.skinmodes.material_preset_apply")
    ]


def apply_file(bpy, path):
    """Apply a preset file as its menu entry does (the menu's own preset operator)."""
    return bpy.ops.skinmodes.material_preset_apply(filepath=str(path), menu_idname=MENU)


def test_the_shipped_presets_are_visible_to_blender_and_listed_in_the_menu(addon, creature):
    import bpy

    subdir = addon.core.settings.PRESET_SUBDIR
    shipped = addon.material_presets.SHIPPED_FOLDER
    assert shipped in bpy.utils.preset_paths(subdir)
    assert Path(shipped).parent.parent.parent == Path(addon.__file__).parent  # inside the installed extension
    assert menu_entries(bpy, addon) == ["Fat", "Jelly", "Muscle", "Rubber"]


@pytest.mark.parametrize("pid", ["JELLY", "FAT", "MUSCLE", "RUBBER"])
def test_a_shipped_preset_from_the_menu_sets_what_the_cli_and_api_set(addon, creature, pid):
    import bpy

    from core.settings import PRESETS

    obj, _, _ = creature
    names = PRESETS[pid]
    obj.skinmodes.wobble_hz, obj.skinmodes.material_preset = 42.0, "CUSTOM"  # start away from every preset
    assert apply_file(bpy, addon.material_presets.SHIPPED_FILES[pid]) == {"FINISHED"}
    assert obj.skinmodes.material_preset == pid  # the menu's preset is the object's preset, not "Custom"
    for name, value in names.items():
        assert getattr(obj.skinmodes, name) == pytest.approx(value, rel=1e-6), name
    from_menu = material(obj, names)
    other = bpy.data.objects.new("Other", obj.data)
    addon.api.configure(other, material_preset=pid.lower())
    assert material(other, names) == from_menu  # the same float32 values, bit for bit


def test_the_cli_offers_exactly_the_shipped_presets(addon):
    parser = addon.cli.parser()
    for path in addon.material_presets.SHIPPED_FILES.values():
        for flag in ("--preset", "--material-preset"):
            args = parser.parse_args(["bake", "--object", "Body", flag, path.stem.lower()])
            assert args.material_preset == path.stem.lower()
    with pytest.raises(Exception, match="invalid choice"):
        parser.parse_args(["bake", "--object", "Body", "--preset", "custard"])


def test_a_preset_of_your_own_is_saved_applied_and_removed(addon, creature, user_presets):
    import bpy

    from core.settings import read_preset

    obj, _, _ = creature
    names = addon.material_presets.MATERIAL_VALUES
    s = obj.skinmodes
    s.wobble_hz, s.damping_ratio, s.youngs_modulus = 2.5, 0.6, 3.0e4
    assert s.material_preset == "CUSTOM"
    assert bpy.ops.skinmodes.material_preset_add(name="My Belly") == {"FINISHED"}
    saved = user_presets / "My_Belly.py"
    assert read_preset(saved) == material(obj, names)  # what Blender wrote is what core can read
    assert "My Belly" in menu_entries(bpy, addon)

    other = bpy.data.objects.new("Other", obj.data)
    bpy.context.collection.objects.link(other)
    bpy.context.view_layer.objects.active = other
    assert other.skinmodes.material_preset == "FAT"
    assert apply_file(bpy, saved) == {"FINISHED"}
    assert material(other, names) == material(obj, names)  # exact: repr of the float32 values round-trips

    assert bpy.ops.skinmodes.material_preset_add(name="My Belly", remove_name=True) == {"FINISHED"}
    assert not saved.exists() and "My Belly" not in menu_entries(bpy, addon)


def test_shipped_presets_are_neither_removed_nor_shadowed(addon, creature, user_presets):
    import bpy

    shipped = addon.material_presets.SHIPPED_FILES
    before = {pid: path.read_bytes() for pid, path in shipped.items()}
    assert bpy.ops.skinmodes.material_preset_add(name="Fat") == {"CANCELLED"}  # the name exists
    assert bpy.ops.skinmodes.material_preset_add(name="Jelly", remove_name=True) == {"CANCELLED"}
    assert {pid: path.read_bytes() for pid, path in shipped.items()} == before
    assert list(user_presets.glob("*.py")) == []


def test_enabling_the_add_on_never_writes_a_preset_file(addon, user_presets):
    """A user's own preset named like a shipped one stays exactly as the user wrote it."""
    import addon_utils

    mine = user_presets / "Fat.py"
    mine.write_text("import bpy\nsettings = bpy.context.object.skinmodes\n\nsettings.wobble_hz = 2.0\n")
    before = {p.name: p.read_bytes() for p in user_presets.iterdir()}
    addon_utils.disable(addon.__name__, default_set=True)
    addon_utils.enable(addon.__name__, default_set=True)
    assert {p.name: p.read_bytes() for p in user_presets.iterdir()} == before
