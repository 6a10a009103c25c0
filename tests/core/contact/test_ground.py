"""Ground contact pieces (core/contact/ground.py), shared by locomotion and the jiggle."""

import numpy as np
from scipy.optimize import minimize

from core.contact.ground import (
    GroundContact,
    GroundPlane,
    ground_frame,
    lowest_band,
    sample_vertices,
    tangent_basis,
)


def test_samples_are_spread_and_deterministic(slug):
    mesh, _, _ = slug
    cand = mesh.boundary_vertices()
    ids = sample_vertices(mesh.X, cand, 12)
    assert len(np.unique(ids)) == 12 and np.isin(ids, cand).all()
    np.testing.assert_array_equal(ids, sample_vertices(mesh.X, cand, 12))
    # farthest-point sampling starts at a corner and then takes the opposite one
    P = np.abs(mesh.X[ids[:2]] - mesh.X.mean(axis=0))
    np.testing.assert_allclose(P, np.tile([1.0, 0.25, 0.25], (2, 1)))
    # asking for more than there are takes every candidate once
    assert np.array_equal(np.sort(sample_vertices(mesh.X, cand, 10**6)), cand)


def test_tangents_and_frame_are_orthonormal_and_proper():
    n = np.array([0.3, -0.4, 0.866])
    n /= np.linalg.norm(n)
    B = np.vstack([n, tangent_basis(n)])
    np.testing.assert_allclose(B @ B.T, np.eye(3), atol=1e-14)
    R = ground_frame(n)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(R[:, 2], n, atol=1e-15)
    assert np.linalg.det(R) > 0


def _problem(seed=0, q=6, k=15):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((q, q))
    Q = A @ A.T + q * np.eye(q)
    G = rng.uniform(0.0, 1.0, (k, q)) / q
    n = rng.standard_normal(3)
    plane = GroundPlane(normal=tuple(n / np.linalg.norm(n)), height=0.3, friction=0.7)
    return rng, Q, G, plane


def _total(contact, step, Z, F):
    return 0.5 * np.vdot(Z, contact.Q @ Z) - np.vdot(Z, F) + step.energy(Z)


def test_the_contact_step_is_the_exact_minimiser():
    """With drag and penalty active, solve(F) minimises quadratic + contact energy (a generic optimiser agrees)."""
    rng, Q, G, plane = _problem()
    q = len(Q)
    contact = GroundContact(plane, G, Q, dt=0.02, stiffness=50.0, stick_speed=1e-3)
    Z_now = rng.standard_normal((q, 3))
    c = rng.uniform(0.0, 5.0, len(G))
    step = contact.step(Z_now, c)
    F = Q @ Z_now - 3.0 * np.outer(np.ones(q), np.asarray(plane.normal))  # pressed into the ground
    Z = step.solve(F)
    pen = plane.height - contact.heights(Z)
    assert (pen > 0).any() and (pen < 0).any()  # some samples pressed, some free: the set matters
    res = minimize(lambda z: _total(contact, step, z.reshape(q, 3), F), Z_now.ravel(), method="BFGS", tol=1e-12)
    assert _total(contact, step, Z, F) <= res.fun + 1e-9
    np.testing.assert_allclose(Z.ravel(), res.x, atol=1e-5)


def test_forces_push_and_friction_grips_in_proportion():
    _, Q, G, plane = _problem(1)
    contact = GroundContact(plane, G, Q, dt=0.02, stiffness=50.0, stick_speed=1e-3)
    Z = np.zeros((len(Q), 3))  # every sample at height 0, 0.3 below the plane
    f = contact.normal_forces(Z)
    np.testing.assert_allclose(f, 50.0 * 0.3)
    assert np.all(contact.drag(Z, Z, None) == 0.0)  # no force known yet: no friction
    np.testing.assert_allclose(contact.drag(Z, Z, f), 0.7 * f / 1e-3)  # still: grips at the stick speed
    slide = np.zeros_like(Z)
    slide[0] = 0.02 * 0.5 * ground_frame(np.asarray(plane.normal))[:, 0] / G[:, 0].mean()
    v = np.linalg.norm(G @ (slide @ ground_frame(np.asarray(plane.normal))[:, :2]), axis=1) / 0.02
    np.testing.assert_allclose(contact.drag(slide, Z, f), 0.7 * f / v)  # sliding: Coulomb, mu f_n / |v|


def test_lowest_band_keeps_the_underside(slug):
    mesh, _, _ = slug
    cand = mesh.boundary_vertices()
    low = lowest_band(mesh.X, cand, np.array([0.0, 0.0, 1.0]), 0.3)
    assert np.isin(low, cand).all() and len(low) < len(cand)
    assert mesh.X[low, 2].max() <= -0.25 + 0.3 * 0.5 + 1e-12
    assert np.array_equal(lowest_band(mesh.X, cand, np.array([0.0, 0.0, 1.0]), 1.0), cand)
