"""Skinning eigenmodes (core/subspace/skinning_modes.py)."""

import numpy as np
import pytest

from core.model.constraint import complementarity_matrix
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.model.rig import homogeneous
from core.subspace.skinning_modes import skinning_eigenmodes
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
