"""Issue 24 (low): a preset of your own is checked like every other input, and listed once.

Before: a user preset with a value out of range was applied silently clamped (Blender's own preset
operator runs the file; the property clamps), and a user preset named like a shipped one was listed
twice.  Now the menu's operator reads the file's values, checks them all, and refuses a bad one in
one line, changing nothing; a name is listed once (the user's file wins).  Values compared exactly.
"""

import pytest

from tests.addon.helpers import settings_fingerprint
from tests.addon.test_material_presets import MENU, menu_entries, user_presets  # noqa: F401


def apply_from_menu(bpy, addon, path):
    """What clicking the preset in the header's menu runs."""
    module, name = addon.material_presets.SKINMODES_MT_material_presets.preset_operator.split(".")
    return getattr(getattr(bpy.ops, module), name)(filepath=str(path), menu_idname=MENU)


def preset_file(folder, name, lines):
    path = folder / f"{name}.py"
    path.write_text("import bpy\n\nsettings = bpy.context.object.skinmodes\n\n" + "".join(f"{x}\n" for x in lines))
    return path


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (['settings.material_preset = "CUSTOM"', "settings.youngs_modulus = -10000.0"], "youngs_modulus must lie in"),
        (['settings.material_preset = "CUSTOM"', "settings.damping_ratio = 7.0"], "damping_ratio must lie in"),
        (["settings.wobble = 3.0"], "unknown setting(s) wobble"),
    ],
)
def test_a_preset_out_of_range_is_refused_in_one_line_and_changes_nothing(
    addon,
    creature,
    user_presets,  # noqa: F811 - the imported fixture
    lines,
    said,
):
    import bpy

    obj, _arm, _scene = creature
    path = preset_file(user_presets, "Too Soft", lines)
    before = settings_fingerprint(obj)
    with pytest.raises(RuntimeError) as err:  # how bpy.ops raises an operator's ERROR report
        apply_from_menu(bpy, addon, path)
    line = str(err.value).strip().splitlines()[-1]
    assert said in line and "was not applied" in line, line
    assert settings_fingerprint(obj) == before


def test_a_preset_of_yours_named_like_a_shipped_one_is_listed_once_and_applied(
    addon,
    creature,
    user_presets,  # noqa: F811 - the imported fixture
):
    import bpy

    obj, _arm, _scene = creature
    mine = preset_file(user_presets, "Fat", ['settings.material_preset = "CUSTOM"', "settings.wobble_hz = 2.25"])
    entries = menu_entries(bpy, addon)
    assert entries.count("Fat") == 1, entries
    assert apply_from_menu(bpy, addon, mine) == {"FINISHED"}
    assert obj.skinmodes.wobble_hz == 2.25 and obj.skinmodes.material_preset == "CUSTOM"
