"""The seed's mixed energy Psi(sym(R^T F)) (core/physskin/mixed.py): derivatives, rest, the solve, inflation."""

import numpy as np
import pytest

from core.geometry.tetmesh import signed_volumes
from core.model.materials import Material
from core.physskin.assignment import pin_vertices
from core.physskin.mixed import (
    mixed_energy,
    mixed_energy_density,
    mixed_gradient,
    mixed_hessian,
    mixed_positions,
    mixed_stiffness,
    mixed_stress,
)
from core.physskin.rotations import blended_rotations
from core.physskin.solve import PhysicsSkin
from core.validation.scenes import chain_weights, random_rotation
from tests.core.physskin.test_solve import HEADS, TAILS, cylinder, rx


def _random(t, seed=0):
    rng = np.random.default_rng(seed)
    R = np.stack([random_rotation(rng) for _ in range(t)])
    F = R @ (np.eye(3) + 0.3 * rng.standard_normal((t, 3, 3)))
    return F, R, rng.uniform(0.5, 2.0, t), rng.uniform(0.0, 5.0, t)


def test_stress_is_the_energy_density_derivative():
    """Central differences of Psi in each entry of F (step 1e-6) match the stress to 1e-7 relative."""
    F, R, mu, lam = _random(5)
    P = mixed_stress(F, R, mu, lam)
    h = 1e-6
    for i in range(3):
        for j in range(3):
            dF = np.zeros((5, 3, 3))
            dF[:, i, j] = h
            fd = (mixed_energy_density(F + dF, R, mu, lam) - mixed_energy_density(F - dF, R, mu, lam)) / (2 * h)
            np.testing.assert_allclose(fd, P[:, i, j], rtol=1e-7, atol=1e-7 * np.abs(P).max())


def test_stiffness_is_the_stress_derivative():
    """Central differences of the stress (step 1e-6) match the 9 x 9 stiffness (row-major vec F) to 1e-7."""
    F, R, mu, lam = _random(4, seed=1)
    H = mixed_stiffness(R, mu, lam)
    h = 1e-6
    for c in range(9):
        dF = np.zeros((4, 9))
        dF[:, c] = h
        dF = dF.reshape(4, 3, 3)
        fd = (mixed_stress(F + dF, R, mu, lam) - mixed_stress(F - dF, R, mu, lam)).reshape(4, 9) / (2 * h)
        np.testing.assert_allclose(fd, H[:, :, c], atol=1e-7 * np.abs(H).max())
    assert np.allclose(H, np.swapaxes(H, 1, 2))


@pytest.fixture(scope="module")
def skin():
    mesh = cylinder(3)
    mat = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
    pins, bones = pin_vertices(mesh.X, HEADS, TAILS, 0.3)  # off the axis too: no turn about it is free
    return PhysicsSkin.build(mesh, mat.mu, mat.lam, pins, bones)


def test_mesh_gradient_and_hessian_match_finite_differences(skin):
    """dE/dx against central differences of E, and the Hessian against differences of dE/dx (random x)."""
    rng = np.random.default_rng(2)
    R = np.stack([random_rotation(rng) for _ in range(skin.mesh.t)])
    x = skin.mesh.X + 0.05 * rng.standard_normal(skin.mesh.X.shape)
    g = mixed_gradient(skin, R, x)
    A = mixed_hessian(skin, R)
    d = rng.standard_normal(x.shape)
    h = 1e-6
    fd = (mixed_energy(skin, R, x + h * d) - mixed_energy(skin, R, x - h * d)) / (2 * h)
    assert fd == pytest.approx(float(np.vdot(g, d)), rel=1e-6)
    fd_g = (mixed_gradient(skin, R, x + h * d) - mixed_gradient(skin, R, x - h * d)) / (2 * h)
    np.testing.assert_allclose(fd_g.ravel(), A @ d.ravel(), atol=1e-6 * np.abs(A @ d.ravel()).max())


