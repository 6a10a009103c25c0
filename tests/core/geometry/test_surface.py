"""Surface cleanup and checks (core/surface.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.geometry.surface import (
    boundary_chain,
    clean_surface,
    closest_points_on_triangles,
    closest_surface_points,
    closing_caps,
    enclosed_volume,
)
from tests.core.surfaces import box, card, join, uv_sphere


def test_duplicates_and_zero_area_faces_are_removed():
    V, F = uv_sphere(16)
    V2 = np.vstack([V, V[:10]])  # ten duplicated vertices...
    F2 = F.copy()
    F2[:5] = F2[:5] - 0 + 0
    F2 = np.vstack([F2, [[len(V), len(V) + 1, len(V) + 2]]])  # ...used by one face
    F2 = np.vstack([F2, [[0, 0, 1], [1, 2, 1]]])  # and degenerate faces
    s = clean_surface(V2, F2)
    assert len(s.V) == len(V)
    assert len(s.F) == len(F) + 1
    assert s.parts == 1
    assert np.array_equal(s.vertex_map[len(V) :], s.vertex_map[:10])


def test_parts_are_labelled():
    s = clean_surface(*join(uv_sphere(12), uv_sphere(12, 0.2, (3, 0, 0)), (box()[0] + [5.0, 0.0, 0.0], box()[1])))
    assert s.parts == 3


@pytest.mark.parametrize(
    "V,F,match",
    [
        (np.zeros((0, 3)), np.zeros((0, 3), int), "empty"),
        (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float), np.array([[0, 1, 2], [1, 3, 2]]), "flat"),
        (np.array([[0, 0, 0], [1, 0, np.nan], [0, 1, 0]]), np.array([[0, 1, 2]]), "NaN"),
    ],
)
def test_unusable_surfaces_get_one_line_errors(V, F, match):
    with pytest.raises(MeshError, match=match) as err:
        clean_surface(V, F)
    assert "\n" not in str(err.value)


def test_closest_points_are_no_farther_than_any_sampled_point():
    rng = np.random.default_rng(0)
    A, B, C, P = (rng.standard_normal((300, 3)) for _ in range(4))
    bary = closest_points_on_triangles(P, A, B, C)
    assert np.allclose(bary.sum(axis=1), 1) and (bary >= -1e-12).all()
    pts = bary[:, :1] * A + bary[:, 1:2] * B + bary[:, 2:] * C
    s = np.linspace(0, 1, 60)
    u, v = np.meshgrid(s, s)
    keep = u + v <= 1
    u, v = u[keep], v[keep]
    for i in range(0, 300, 7):
        samples = A[i] + u[:, None] * (B[i] - A[i]) + v[:, None] * (C[i] - A[i])
        # The exact closest point beats every sample (round-off only).
        assert np.linalg.norm(pts[i] - P[i]) <= np.linalg.norm(samples - P[i], axis=1).min() + 1e-12


def test_surface_projection_and_enclosed_volume():
    V, F = box((2.0, 1.0, 1.0))
    assert enclosed_volume(V, F) == pytest.approx(2.0)
    pts, _, _ = closest_surface_points(V, F, np.array([[1.0, 0.5, 1.3], [-0.5, 0.5, 0.5]]))
    assert np.allclose(pts, [[1.0, 0.5, 1.0], [0.0, 0.5, 0.5]])


def test_a_closed_surface_has_no_boundary_and_a_holed_one_is_closed_by_its_caps():
    V, F = uv_sphere(16)
    assert len(boundary_chain(F)) == 0
    holed = F[V[F].mean(axis=1)[:, 2] < 0.7]
    rim = boundary_chain(holed)
    assert len(rim) == 16  # one loop around the cut (the sphere's 16 segments)
    Vc, caps = closing_caps(V, holed)
    assert len(boundary_chain(np.vstack([holed, caps]))) == 0
    assert len(Vc) == len(V) + 1  # one fan centre for the one loop
    # Capped, the bowl encloses the sphere below the cut (the cap is nearly flat): between the two.
    full = enclosed_volume(V, F)
    assert 0.85 * full < enclosed_volume(Vc, np.vstack([holed, caps])) < full


def test_a_card_capped_by_its_own_rim_encloses_nothing_and_flipped_seams_are_boundary():
    V, F = card(4, 4)
    Vc, caps = closing_caps(V, F)
    assert abs(enclosed_volume(Vc, np.vstack([F, caps]))) < 1e-12
    Vs, Fs = uv_sphere(12)
    Fs = Fs.copy()
    Fs[:3] = Fs[:3, ::-1]  # three flipped faces: their edges count twice the same way
    assert len(boundary_chain(Fs)) > 0
    Vc, caps = closing_caps(Vs, Fs)
    assert len(boundary_chain(np.vstack([Fs, caps]))) == 0
