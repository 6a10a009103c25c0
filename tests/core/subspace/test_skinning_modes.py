"""Skinning eigenmodes (core/subspace/skinning_modes.py)."""

import numpy as np
import pytest

from core.model.constraint import complementarity_matrix, constraint_basis, weight_space_constraint
from core.model.fem import corotational_weight_space_hessian, lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.model.rig import homogeneous
from core.subspace.skinning_modes import (
    MISSED_REACH,
    augment_weights,
    missed_chains,
    modal_reach,
    skinning_eigenmodes,
)
from core.validation.scenes import bar_scene, random_rotation


def dense_lbs_basis(X, W):
    """B (3n x 12m) of eq. 7, built entry by entry: u_a = sum_q W[a,q] T_q [X_a; 1]."""
    n, m = W.shape
    Xh = homogeneous(X)
    B = np.zeros((3 * n, 12 * m))
    for q in range(m):
        for i in range(3):
            for k in range(4):
                B[i::3, 12 * q + 4 * i + k] = W[:, q] * Xh[:, k]
    return B


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=3, bones=3)
    mat = Material.uniform(s.mesh.t, 2e4, 0.3, 1000.0)
    masses = lumped_mass(s.mesh, mat.density)
    d = default_leak_field(s.mesh)
    modes = skinning_eigenmodes(s.mesh, mat, masses, s.rig, d, 10)
    return s, mat, masses, d, modes


def test_weights_are_mass_orthonormal(setup):
    _, _, masses, _, modes = setup
    W = modes.weights
    assert np.abs(W.T @ (masses[:, None] * W) - np.eye(W.shape[1])).max() < 1e-8


def test_subspace_is_complementary_to_the_rig(setup):
    """||Jc^T B(W)|| <= 1e-9 ||Jc|| ||B(W)||, with B built densely (eq. 7)."""
    s, _, masses, d, modes = setup
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), masses, d).toarray()
    B = dense_lbs_basis(s.mesh.X, modes.weights)
    assert np.linalg.norm(Jc.T @ B) <= 1e-9 * np.linalg.norm(Jc) * np.linalg.norm(B)


def test_subspace_is_closed_under_rotations(setup):
    """(R (x) I) B z lies in span(B) for random R and z, residual <= 1e-10 relative."""
    s, _, _, _, modes = setup
    B = dense_lbs_basis(s.mesh.X, modes.weights)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(B)
    for _ in range(3):
        R = random_rotation(rng)
        v = (B @ rng.standard_normal(B.shape[1])).reshape(-1, 3) @ R.T
        v = v.ravel()
        resid = v - Q @ (Q.T @ v)
        assert np.linalg.norm(resid) <= 1e-10 * np.linalg.norm(v)


def test_unconstrained_first_mode_is_constant(setup):
    s, mat, masses, _, _ = setup
    modes = skinning_eigenmodes(s.mesh, mat, masses, None, None, 4)
    w0 = modes.weights[:, 0]
    assert modes.eigenvalues[0] <= 1e-8 * modes.eigenvalues[1]
    assert np.abs(w0 - w0.mean()).max() < 1e-8 * np.abs(w0).max()
    assert modes.constraint_rank == 0


def test_modes_are_material_aware(setup):
    """Painting one half stiffer changes the modes: they concentrate in the soft half."""
    s, _, masses, d, modes = setup
    soft = s.mesh.X[s.mesh.T].mean(axis=1)[:, 0] < s.length / 2
    E = np.where(soft, 2e3, 2e5)
    mat = Material.from_fields(E, np.full(s.mesh.t, 0.3), np.full(s.mesh.t, 1000.0))
    het = skinning_eigenmodes(s.mesh, mat, masses, s.rig, d, 10)
    left = s.mesh.X[:, 0] < s.length / 2
    energy_left = (masses[left, None] * het.weights[left] ** 2).sum(axis=0)
    energy_left_h = (masses[left, None] * modes.weights[left] ** 2).sum(axis=0)
    assert energy_left[:3].mean() > energy_left_h[:3].mean() + 0.2


def test_extra_weights_join_the_modes_complementary_and_orthonormal(setup):
    """Appendage weights added to the modes (issue 31): J_w W = 0, M-orthonormal, the modes kept."""
    s, mat, masses, d, modes = setup
    Hw = corotational_weight_space_hessian(s.mesh, mat.mu, mat.lam)
    Y = constraint_basis(weight_space_constraint(s.mesh.X, s.rig, masses, d), masses)
    W, lam = augment_weights(modes.weights, modes.eigenvalues, s.rig.weights, Hw, masses, Y)
    assert 10 < W.shape[1] <= 13
    assert np.abs(W.T @ (masses[:, None] * W) - np.eye(W.shape[1])).max() < 1e-8
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), masses, d).toarray()
    B = dense_lbs_basis(s.mesh.X, W)
    assert np.linalg.norm(Jc.T @ B) <= 1e-9 * np.linalg.norm(Jc) * np.linalg.norm(B)
    assert np.all(np.diff(lam) >= 0)
    assert np.allclose(lam[:10], modes.eigenvalues, rtol=1e-8)
    inside = modes.weights[:, :2] @ np.array([[1.0], [2.0]])  # the modes hold it already: dropped
    assert augment_weights(modes.weights, modes.eigenvalues, inside, Hw, masses, Y)[0].shape[1] == 10


def test_only_chains_the_modes_miss_join_them(setup):
    """A chain joins when every bone's reach is below MISSED_REACH; the bar's bones are all reached."""
    s, mat, masses, d, modes = setup
    reach = modal_reach(modes.weights, masses, s.rig.weights)
    assert np.all(reach > MISSED_REACH)
    assert list(missed_chains(np.array([0.5, 0.001, 0.002, 0.0001]), np.array([0, 0, 1, 1]))) == [
        False,
        False,
        True,
        True,
    ]
    same = skinning_eigenmodes(s.mesh, mat, masses, s.rig, d, 10, extra_weights=s.rig.weights)
    assert not same.extra_used.any() and np.array_equal(same.weights, modes.weights)
