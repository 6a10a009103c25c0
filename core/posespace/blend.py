"""Blending aligned per-pose bases at runtime (Xu & Barbič, §5.2, eqs. 14-16).

With RBF weights w (k,) of the current pose, the blended basis is

    U(w) = (Σ_i w_i U_i) Υ,   Υ = diag(1 / v),   v_q^2 = Σ_ij w_i w_j (U_i^T M U_j)_qq,

every column of unit mass norm (the seed's renormalisation; the columns are not
re-orthogonalised).  Any product of U(w) with a fixed operator is then a small
sum over poses, with no pass over the mesh at runtime:

    U(w)^T A U(w) = Υ (Σ_ij w_i w_j U_i^T A U_j) Υ        (bilinear: per pose pair)
    C U(w)        = (Σ_i w_i C U_i) Υ                      (linear: per pose)

:func:`pair_products` precomputes the first kind, :func:`blend_pairs` and
:func:`blend_singles` evaluate both in O(k^2 a b).  The reduced model's products
use the skinning basis Y(W) = W ⊙ [X | 1] (n, 4m), whose column 4q + c scales
with weight column q: ``column_scale`` repeats Υ accordingly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def pair_products(left: np.ndarray, A: sp.spmatrix | np.ndarray | None, right: np.ndarray) -> np.ndarray:
    """P (k, k, a, b) with P[i, j] = left_i^T A right_j; left (k, n, a), right (k, n, b), A (n, n)
    (sparse, dense, or a vector (n,) for a diagonal; None for the identity)."""
    L, R = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    if A is None:
        AR = R
    elif isinstance(A, np.ndarray) and A.ndim == 1:
        AR = A[None, :, None] * R
    else:
        AR = np.stack([A @ Rj for Rj in R])  # one sparse product per pose
    return np.einsum("ina,jnb->ijab", L, AR)


def gram(bases: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """G (k, k, m, m) with G[i, j] = U_i^T M U_j; bases (k, n, m), masses (n,) the diagonal of M."""
    return pair_products(bases, masses, bases)


def normalisation(G: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Υ (m,): the reciprocal mass norms of the columns of Σ_i w_i U_i (eq. 15); G from :func:`gram`."""
    d = np.einsum("i,j,ijqq->q", w, w, G)
    if (d <= 0).any():
        raise FloatingPointError("a blended basis column vanished: the bases were not aligned")
    return 1.0 / np.sqrt(d)


def column_scale(upsilon: np.ndarray, per_column: int) -> np.ndarray:
    """Υ repeated for a basis with ``per_column`` columns per weight column: (m * per_column,)."""
    return np.repeat(upsilon, per_column)


def blend_basis(bases: np.ndarray, w: np.ndarray, upsilon: np.ndarray) -> np.ndarray:
    """U(w) (n, m) = (Σ_i w_i U_i) Υ; bases (k, n, m).  A pass over the mesh: for output, not per step."""
    return np.tensordot(w, bases, axes=1) * upsilon[None, :]


def blend_pairs(P: np.ndarray, w: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """diag(left) (Σ_ij w_i w_j P_ij) diag(right): (a, b); P (k, k, a, b), left (a,), right (b,)."""
    return left[:, None] * np.einsum("i,j,ijab->ab", w, w, P) * right[None, :]


def blend_singles(S: np.ndarray, w: np.ndarray, right: np.ndarray) -> np.ndarray:
    """(Σ_i w_i S_i) diag(right): (a, b); S (k, a, b) per-pose products C U_i, right (b,)."""
    return np.tensordot(w, S, axes=1) * right[None, :]
