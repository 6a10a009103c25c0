"""Skinning eigenmodes and the displacement baseline (core/subspace.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.constraint import complementarity_matrix
from core.fem import lumped_mass
from core.leak import default_leak_field
from core.materials import Material
from core.rig import homogeneous
from core.scenes import bar_scene, random_rotation
from core.subspace import displacement_modes, skinning_eigenmodes


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


def test_displacement_modes_satisfy_the_same_constraint(setup):
    s, mat, masses, d, _ = setup
    dm = displacement_modes(s.mesh, mat, masses, s.rig, d, 12)
    U = dm.vectors
    m3 = np.repeat(masses, 3)
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), masses, d)
    assert np.abs(U.T @ (m3[:, None] * U) - np.eye(12)).max() < 1e-8
    assert np.linalg.norm(sp.csr_matrix(Jc).T @ U) <= 1e-9 * sp.linalg.norm(Jc) * np.linalg.norm(U)
    assert np.all(np.diff(dm.eigenvalues) >= -1e-9 * dm.eigenvalues.max())
