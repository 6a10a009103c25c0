"""Embedding render vertices (core/embedding.py)."""

import numpy as np

from core.geometry.embedding import EMBED_TOL, apply, barycentric, embed_points, interpolate
from core.geometry.lattice import lattice_tet_mesh
from core.geometry.primitives import box_tet_mesh
from core.validation.scenes import jitter
from tests.core.surfaces import uv_sphere


def test_rest_pose_and_affine_motion_are_reproduced_exactly_inside():
    X, T = box_tet_mesh((4, 3, 3), (2.0, 1.0, 1.0))
    X = jitter(X, 0.03, seed=2)
    rng = np.random.default_rng(0)
    P = rng.uniform([0.1, 0.1, 0.1], [1.9, 0.9, 0.9], (500, 3))
    emb = embed_points(X, T, P)
    assert emb.projected == 0 and (emb.distance == 0).all()
    assert np.allclose(emb.bary.sum(axis=1), 1.0)
    # Exact up to round-off of a 3x3 solve per point.
    assert np.abs(apply(emb, T, X) - P).max() < 1e-12
    A = rng.standard_normal((3, 3))
    t = rng.standard_normal(3)
    assert np.abs(apply(emb, T, X @ A.T + t) - (P @ A.T + t)).max() < 1e-11


def test_points_outside_are_projected_never_extrapolated():
    """Outside the box mesh: weights stay in [0, 1], and the point moves to the box's nearest point."""
    X, T = box_tet_mesh((4, 3, 3), (2.0, 1.0, 1.0))
    rng = np.random.default_rng(1)
    P = rng.uniform([-0.5, -0.5, -0.5], [2.5, 1.5, 1.5], (400, 3))
    P = np.vstack([P, [[12.0, 0.5, 0.5]]])  # and one far off, like a fin 8 tets away
    emb = embed_points(X, T, P)
    outside = ((P < [0, 0, 0]) | (P > [2.0, 1.0, 1.0])).any(axis=1)
    assert np.array_equal(emb.outside, outside) and emb.projected == outside.sum()
    assert emb.bary.min() >= -EMBED_TOL and emb.bary.max() <= 1 + EMBED_TOL
    nearest = np.clip(P, [0, 0, 0], [2.0, 1.0, 1.0])  # the box's nearest point, exactly
    assert np.abs(apply(emb, T, X) - nearest).max() < 1e-12
    assert np.allclose(emb.distance, np.linalg.norm(P - nearest, axis=1), atol=1e-12)


def test_a_point_in_a_long_tet_is_found_even_when_other_centroids_are_nearer():
    """Centroids guide the search; a tet much longer than its neighbours is found by the wider second look."""
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [40, 0, 0.5], [40, 1, 0.5]], float)
    T = np.array([[0, 1, 2, 3], [1, 4, 5, 2]])
    X2, T2 = box_tet_mesh((2, 2, 2), (1.0, 1.0, 1.0), (33.0, 3.0, 3.0))  # 48 small tets beside the point
    X, T = np.vstack([X, X2]), np.vstack([T, T2 + 6])
    P = np.array([[0.1, 0.6, 0.1, 0.2]]) @ X[T[1]]  # inside the long tet, at x = 28
    emb = embed_points(X, T, P, candidates=4)
    assert emb.projected == 0 and emb.tet[0] == 1
    assert np.abs(apply(emb, T, X) - P).max() < 1e-12


def test_interpolation_of_linear_fields_is_exact():
    X, T = box_tet_mesh((3, 3, 3))
    P = np.random.default_rng(1).uniform(0, 1, (100, 3))
    f = X @ np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])
    assert (
        np.abs(interpolate(embed_points(X, T, P), T, f) - P @ np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])).max()
        < 1e-12
    )


def test_barycentric_of_a_flat_tet_is_minus_infinity_not_an_error():
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    lam = barycentric(X, np.array([[0, 1, 2, 3]]), np.array([0]), np.array([[0.2, 0.2, 0.0]]))
    assert np.isneginf(lam).all()


def test_embedding_in_chunks_is_the_one_shot_embedding(monkeypatch):
    """Issue 41: the candidates' coordinates are evaluated CHUNK_PAIRS point-tet pairs at a time; chunks of 50
    pairs (two points of 24 candidates) give exactly (bit for bit) the embedding of one evaluation."""
    import core.geometry.embedding as embedding

    X, T = lattice_tet_mesh(*uv_sphere(), 0.25)
    rng = np.random.default_rng(3)
    P = rng.normal(scale=0.6, size=(300, 3))  # inside and outside the sphere
    whole = embedding.embed_points(X, T, P)
    monkeypatch.setattr(embedding, "CHUNK_PAIRS", 50)
    chunked = embedding.embed_points(X, T, P)
    for name in ("tet", "bary", "outside", "distance"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(whole, name), err_msg=name)
