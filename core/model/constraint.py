"""The rig-complementarity constraint, in displacement space and in weight space.

Displacement space (Zhang et al. 2020): secondary displacements u (3n,) must
satisfy ``Jc^T u = 0`` with ``Jc = D M J`` (3n x p): the rig Jacobian weighted
by lumped mass and by the momentum-leak field d.

Weight space (Benchekroun et al. 2023, eqs. 20-21): a skinning subspace B(W) satisfies
``Jc^T B(W) = 0`` exactly when ``J_w W = 0`` with rows ``Jc^T A_{i,j}``.
For an LBS rig those rows collapse: every row is a combination of

    m * d * w_b * q(X),   q in {1, x, y, z, x^2, y^2, z^2, xy, xz, yz},

so at most 10 rows per bone span the same row space as the 144 of eq. 21.
Redundant rows are then removed by a rank-revealing factorisation and the
remaining ones orthonormalised (see :func:`constraint_basis`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .rig import LBSRig, LinearRig, Rig, homogeneous

# Directions of the constraint's row space whose Gram eigenvalue falls below
# this fraction of the largest are numerically dependent on the others.  The
# Gram matrix squares singular values, so this keeps directions down to
# ~3e-7 of the strongest; exact dependencies sit at ~1e-16 and are dropped.
RANK_RTOL = 1e-13


def complementarity_matrix(J: sp.spmatrix, masses: np.ndarray, leak: np.ndarray) -> sp.csr_matrix:
    """Jc = D M J (3n x p): masses (n,), leak d (n,) in [0, 1], J (3n x p)."""
    return sp.csr_matrix(sp.diags(np.repeat(masses * leak, 3)) @ J)


def normalization(X: np.ndarray) -> tuple[np.ndarray, float]:
    """Centre (3,) and scale of a point set: its mean and RMS distance to the mean.

    Both move with the points under rotations and translations, so anything
    built on normalised coordinates is equivariant by construction.
    """
    centre = X.mean(axis=0)
    scale = float(np.sqrt(((X - centre) ** 2).sum(axis=1).mean())) or 1.0
    return centre, scale


def normalized_coordinates(X: np.ndarray) -> np.ndarray:
    """X centred and scaled by :func:`normalization`: (n, 3).

    Monomials and homogeneous coordinates of raw world positions are badly
    conditioned for a character far from the origin or far from unit size;
    an affine change of coordinates leaves every span used here unchanged.
    """
    centre, scale = normalization(X)
    return (X - centre) / scale


def quadratic_monomials(X: np.ndarray) -> np.ndarray:
    """The 10 monomials of degree <= 2 of each point: (n, 3) -> (n, 10)."""
    x, y, z = X.T
    return np.stack([np.ones_like(x), x, y, z, x * x, y * y, z * z, x * y, x * z, y * z], axis=1)


def lbs_weight_space_constraint(
    X: np.ndarray, weights: np.ndarray, masses: np.ndarray, leak: np.ndarray
) -> sp.csr_matrix:
    """J_w for an LBS rig in monomial form: (10 b x n) sparse.

    Row ``10 b + k`` is ``m * d * w_b * q_k(Xn)`` with Xn the normalised rest
    positions.  Its row space equals that of eq. 21 built from ``D M J``.
    """
    n, b = weights.shape
    Q = quadratic_monomials(normalized_coordinates(X))  # (n, 10)
    md = masses * leak
    a_idx, b_idx = np.nonzero(weights * md[:, None])
    vals = (md[a_idx] * weights[a_idx, b_idx])[:, None] * Q[a_idx]  # (nnz, 10)
    rows = 10 * b_idx[:, None] + np.arange(10)[None, :]
    cols = np.broadcast_to(a_idx[:, None], rows.shape)
    return sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())), shape=(10 * b, n))


def general_weight_space_constraint(X: np.ndarray, Jc: sp.spmatrix) -> sp.csr_matrix:
    """J_w of eq. 21 for any constraint matrix Jc (3n x p): (12 p x n) sparse.

    Block (i, j) is ``Jc^T A_{i,j}`` with ``A_{i,j} = P_i diag(Xh[:, j])``: it
    picks coordinate i of Jc's columns and scales vertex a by its j-th
    homogeneous (normalised) coordinate.
    """
    Jc = sp.csr_matrix(Jc)
    Xh = homogeneous(normalized_coordinates(X))
    blocks = []
    for i in range(3):
        Ji_T = sp.csr_matrix(Jc[i::3, :].T)  # (p, n): coordinate i of every column
        for j in range(4):
            blocks.append(Ji_T @ sp.diags(Xh[:, j]))
    return sp.vstack(blocks, format="csr")


def weight_space_constraint(X: np.ndarray, rig: Rig, masses: np.ndarray, leak: np.ndarray) -> sp.csr_matrix:
    """J_w (rows x n) for any rig: the monomial form for LBS, eq. 21 otherwise."""
    if isinstance(rig, LBSRig):
        return lbs_weight_space_constraint(X, rig.weights, masses, leak)
    if isinstance(rig, LinearRig):
        return general_weight_space_constraint(X, complementarity_matrix(rig.J, masses, leak))
    raise TypeError(f"unsupported rig type {type(rig).__name__}")


def stick_rows(vertices: np.ndarray, masses: np.ndarray) -> sp.csr_matrix:
    """Weight-space stick rows (c x n): m_v e_v^T for each contact vertex v (vertices (c,), masses (n,)).

    Scaled by the vertex mass like the complementarity rows, so the constraint basis
    equilibrates both kinds alike.
    """
    v = np.asarray(vertices, dtype=np.int64)
    return sp.csr_matrix((masses[v], (np.arange(len(v)), v)), shape=(len(v), len(masses)))


def constraint_basis(A: sp.spmatrix, mass: np.ndarray) -> np.ndarray:
    """An M-orthonormal basis Y (n x k) with span(M Y) = rowspace(A), redundancy removed.

    ``A W = 0`` is then the same as ``Y^T M W = 0``: W is M-orthogonal to Y,
    the form LOBPCG's ``Y`` argument and the null-space projector expect.
    A: (r x n) sparse, mass: (n,) diagonal of M.  Rows are equilibrated,
    then a symmetric eigendecomposition of the small Gram matrix
    ``A M^-1 A^T`` (r x r) reveals the rank; a second orthonormalisation
    (CholeskyQR2) removes the error the Gram matrix introduced.
    Returns an (n x 0) array when A has no independent rows.
    """
    n = A.shape[1]
    A = sp.csr_matrix(A)
    norms = np.sqrt(np.asarray(A.multiply(A).multiply(1.0 / mass[None, :]).sum(axis=1)).ravel())
    keep = norms > 0
    if not keep.any():
        return np.zeros((n, 0))
    A = sp.diags(1.0 / norms[keep]) @ A[keep]
    Yraw = (A.multiply(1.0 / mass[None, :])).T.tocsc()  # (n x r) = M^-1 A^T
    gram = (A @ Yraw).toarray()
    evals, evecs = sla.eigh(0.5 * (gram + gram.T))
    sel = evals > RANK_RTOL * evals.max()
    Y = Yraw @ (evecs[:, sel] / np.sqrt(evals[sel]))
    Y = np.asarray(Y)
    for _ in range(2):  # CholeskyQR2: the first pass leaves O(cond * eps) error
        S = Y.T @ (mass[:, None] * Y)
        L = sla.cholesky(0.5 * (S + S.T), lower=True)
        Y = sla.solve_triangular(L, Y.T, lower=True).T
    return Y


def project_out(W: np.ndarray, Y: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """W minus its M-projection on span(Y): (n x m); Y must be M-orthonormal."""
    if Y.shape[1] == 0:
        return W
    return W - Y @ (Y.T @ (mass[:, None] * W))
