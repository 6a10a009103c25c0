"""Settings in Blender (props.py, api.py): derived from core/settings.py, validated as a contract, animatable
only where the simulation reads them per frame."""

import numpy as np
import pytest


def test_every_core_setting_is_a_property_with_its_default_and_range(addon, bpy_scene):
    import bpy

    from core.settings import SETTINGS

    bpy.ops.mesh.primitive_cube_add()
    s = bpy.context.active_object.skinmodes
    rna = s.bl_rna.properties
    for st in SETTINGS:
        prop = rna[st.name]
        assert prop.description == st.description
        if st.kind == "float":
            assert getattr(s, st.name) == pytest.approx(st.default, rel=1e-6)
            assert prop.hard_min == pytest.approx(st.minimum) and prop.hard_max == pytest.approx(st.maximum)
        else:
            assert getattr(s, st.name) == st.default
        assert prop.is_animatable == st.animatable, st.name


def test_configure_validates_everything_before_changing_anything(addon, creature):
    api = addon.api
    obj, _, _ = creature
    s = obj.skinmodes
    before = {name: getattr(s, name) for name in api.SETTABLE}
    for bad in ({"modes": 0}, {"youngs_modulus": -1e4}, {"substeps": 0}, {"wobble_hz": 3.0, "tet_method": 7}):
        with pytest.raises(addon.core.errors.SkinmodesError) as err:
            api.configure(obj, **bad)
        assert "\n" not in str(err.value) and "must" in str(err.value)
        assert {name: getattr(s, name) for name in api.SETTABLE} == before
    # Slider maxima are accepted, including Blender's float32 0.45.
    api.configure(obj, poisson_ratio=0.45, wobble_hz=100.0)
    api.configure(obj, poisson_ratio=s.poisson_ratio)
    assert s.poisson_ratio == pytest.approx(0.45)


def test_presets_set_the_scale_free_controls_and_explicit_values_win(addon, creature):
    from core.settings import PRESETS

    obj, _, _ = creature
    addon.api.configure(obj, material_preset="jelly")
    assert obj.skinmodes.wobble_hz == pytest.approx(PRESETS["JELLY"]["wobble_hz"])
    addon.api.configure(obj, material_preset="muscle", damping_ratio=0.9)
    assert obj.skinmodes.wobble_hz == pytest.approx(PRESETS["MUSCLE"]["wobble_hz"])
    assert obj.skinmodes.damping_ratio == pytest.approx(0.9) and obj.skinmodes.material_preset == "CUSTOM"


def test_animated_wobble_is_read_per_frame_and_keeps_the_session(addon, creature):
    """Keyed wobble (3 Hz, then 8 Hz from frame 12) changes the motion after the key, not before,
    and scrubbing does not rebuild the session (the value read per frame is not a setting change)."""
    import bpy

    session_mod = addon.session
    obj, _, scene = creature
    s = obj.skinmodes
    plain = session_mod.build_session(obj, scene)
    session_mod.sample_range(plain, scene, plain.missing_frames(plain.end))
    ref = {f: plain.offsets_local(f).copy() for f in (10, 24)}
    s.wobble_hz = 3.0
    s.keyframe_insert("wobble_hz", frame=11)
    s.wobble_hz = 8.0
    s.keyframe_insert("wobble_hz", frame=12)
    keyed = session_mod.current_session(obj, scene)
    assert keyed is None  # new keys: a new simulation
    keyed = session_mod.build_session(obj, scene)
    session_mod.sample_range(keyed, scene, keyed.missing_frames(keyed.end))
    for f in (5, 17, 24):
        scene.frame_set(f)
        assert session_mod.current_session(obj, scene) is keyed
    assert np.array_equal(keyed.offsets_local(10), ref[10])
    assert not np.allclose(keyed.offsets_local(24), ref[24])
    fc = obj.animation_data.action
    assert fc is not None
    bpy.context.view_layer.update()


def test_settings_the_simulation_cannot_follow_cannot_be_keyed(addon, creature):
    obj, _, _ = creature
    for name in ("modes", "youngs_modulus", "substeps", "poisson_ratio"):
        with pytest.raises(TypeError):
            obj.skinmodes.keyframe_insert(name)
