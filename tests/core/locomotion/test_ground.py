"""Ground contact pieces (core/locomotion/ground.py)."""

import numpy as np
import scipy.linalg as sla

from core.locomotion.ground import (
    ConstrainedQuadratic,
    GroundPlane,
    contact_constraints,
    lowest_band,
    multipliers,
    sample_vertices,
    tangent_basis,
)
from core.locomotion.subspace import rest_coordinates
from core.model.fem import lumped_mass


def test_samples_are_spread_and_deterministic(slug):
    mesh, _, _ = slug
    cand = mesh.boundary_vertices()
    ids = sample_vertices(mesh.X, cand, 12)
    assert len(np.unique(ids)) == 12 and np.isin(ids, cand).all()
    np.testing.assert_array_equal(ids, sample_vertices(mesh.X, cand, 12))
    # farthest-point sampling starts at a corner and then takes the opposite one
    P = np.abs(mesh.X[ids[:2]] - mesh.X.mean(axis=0))
    np.testing.assert_allclose(P, np.tile([1.0, 0.25, 0.25], (2, 1)))


def test_tangents_are_orthonormal():
    n = np.array([0.3, -0.4, 0.866])
    n /= np.linalg.norm(n)
    B = np.vstack([n, tangent_basis(n)])
    np.testing.assert_allclose(B @ B.T, np.eye(3), atol=1e-14)


def test_constrained_minimiser_solves_the_kkt_system():
    rng = np.random.default_rng(0)
    q = 8
    A = rng.standard_normal((q, q))
    Q = A @ A.T + q * np.eye(q)
    C = rng.standard_normal((5, 3 * q))
    C = np.vstack([C, C[:2] + C[2]])  # dependent rows, consistent targets below
    z0 = rng.standard_normal(3 * q)
    b = C @ z0
    F = rng.standard_normal((q, 3))
    Z = ConstrainedQuadratic(Q, C, b).solve(F)
    z = Z.T.ravel()
    np.testing.assert_allclose(C @ z, b, atol=1e-10)
    Qbig = sla.block_diag(Q, Q, Q)
    lam = multipliers(C, Qbig @ z - F.T.ravel())
    np.testing.assert_allclose(C.T @ lam, Qbig @ z - F.T.ravel(), atol=1e-9)  # stationary on the set


def test_contact_rows_hold_the_normal_and_damp_the_tangent(slug):
    mesh, mat, model = slug
    plane = GroundPlane(normal=(0.0, 0.0, 1.0), height=-0.25, friction=0.5)
    Ys = model.Y_samples
    active = np.zeros(len(Ys), bool)
    active[:3] = True
    Z_prev = model.rest.copy()
    masses = lumped_mass(mesh, mat.density)
    Z_now = rest_coordinates(model.subspace.basis, masses, mesh.X + np.array([0.01, 0.0, 0.0]))  # a small slide along x
    C, b = contact_constraints(plane, Ys, active, Z_now, Z_prev)
    Z = ConstrainedQuadratic(model.A_M, C, b).solve(model.A_M @ Z_now)
    x = Ys[active] @ Z
    np.testing.assert_allclose(x[:, 2], -0.25, atol=1e-12)
    slide = (Ys[active] @ (Z_now - Z_prev))[:, 0]
    np.testing.assert_allclose(x[:, 0], (Ys[active] @ Z_now)[:, 0] + 0.5 * slide, atol=1e-12)


def test_lowest_band_keeps_the_underside(slug):
    mesh, _, _ = slug
    cand = mesh.boundary_vertices()
    low = lowest_band(mesh.X, cand, np.array([0.0, 0.0, 1.0]), 0.3)
    assert np.isin(low, cand).all() and len(low) < len(cand)
    assert mesh.X[low, 2].max() <= -0.25 + 0.3 * 0.5 + 1e-12
    assert np.array_equal(lowest_band(mesh.X, cand, np.array([0.0, 0.0, 1.0]), 1.0), cand)