def test_rest_is_a_fixed_point(skin):
    """Every R = I and the pins at rest: the gradient is round-off (K X = I to 1e-15: 1e-12 of mu times the
    volume, in newtons) and the solve returns X (1e-12 m)."""
    R = np.tile(np.eye(3), (skin.mesh.t, 1, 1))
    scale = skin.mu.max() * skin.mesh.volumes.sum()
    assert np.abs(mixed_gradient(skin, R, skin.mesh.X)).max() < 1e-12 * scale
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    np.testing.assert_allclose(mixed_positions(skin, A, R), skin.mesh.X, atol=1e-12)


def test_the_solve_minimises_the_energy_and_a_rigid_motion_is_exact(skin):
    """At the solve the free gradient vanishes (1e-8 of the rest gradient's scale); one rigid motion on both
    bones with R = its rotation gives that motion (1e-9 of the 4 m bar)."""
    mesh = skin.mesh
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    A[1, :, :3] = rx(2.0)
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    R = blended_rotations(A, W[mesh.T].mean(axis=1))
    x = mixed_positions(skin, A, R)
    g = mixed_gradient(skin, R, x)
    scale = np.abs(mixed_gradient(skin, R, mesh.X)).max()
    assert np.abs(g[skin.free_vertices]).max() < 1e-8 * scale
    Q = random_rotation(np.random.default_rng(5))
    B = np.tile(np.hstack([Q, [[1.0], [-2.0], [0.5]]]), (2, 1, 1))
    y = mixed_positions(skin, B, np.tile(Q, (mesh.t, 1, 1)))
    np.testing.assert_allclose(y, mesh.X @ Q.T + B[0, :, 3], atol=1e-9 * 4.0)


def test_a_tet_turned_away_from_its_rotation_grows_as_one_over_cos_squared():
    """One tet whose F is a turn by theta about z from R = I, then free to stretch across the axis: the
    energy's minimum over that stretch s is at s = 1 / cos(theta), so the volume ratio is 1 / cos^2."""
    theta = np.radians(30.0)
    c, s_ = np.cos(theta), np.sin(theta)
    Q = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
    one = np.ones(1)
    stretches = np.linspace(0.9, 1.4, 50001)
    F = Q[None] * np.array([stretches[:, None], stretches[:, None], np.ones((len(stretches), 1))]).transpose(1, 0, 2)
    psi = mixed_energy_density(F, np.tile(np.eye(3), (len(F), 1, 1)), one.repeat(len(F)), 0.0 * one.repeat(len(F)))
    best = stretches[np.argmin(psi)]
    assert best == pytest.approx(1.0 / c, abs=1e-4)
    assert np.linalg.det(F[np.argmin(psi)]) == pytest.approx(1.0 / c**2, rel=1e-3)


def test_signed_volumes_are_positive_at_rest(skin):
    assert (signed_volumes(skin.mesh.X, skin.mesh.T) > 0).all()


def test_the_shipped_energy_is_the_mixed_energy_plus_the_skew_part(skin):
    """mu ||F - R||^2 + lam/2 (tr R^T F - 3)^2 = Psi(sym(R^T F)) + mu ||skew(R^T F)||^2 per tet (1e-12 relative):
    the two energies differ only by the turn of a tet away from its R, which the seed's pseudo-inverse
    condensation drops."""
    F, R, mu, lam = _random(50, seed=4)
    M = np.matmul(np.swapaxes(R, 1, 2), F)
    skew = 0.5 * (M - np.swapaxes(M, 1, 2))
    shipped = mu * ((F - R) ** 2).sum(axis=(1, 2)) + 0.5 * lam * (np.einsum("tii->t", M) - 3.0) ** 2
    mixed = mixed_energy_density(F, R, mu, lam) + mu * (skew**2).sum(axis=(1, 2))
    np.testing.assert_allclose(mixed, shipped, rtol=1e-12)
