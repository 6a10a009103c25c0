"""The reduced model's precomputed products (core/subspace/reduced.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.model.fem import deformation_gradient_operator, heterogeneous_laplacian
from core.model.rig import lbs_jacobian, rig_matrix, rig_parameters
from core.subspace.reduced import build_reduced_model, cluster_matrix
from core.validation.scenes import bar_scene, random_material


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=2, bones=3)
    mat = random_material(s.mesh.t, seed=1)
    model = build_reduced_model(s.mesh, mat, s.rig, m=5, r=12)
    return s, mat, model


def full_operators(s, mat, model):
    """Explicit 3n/9t-sized operators, built independently of the reduced code."""
    mesh = s.mesh
    L = heterogeneous_laplacian(mesh, mat.mu)
    M = sp.diags(np.repeat(model.masses, 3))
    K = deformation_gradient_operator(mesh)
    G = cluster_matrix(model.labels, mat.mu * mesh.volumes)
    G9 = sp.kron(G, sp.identity(9))
    J = lbs_jacobian(mesh.X, s.rig.weights)
    return L, M, G9 @ K, J


def test_products_match_explicit_full_space_operators(setup):
    s, mat, model = setup
    L, M, G9K, J = full_operators(s, mat, model)
    Y = model.basis()
    rng = np.random.default_rng(0)
    Z1, Z2 = rng.standard_normal((2, 4 * model.m, 3))
    u1, u2 = (Y @ Z1).ravel(), (Y @ Z2).ravel()
    scale = lambda a: 1e-11 * max(abs(a), 1.0)  # noqa: E731 - round-off of sums over the mesh
    assert np.sum(Z1 * (model.A_L @ Z2)) == pytest.approx(u1 @ (L @ u2), abs=scale(u1 @ (L @ u2)))
    assert np.sum(Z1 * (model.A_M @ Z2)) == pytest.approx(u1 @ (M @ u2), abs=scale(u1 @ (M @ u2)))
    # Cluster F: rows 3c..3c+2 of C_W Z hold F_c^T; G9 K u holds F_c row-major.
    F_red = (model.C_W @ Z1).reshape(-1, 3, 3).transpose(0, 2, 1)
    F_full = (G9K @ u1).reshape(-1, 3, 3)
    assert np.abs(F_red - F_full).max() < 1e-10 * np.abs(F_full).max()
    p = rig_parameters(rng.standard_normal((3, 3, 4)))
    P = rig_matrix(p)
    xr = J @ p
    assert np.sum(Z1 * (model.A_LR @ P)) == pytest.approx(u1 @ (L @ xr), rel=1e-10)
    assert np.sum(Z1 * (model.A_MR @ P)) == pytest.approx(u1 @ (M @ xr), rel=1e-10)
    F_rig = (model.C_R @ P).reshape(-1, 3, 3).transpose(0, 2, 1)
    assert np.abs(F_rig - (G9K @ xr).reshape(-1, 3, 3)).max() < 1e-10 * np.abs(F_rig).max()


def test_a_missed_chain_joins_complementary_softened_and_rotation_invariant(monkeypatch):
    """Issue 31: a chain the modes miss adds its bones' weights and swings no faster than the slowest
    mode; J_w W = 0 still holds, the slowest mode stays the body's, and a rotated copy gets the same
    subspace and softening to round-off."""
    import core.subspace.skinning_modes as skm
    from core.geometry.tetmesh import TetMesh
    from core.model.constraint import complementarity_matrix
    from core.model.materials import Material
    from core.model.rig import LBSRig
    from core.validation.scenes import random_rotation

    monkeypatch.setattr(skm, "MISSED_REACH", np.inf)  # the bar's end bone stands for the stag's tail
    s = bar_scene(cells_per_unit=2, bones=4)
    end = s.rig.weights[:, [-1]]
    stiff = end[s.mesh.T].mean(axis=1)[:, 0] > 0.5  # a stiff end: its swing is faster than the body's
    mat = Material.from_fields(np.where(stiff, 1e6, 1e4), np.full(s.mesh.t, 0.3), np.full(s.mesh.t, 1000.0))
    plain = build_reduced_model(s.mesh, mat, s.rig, m=5, r=12)
    model = build_reduced_model(s.mesh, mat, s.rig, m=5, r=12, extra_weights=end, extra_groups=np.array([0]))
    assert model.m == 6
    assert np.all(model.mu <= mat.mu) and np.any(model.mu < mat.mu)
    assert model.eigenvalues[0] >= 0.98 * plain.eigenvalues[0]  # the body stays the slowest, to a few %
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), model.masses, model.leak)
    B = sp.csr_matrix(lbs_jacobian(s.mesh.X, model.weights))
    assert sp.linalg.norm(Jc.T @ B) <= 1e-9 * sp.linalg.norm(Jc) * sp.linalg.norm(B)
    R = random_rotation(np.random.default_rng(3))
    turned = TetMesh.from_arrays(s.mesh.X @ R.T + np.array([3.0, -1.0, 2.0]), s.mesh.T)
    other = build_reduced_model(
        turned, mat, LBSRig.from_weights(s.rig.weights), m=5, r=12, extra_weights=end, extra_groups=np.array([0])
    )
    assert np.allclose(other.mu, model.mu, rtol=1e-9)
    # The same span (the bar's symmetry makes some modes degenerate, so compare spans, not columns).
    Wm, Wo = model.weights, other.weights
    rest = Wo - Wm @ (Wm.T @ (model.masses[:, None] * Wo))
    assert np.sqrt(model.masses @ rest**2).max() < 1e-6
