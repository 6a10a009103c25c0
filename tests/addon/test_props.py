"""Per-object settings (props.py): presets and Custom, hidden status, frame range, lookups.

Material values are stored as float32: compared with rel=1e-6 against core's
float64 presets; everything else (enums, ints, flags, texts) exactly.
"""

import pytest


@pytest.fixture
def cube(addon):
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    return bpy.context.active_object


def test_choosing_a_preset_sets_its_values_and_editing_one_leaves_it(addon, cube):
    from core.settings import PRESETS

    s = cube.skinmodes
    assert s.material_preset == "FAT"
    s.material_preset = "RUBBER"
    for name, value in PRESETS["RUBBER"].items():
        assert getattr(s, name) == pytest.approx(value, rel=1e-6), name
    s.poisson_ratio = PRESETS["RUBBER"]["poisson_ratio"]  # the same value again: still Rubber
    assert s.material_preset == "RUBBER"
    s.density = 2000.0
    assert s.material_preset == "CUSTOM" and s.density == pytest.approx(2000.0, rel=1e-6)
    s.material_preset = "CUSTOM"  # Custom applies nothing
    assert s.density == pytest.approx(2000.0, rel=1e-6)


def test_status_properties_are_hidden_unkeyable_and_overridable(addon, cube):
    rna = cube.skinmodes.bl_rna.properties
    status = [p for p in rna if p.identifier.startswith(("stat_", "bake_", "modes_key"))]
    assert len(status) >= 17
    for prop in status:
        assert prop.is_hidden and not prop.is_animatable and prop.is_overridable, prop.identifier


def test_frame_range_is_the_scenes_unless_told_otherwise(addon, cube):
    import bpy

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 5, 40
    s = cube.skinmodes
    assert s.frame_range(scene) == (5, 40)
    s.use_scene_range, s.frame_start, s.frame_end = False, 10, 20
    assert s.frame_range(scene) == (10, 20)


def test_lookups_answer_in_one_line_without_an_active_object(addon):
    import bpy

    bpy.context.view_layer.objects.active = None
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.props.active_mesh(bpy.context)
    assert "select the character's mesh" in str(err.value) and "\n" not in str(err.value)
    assert addon.props.scene_of(bpy.context) is bpy.context.scene


def test_preferences_and_default_cache_dir_come_from_the_add_ons_own_entry(addon):
    import bpy

    prefs = addon.props.preferences()
    assert prefs == bpy.context.preferences.addons[addon.__name__].preferences
    before = prefs.cache_dir
    try:
        prefs.cache_dir = "//elsewhere/"
        assert addon.props.default_cache_dir() == "//elsewhere/"
        prefs.cache_dir = ""
        assert addon.props.default_cache_dir() == addon.props.FALLBACK_CACHE_DIR == "//skinmodes_cache/"
    finally:
        prefs.cache_dir = before
