"""Generalised winding numbers (core/winding.py)."""

from fractions import Fraction

import numpy as np
import pytest

from core.geometry.winding import (
    column_crossing_numbers,
    column_winding_numbers,
    orient_signs,
    winding_numbers,
    winding_numbers_exact,
)
from tests.core.surfaces import box, card, join, uv_sphere


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


def column_queries(n: int, origin: np.ndarray, step: float, seed: int) -> tuple[np.ndarray, ...]:
    """n random points on grid columns: col (n, 2), z (n,) and their positions Q (n, 3)."""
    rng = np.random.default_rng(seed)
    col = rng.integers(0, 70, (n, 2))
    z = rng.uniform(-1.6, 1.6, n)
    return col, z, np.column_stack([origin[0] + col[:, 0] * step, origin[1] + col[:, 1] * step, z])


def bowl() -> tuple[np.ndarray, np.ndarray]:
    V, F = uv_sphere(24)
    return V, F[V[F].mean(axis=1)[:, 2] < 0.8]


def flipped(surface: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return surface[0], surface[1][:, ::-1]


# (surface, tolerance).  Closed surfaces: the crossing count is exact, round-off
# only.  Open ones add the caps' winding number from the tree walk, whose far
# field is a dipole: accurate to about 1e-2, far below the 0.5 threshold.
SURFACES = {
    "sphere": (uv_sphere(24), 1e-12),
    "flipped and overlapping": (join(uv_sphere(16), flipped(uv_sphere(16, 1.0, (0.5, 0, 0)))), 1e-12),
    "open bowl": (bowl(), 2e-2),
    "card": (card(3, 3, (-1.0, -1.0, 0.1), (2.0, 0.0, 0.0), (0.0, 2.0, 0.0)), 2e-2),
}


@pytest.mark.parametrize("name", list(SURFACES))
def test_column_winding_numbers_equal_the_exact_sum(name):
    """Crossing counts plus the caps' correction: the generalised winding number."""
    (V, F), tol = SURFACES[name]
    origin, step = np.array([-1.7123, -1.6071, 0.0]), 0.05
    col, z, Q = column_queries(4000, origin, step, seed=1)
    w = column_winding_numbers(V, F, origin, step, col, z)
    assert np.abs(w - winding_numbers_exact(V, F, Q)).max() < tol


def test_columns_through_vertices_and_edges_are_counted_once():
    """A box whose corners, edges and faces sit exactly on the grid's columns: the crossing count stays an integer
    that is right everywhere off the surface (no crossing counted twice or missed)."""
    V, F = box((2.0, 2.0, 2.0))
    V = V - 1.0  # corners at +-1: on columns 0 and 40 of a grid from -1 with step 0.05
    origin, step = np.array([-1.0, -1.0, 0.0]), 0.05
    col, z, Q = column_queries(4000, origin, step, seed=2)
    col = np.clip(col, 0, 40)
    Q[:, :2] = origin[:2] + col * step
    inside = (np.abs(Q) < 1.0 - 1e-9).all(axis=1)
    on_surface = ~inside & (np.abs(Q) <= 1.0 + 1e-9).all(axis=1)
    n = column_crossing_numbers(V, F, origin, step, col, z)
    assert np.array_equal(n[~on_surface], inside[~on_surface].astype(int))


def test_exact_orientation_signs_on_collinear_points():
    """Collinear points in floating point: the exact sign, 0, where naive arithmetic gives noise."""
    a = np.array([[0.1, 0.1], [0.0, 0.0]])
    b = np.array([[0.3, 0.3], [3.0, 1.0]])
    p = np.array([[0.7, 0.7], [0.3, 0.1]])  # 0.1*3 == 0.30000000000000004: not exactly on the line
    s = orient_signs(a, b, p)
    assert s[0] == 0
    exact = Fraction(3.0) * Fraction(0.1) - Fraction(1.0) * Fraction(0.3)
    assert s[1] == (exact > 0) - (exact < 0)
