"""Generalised winding numbers (core/winding.py)."""

import numpy as np

from core.winding import winding_numbers, winding_numbers_exact
from tests.core.surfaces import join, uv_sphere


def test_closed_sphere_is_one_inside_and_zero_outside():
    V, F = uv_sphere(24)
    rng = np.random.default_rng(0)
    Q = rng.uniform(-1.4, 1.4, (400, 3))
    r = np.linalg.norm(Q, axis=1)
    w = winding_numbers_exact(V, F, Q)
    # Exact solid angles: round-off away from the surface (1e-9); the polygonal
    # sphere differs from the round one near r = 1, so that band is skipped.
    assert np.abs(w[r < 0.9] - 1).max() < 1e-9 and np.abs(w[r > 1.05]).max() < 1e-9


def test_flipped_surface_gives_minus_one_and_overlaps_add_up():
    V, F = uv_sphere(16)
    assert abs(winding_numbers_exact(V, F[:, ::-1], np.zeros((1, 3)))[0] + 1) < 1e-9
    V2, F2 = join(uv_sphere(16), uv_sphere(16, 1.0, (0.5, 0, 0)))
    assert abs(winding_numbers_exact(V2, F2, np.array([[0.25, 0, 0]]))[0] - 2) < 1e-9


def test_open_surface_is_fractional_at_the_hole():
    V, F = uv_sphere(24)
    cut = F[(V[F].mean(axis=1)[:, 2] < 0.8)]  # remove the cap around +z
    w = winding_numbers_exact(V, cut, np.array([[0, 0, 0], [0, 0, 0.98], [0, 0, -0.5]]))
    assert 0.85 < w[0] < 1.0 and 0.2 < w[1] < 0.8 and w[2] > 0.9


def test_hierarchical_matches_exact():
    V, F = join(uv_sphere(64), uv_sphere(32, 0.3, (1.2, 0, 0)))
    Q = np.random.default_rng(1).uniform(-1.6, 1.6, (3000, 3))
    w = winding_numbers(V, F, Q)
    we = winding_numbers_exact(V, F, Q)
    # The dipole far field is accurate to about (group radius / distance)^2;
    # 2e-2 is far below the 0.5 threshold the consumers use.
    assert np.abs(w - we).max() < 2e-2
