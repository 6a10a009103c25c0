"""The flesh figures of issue 37 (core/validation/flesh_response.py) on synthetic motions whose answers are
known in closed form: an oscillator's sag and ringing, a rigid swing (no extent change) and a stretch."""

import numpy as np

from core.validation.flesh_response import (
    best_rotations,
    decay_frequency,
    extent_change,
    response_ratio,
)


def test_a_steady_acceleration_and_its_sag_give_a_ratio_of_one():
    fps, f, a = 24.0, 3.0, 2.0
    t = np.arange(48) / fps
    rig = np.zeros((48, 5, 3))
    rig[:, :, 0] = 0.5 * a * t[:, None] ** 2  # steady acceleration along x
    sag = a / (2 * np.pi * f) ** 2
    offsets = np.zeros_like(rig)
    offsets[:, :, 0] = -sag
    ratio, peak, expect = response_ratio(offsets, rig, fps, f)
    assert np.isclose(expect, sag, rtol=1e-9) and np.isclose(ratio, 1.0, rtol=1e-9) and np.isclose(peak, sag)


def test_a_damped_ringing_is_timed_at_its_frequency():
    fps, f, zeta = 48.0, 3.0, 0.1
    t = np.arange(144) / fps  # three seconds: settled at the end, as a clip's hold is
    w = 2 * np.pi * f
    x = np.exp(-zeta * w * t) * np.cos(w * np.sqrt(1 - zeta**2) * t)
    offsets = np.zeros((144, 3, 3))
    offsets[:, :, 1] = x[:, None]
    assert abs(decay_frequency(offsets, fps) - f * np.sqrt(1 - zeta**2)) < 0.02 * f
    assert np.isnan(decay_frequency(np.zeros_like(offsets), fps))


def test_a_rigid_turn_keeps_the_extent_and_a_stretch_does_not():
    # A box of points, long along x (the bone), symmetric, so a stretch along an axis is no turn.
    g = np.stack(np.meshgrid(np.linspace(-3, 3, 7), np.linspace(-1, 1, 3), np.linspace(-0.5, 0.5, 3)), -1)
    X = g.reshape(-1, 3)
    rig = np.repeat(X[None], 4, axis=0)
    axes = np.tile([1.0, 0.0, 0.0], (4, 1))
    c, s = np.cos(0.7), np.sin(0.7)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    turned = rig @ R.T + np.array([1.0, 2.0, 3.0])
    assert extent_change(turned, rig, axes) < 1e-9
    stretched = rig * np.array([1.2, 1.0, 1.0])
    assert np.isclose(extent_change(stretched, rig, axes), 0.2, rtol=1e-9)
    # A bulge across the bone is no stretch along it.
    assert extent_change(rig * np.array([1.0, 1.5, 1.5]), rig, axes) < 1e-9
    Q = turned - turned.mean(axis=1, keepdims=True)
    P = rig - rig.mean(axis=1, keepdims=True)
    assert np.allclose(best_rotations(P, Q)[0], R)
