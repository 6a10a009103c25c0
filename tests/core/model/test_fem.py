"""FEM operators (core/fem.py), checked against independent constructions."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model import fem
from core.validation.scenes import jitter, random_material


@pytest.fixture(scope="module")
def mesh():
    X, T = box_tet_mesh((3, 3, 4), (1.0, 1.2, 1.5))
    return TetMesh.from_arrays(jitter(X, 0.04, seed=3), T)


def test_lumped_mass_sums_to_total_mass(mesh):
    rho = np.random.default_rng(0).uniform(500, 1500, mesh.t)
    m = fem.lumped_mass(mesh, rho)
    assert m.sum() == pytest.approx(float(rho @ mesh.volumes), rel=1e-13)
    assert (m > 0).all()


def test_deformation_gradient_operator_matches_shape_gradients(mesh):
    K = fem.deformation_gradient_operator(mesh)
    A = np.random.default_rng(1).standard_normal((3, 3))
    x = mesh.X @ A.T + 0.3
    F = (K @ x.ravel()).reshape(-1, 3, 3)
    assert np.abs(F - A).max() < 1e-12  # affine fields are exact, up to round-off
    D = fem.scalar_gradient_operator(mesh)
    Ft = (D @ x).reshape(-1, 3, 3)  # rows j, columns i: F^T
    assert np.abs(np.swapaxes(Ft, 1, 2) - F).max() < 1e-12


def test_heterogeneous_laplacian_is_KtUVK(mesh):
    mu = np.random.default_rng(2).uniform(1, 10, mesh.t)
    K = fem.deformation_gradient_operator(mesh)
    UV = sp.diags(np.repeat(mu * mesh.volumes, 9))
    L_ref = (K.T @ UV @ K).toarray()
    L = fem.heterogeneous_laplacian(mesh, mu).toarray()
    assert np.abs(L - L_ref).max() <= 1e-12 * np.abs(L_ref).max()


def test_rest_hessian_is_the_linearised_corotational_energy(mesh):
    """x^T H x equals sum_e V_e (2 mu |sym grad u|^2 + lam tr(grad u)^2) for random u."""
    mat = random_material(mesh.t, seed=4)
    H = fem.corotational_rest_hessian(mesh, mat.mu, mat.lam)
    u = np.random.default_rng(5).standard_normal((mesh.n, 3))
    G = np.einsum("tai,taj->tij", u[mesh.T], mesh.gradients)
    eps = 0.5 * (G + np.swapaxes(G, 1, 2))
    quad = mesh.volumes @ (
        2 * mat.mu * np.einsum("tij,tij->t", eps, eps) + mat.lam * np.trace(G, axis1=1, axis2=2) ** 2
    )
    assert u.ravel() @ (H @ u.ravel()) == pytest.approx(quad, rel=1e-12)
    # Rigid motions cost nothing (to round-off relative to H's scale).
    W = np.array([[0, -1, 0.3], [1, 0, -0.2], [-0.3, 0.2, 0]])
    rigid = mesh.X @ W.T + np.array([1.0, -2.0, 0.5])
    assert np.abs(H @ rigid.ravel()).max() < 1e-10 * abs(H).max()


def test_weight_space_hessian_is_the_sum_of_diagonal_blocks(mesh):
    """The closed form equals the explicit block sum to 1e-10 relative (random heterogeneous mesh)."""
    mat = random_material(mesh.t, seed=6)
    H = fem.corotational_rest_hessian(mesh, mat.mu, mat.lam).toarray()
    block_sum = sum(H[i::3, i::3] for i in range(3))
    Hw = fem.corotational_weight_space_hessian(mesh, mat.mu, mat.lam).toarray()
    Hw_generic = fem.weight_space_hessian(sp.csr_matrix(H)).toarray()
    scale = np.abs(block_sum).max()
    assert np.abs(Hw - block_sum).max() <= 1e-10 * scale
    assert np.abs(Hw_generic - block_sum).max() <= 1e-12 * scale


def cotangent_laplacian(X, T):
    """Independent construction from dihedral angles: L_ij = -1/6 sum l_kl cot(theta_kl)."""
    n = len(X)
    L = np.zeros((n, n))
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for tet in T:
        for i, j in pairs:
            k, l = (v for v in range(4) if v not in (i, j))
            a, b = X[tet[k]], X[tet[l]]
            # dihedral angle at edge (k, l) between faces (k, l, i) and (k, l, j)
            e = (b - a) / np.linalg.norm(b - a)
            pi_ = X[tet[i]] - a
            pj_ = X[tet[j]] - a
            pi_ -= e * (pi_ @ e)
            pj_ -= e * (pj_ @ e)
            cos = pi_ @ pj_ / (np.linalg.norm(pi_) * np.linalg.norm(pj_))
            cot = cos / np.sqrt(1 - cos * cos)
            w = np.linalg.norm(b - a) * cot / 6.0
            L[tet[i], tet[j]] -= w
            L[tet[j], tet[i]] -= w
    L[np.diag_indices(n)] = -L.sum(axis=1)
    return L


def test_homogeneous_arap_weight_hessian_is_proportional_to_cotangent_laplacian(mesh):
    mu = 3.7
    Hw = fem.corotational_weight_space_hessian(mesh, mu, 0.0).toarray()
    Lc = cotangent_laplacian(mesh.X, mesh.T)
    # H_w = (3 mu + mu) L_cot for ARAP; both built independently, so round-off only.
    assert np.abs(Hw - 4 * mu * Lc).max() <= 1e-10 * np.abs(Hw).max()
