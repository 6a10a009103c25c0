"""Finite-element operators on a tet mesh (linear tets, lumped mass).

Flattened vectors interleave per vertex: entry ``3*a + i`` is coordinate ``i``
of vertex ``a``.  Flattened deformation gradients are row-major per tet:
entry ``9*e + 3*i + j`` is ``F_e[i, j]``.

Because every operator here acts the same way on x, y and z, the vector
operators are Kronecker products of scalar ones with ``I_3``; the reduced
model and the solver work with the scalar factors (see ``reduced.py``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..geometry.tetmesh import TetMesh


def _per_tet(values: np.ndarray | float, t: int) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return np.broadcast_to(v, (t,)) if v.ndim == 0 else v


def lumped_mass(mesh: TetMesh, density: np.ndarray | float) -> np.ndarray:
    """Lumped vertex masses: a quarter of each incident tet's mass.

    density: scalar or (t,) kg/m^3 -> (n,) kg.
    """
    tet_mass = _per_tet(density, mesh.t) * mesh.volumes
    return np.bincount(mesh.T.ravel(), weights=np.repeat(tet_mass / 4.0, 4), minlength=mesh.n)


def scalar_gradient_operator(mesh: TetMesh) -> sp.csr_matrix:
    """D (3t x n): ``(D f)[3e + j] = d f / d x_j`` in tet e for a scalar field f (n,)."""
    t = mesh.t
    rows = (3 * np.arange(t)[:, None, None] + np.arange(3)[None, None, :]).repeat(4, axis=1)  # (t,4,3)
    cols = np.broadcast_to(mesh.T[:, :, None], (t, 4, 3))
    return sp.csr_matrix((mesh.gradients.ravel(), (rows.ravel(), cols.ravel())), shape=(3 * t, mesh.n))


def deformation_gradient_operator(mesh: TetMesh) -> sp.csr_matrix:
    """K (9t x 3n): ``(K x)[9e + 3i + j] = F_e[i, j]`` for interleaved positions x (3n,)."""
    t = mesh.t
    e = np.arange(t)[:, None, None, None]
    # axes: tet e, vertex a (from mesh.T), coordinate i, gradient direction j
    i = np.arange(3)[None, None, :, None]
    j = np.arange(3)[None, None, None, :]
    shape = (t, 4, 3, 3)
    rows = np.broadcast_to(9 * e + 3 * i + j, shape)
    cols = np.broadcast_to(3 * mesh.T[:, :, None, None] + i, shape)
    vals = np.broadcast_to(mesh.gradients[:, :, None, :], shape)  # G[e, a, j]
    return sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())), shape=(9 * t, 3 * mesh.n))


def scalar_laplacian(mesh: TetMesh, coefficient: np.ndarray | float = 1.0) -> sp.csr_matrix:
    """Ls (n x n) = sum_e c_e V_e G_e G_e^T: the (weighted) cotangent Laplacian, PSD.

    coefficient: scalar or (t,).  ``x^T Ls x = sum_e c_e V_e |grad x|^2``.
    """
    w = _per_tet(coefficient, mesh.t) * mesh.volumes
    local = np.einsum("e,eaj,ebj->eab", w, mesh.gradients, mesh.gradients)  # (t,4,4)
    rows = np.broadcast_to(mesh.T[:, :, None], local.shape)
    cols = np.broadcast_to(mesh.T[:, None, :], local.shape)
    return sp.csr_matrix((local.ravel(), (rows.ravel(), cols.ravel())), shape=(mesh.n, mesh.n))


def heterogeneous_laplacian(mesh: TetMesh, mu: np.ndarray | float) -> sp.csr_matrix:
    """L (3n x 3n) = K^T U V K with U = diag(mu) per tet: ``x^T L x = sum_e mu_e V_e ||F_e||^2``.

    Equals ``kron(scalar_laplacian(mesh, mu), I_3)`` in interleaved order.
    """
    return sp.kron(scalar_laplacian(mesh, mu), sp.identity(3), format="csr")


def vector_mass(masses: np.ndarray) -> sp.dia_matrix:
    """M (3n x 3n) diagonal from vertex masses (n,)."""
    return sp.diags(np.repeat(masses, 3))


def corotational_rest_hessian(
    mesh: TetMesh, mu: np.ndarray | float, lam: np.ndarray | float, chunk: int = 200_000
) -> sp.csr_matrix:
    """Rest Hessian (3n x 3n) of sum_e V_e psi(F_e) for linear co-rotational psi.

    At rest psi linearises to mu ||sym grad u||^2 + lam/2 tr(grad u)^2, whose
    Hessian in F is C = mu (I_9 + P) + lam vec(I) vec(I)^T (P transposes a
    3x3 matrix).  Assembled tet by tet (12 x 12 blocks), in chunks to bound
    memory; used for displacement modes and the full-space reference.
    """
    mu_t, lam_t = _per_tet(mu, mesh.t), _per_tet(lam, mesh.t)
    n3 = 3 * mesh.n
    H = sp.csr_matrix((n3, n3))
    eye = np.eye(3)
    for s in range(0, mesh.t, chunk):
        sl = slice(s, s + chunk)
        G, V = mesh.gradients[sl], mesh.volumes[sl]
        Tc = mesh.T[sl]
        # d F[i, j] / d x[a, k] = delta_ik G[a, j]; contract with C block by block:
        #   mu * (delta_ik delta_i'k' G_a.G_b) [identity part]
        # + mu * G[a, k'] G[b, k]              [transpose part]
        # + lam * G[a, k] G[b, k']             [volume part]
        gg = np.einsum("eaj,ebj->eab", G, G)
        blk = (
            (mu_t[sl] * V)[:, None, None, None, None] * gg[:, :, None, :, None] * eye[None, None, :, None, :]
            + (mu_t[sl] * V)[:, None, None, None, None] * np.einsum("eal,ebk->eakbl", G, G)
            + (lam_t[sl] * V)[:, None, None, None, None] * np.einsum("eak,ebl->eakbl", G, G)
        )  # (c, 4, 3, 4, 3): [a, k, b, k']
        rows = np.broadcast_to((3 * Tc[:, :, None] + np.arange(3))[:, :, :, None, None], blk.shape)
        cols = np.broadcast_to((3 * Tc[:, :, None] + np.arange(3))[:, None, None, :, :], blk.shape)
        H = H + sp.csr_matrix((blk.ravel(), (rows.ravel(), cols.ravel())), shape=(n3, n3))
    return H


def weight_space_hessian(H: sp.spmatrix) -> sp.csr_matrix:
    """H_w (n x n) = sum_i P_i^T H P_i: the sum of the x, y and z diagonal blocks (eq. 18).

    H: (3n x 3n), interleaved.
    """
    H = sp.csr_matrix(H)
    n = H.shape[0] // 3
    return sum((H[i::3, :][:, i::3] for i in range(3)), sp.csr_matrix((n, n))).tocsr()


def corotational_weight_space_hessian(mesh: TetMesh, mu: np.ndarray | float, lam: np.ndarray | float) -> sp.csr_matrix:
    """Closed form of eq. 18 for linear co-rotational elasticity: (n x n).

    Summing the diagonal blocks of the rest Hessian leaves (3 mu + mu + lam)
    times G G^T per tet, so H_w = scalar_laplacian(mesh, 4 mu + lam): no 3n x 3n
    matrix is ever built.
    """
    return scalar_laplacian(mesh, 4.0 * _per_tet(mu, mesh.t) + _per_tet(lam, mesh.t))
