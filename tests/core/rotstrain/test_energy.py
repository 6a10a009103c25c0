"""The RS energy is quadratic, and equals co-rotational elasticity on the RS deformation gradient."""

import numpy as np

from core.rotstrain.coordinates import rs_fields
from core.rotstrain.energy import reduced_forces, rs_energy_density, rs_stiffness
from core.rotstrain.transfer import rs_gradient
from core.validation.reference import corotational_energy_density

from .bars import bar


def test_the_quadratic_form_is_the_summed_energy_density():
    b = bar(3)
    K = rs_stiffness(b.mesh, b.material, b.S)
    q = np.array([2.0, -1.0, 0.5])
    _, eps = rs_fields(b.W, b.S, q)
    total = b.mesh.volumes @ rs_energy_density(eps, b.material.mu, b.material.lam)
    assert np.isclose(0.5 * q @ K @ q, total, rtol=1e-12)
    assert np.all(np.linalg.eigvalsh(K) > 0)


def test_rs_energy_is_corotational_energy_of_the_rs_gradient_at_large_rotations():
    b = bar(3)
    q = np.array([1.5, -1.0, 0.5]) / np.abs(b.W).max()  # tet rotations beyond a radian
    omega, eps = rs_fields(b.W, b.S, q)
    F = rs_gradient(omega, eps) + np.eye(3)
    psi = corotational_energy_density(F, b.material.mu, b.material.lam)
    assert np.abs(psi - rs_energy_density(eps, b.material.mu, b.material.lam)).max() < 1e-9 * psi.max()


def test_reduced_gravity_is_the_projection_of_the_vertex_forces():
    b = bar(3)
    g = np.array([0.0, -9.81, 0.0])
    f = reduced_forces(b.fit.B, b.masses, g)
    assert np.allclose(f, b.fit.B.reshape(len(b.fit.B), -1) @ np.outer(b.masses, g).ravel())
