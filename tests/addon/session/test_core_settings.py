"""The object's settings as core's settings, and animated controls read per frame."""

import pytest


def test_the_solver_takes_the_scene_rate_and_the_settings(addon, creature):
    core_settings = addon.session.core_settings
    obj, _, scene = creature
    scene.render.fps, scene.render.fps_base = 30, 1.001
    s = obj.skinmodes
    solver = core_settings.solver_settings(s, scene)
    assert solver.fps == pytest.approx(30 / 1.001) and solver.wobble_hz == pytest.approx(s.wobble_hz)
    assert core_settings.subspace_settings(s).modes == s.modes
    assert core_settings.controls_of(obj) is None  # nothing animated: the settings' values hold


def test_animated_controls_are_read_per_frame_and_kept_in_range(addon, creature):
    core_settings = addon.session.core_settings
    obj, _, scene = creature
    s = obj.skinmodes
    s.wobble_hz = 2.0
    s.keyframe_insert("wobble_hz", frame=1)
    s.wobble_hz = 4.0
    s.keyframe_insert("wobble_hz", frame=11)
    assert set(core_settings.control_curves(obj)) == {"wobble_hz"}
    at = core_settings.controls_of(obj)
    assert at(1)[0] == pytest.approx(2.0) and at(11)[0] == pytest.approx(4.0)
    assert at(1)[1] == pytest.approx(s.damping_ratio)
    # Keyed values are read per frame, so the value shown now never makes the session look stale.
    assert core_settings.solver_settings(s, scene).wobble_hz == 0.0
