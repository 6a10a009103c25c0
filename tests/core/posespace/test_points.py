"""Point sets in a blended subspace (core/posespace/points.py)."""

import numpy as np

from core.geometry.embedding import embed_points, embedded_positions, interpolate
from core.posespace.points import PosePoints


def test_points_at_the_tet_vertices_give_the_solvers_displacement(swing):
    """Embedded at the tet vertices themselves, the points reproduce Y(w) z of the blended model
    (1e-12 relative: the same sums in another order)."""
    m = swing.model
    X = swing.rest.X
    pts = PosePoints(m, m.alignment.bases, X)
    z = np.random.default_rng(0).normal(size=(4 * swing.rest.m, 3))
    for t in (0.0, 0.1, 0.25, 0.6):
        w = m.pose_weights(swing.pose(t))
        blended, _ = m.blend(w)
        direct = blended.basis() @ z
        np.testing.assert_allclose(pts.displacement(w, z), direct, atol=1e-12 * np.abs(direct).max())


def test_embedded_points_at_rest_match_the_rest_models_reconstruction(swing):
    """At the rest pose (w = e_0, the rest basis unturned) render-like embedded points give what the
    rest model's Reconstructor gives, in float32 (1e-6 relative: float32 round-off of the product)."""
    from core.dynamics.reconstruct import Reconstructor

    m = swing.model
    mesh = swing.scene.mesh
    rng = np.random.default_rng(1)
    P = mesh.X[mesh.T[:50]].mean(axis=1) + 0.02 * rng.normal(size=(50, 3))
    emb = embed_points(mesh.X, mesh.T, P)
    where = embedded_positions(emb, mesh.X, mesh.T, P)
    W = np.stack([interpolate(emb, mesh.T, Wi) for Wi in m.alignment.bases])
    pts = PosePoints(m, W, where, dtype=np.float32)
    rec = Reconstructor(swing.rest, W[0], where, dtype=np.float32)
    z = rng.normal(size=(4 * swing.rest.m, 3))
    u, expected = pts.displacement(np.eye(m.k)[0], z), rec.displacement(z)
    assert u.dtype == np.float32 and u.shape == (50, 3)
    np.testing.assert_allclose(u, expected, atol=1e-6 * np.abs(expected).max())
