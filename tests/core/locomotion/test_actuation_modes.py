"""Actuation modes (core/locomotion/actuation_modes.py): lowest non-rigid vibration modes, scaled to the radius."""

import numpy as np

from core.locomotion.actuation_modes import rigid_displacements, vibration_modes
from core.model.constraint import normalization
from core.model.fem import corotational_rest_hessian, lumped_mass


def test_rigid_displacements_are_m_orthonormal_and_in_the_null_space(slug):
    mesh, mat, _ = slug
    masses = lumped_mass(mesh, mat.density)
    R = rigid_displacements(mesh.X, masses)
    m3 = np.repeat(masses, 3)
    np.testing.assert_allclose(R.T @ (m3[:, None] * R), np.eye(6), atol=1e-12)
    H = corotational_rest_hessian(mesh, mat.mu, mat.lam)
    assert np.abs(H @ R).max() < 1e-9 * abs(H).max()


def test_modes_are_non_rigid_vibration_modes_scaled_to_the_radius(slug):
    mesh, mat, model = slug
    modes = model.modes
    masses = lumped_mass(mesh, mat.density)
    m3 = np.repeat(masses, 3)
    D = modes.displacements.reshape(3 * mesh.n, -1)
    # no rigid component: an actuation along a rigid motion would not be a shape
    R = rigid_displacements(mesh.X, masses)
    assert np.abs(R.T @ (m3[:, None] * D)).max() < 1e-9 * np.abs(D).max() * masses.sum()
    # H d = lambda M d, mode by mode (the rescaling keeps the eigenvalue)
    H = corotational_rest_hessian(mesh, mat.mu, mat.lam)
    res = H @ D - m3[:, None] * D * modes.eigenvalues
    assert np.abs(res).max() < 1e-6 * np.abs(H @ D).max()
    assert np.all(np.diff(modes.eigenvalues) >= 0) and modes.eigenvalues[0] > 0
    _, radius = normalization(mesh.X)
    np.testing.assert_allclose(np.linalg.norm(modes.displacements, axis=1).max(axis=0), radius)


def test_modes_are_deterministic(slug):
    mesh, mat, model = slug
    again = vibration_modes(mesh, mat, lumped_mass(mesh, mat.density), model.m)
    np.testing.assert_array_equal(again.displacements, model.modes.displacements)
