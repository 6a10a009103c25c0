"""Embedding render vertices (core/embedding.py)."""

import numpy as np

from core.embedding import apply, embed_points, interpolate
from core.primitives import box_tet_mesh
from core.scenes import jitter


def test_rest_pose_and_affine_motion_are_reproduced_exactly():
    X, T = box_tet_mesh((4, 3, 3), (2.0, 1.0, 1.0))
    X = jitter(X, 0.03, seed=2)
    rng = np.random.default_rng(0)
    inside = rng.uniform([0.1, 0.1, 0.1], [1.9, 0.9, 0.9], (500, 3))
    outside = rng.uniform([-0.05, -0.05, -0.05], [2.05, 1.05, 1.05], (200, 3))
    P = np.vstack([inside, outside])
    emb = embed_points(X, T, P)
    assert np.allclose(emb.bary.sum(axis=1), 1.0)
    # Exact up to round-off of a 3x3 solve per point.
    assert np.abs(apply(emb, T, X) - P).max() < 1e-12
    A = rng.standard_normal((3, 3))
    t = rng.standard_normal(3)
    assert np.abs(apply(emb, T, X @ A.T + t) - (P @ A.T + t)).max() < 1e-11
    assert not emb.outside[:500].any()


def test_interpolation_of_linear_fields_is_exact():
    X, T = box_tet_mesh((3, 3, 3))
    P = np.random.default_rng(1).uniform(0, 1, (100, 3))
    f = X @ np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])
    assert (
        np.abs(interpolate(embed_points(X, T, P), T, f) - P @ np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])).max()
        < 1e-12
    )
