"""Rigs: linear blend skinning (the fast path) and general linear rig Jacobians.

An LBS rig moves vertex ``a`` to ``x_a = sum_b w[a, b] A_b [X_a; 1]`` with one
3x4 affine matrix ``A_b`` per bone.  Rig parameters stack those matrices
row-major: ``p[12 b + 4 i + k] = A_b[i, k]``; the rest pose is ``A_b = [I | 0]``.
The rig Jacobian ``J`` (3n x 12b) satisfies ``x = J p`` (interleaved x).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import RigError

# A vertex whose bone weights sum to at most this is unskinned.  It is the
# threshold of Blender's Armature modifier, which leaves such a vertex where it
# is and divides every other one's weights by their sum: what the character
# reader binds to the object (a "root" column) is exactly what Blender does not
# deform.  Weights are unit-free shares painted in float32, so sums this small
# are painting residue; normalising them would blow noise up 10^4-fold.
MIN_WEIGHT_SUM = 1e-4


def homogeneous(X: np.ndarray) -> np.ndarray:
    """[X | 1]: (n, 3) -> (n, 4)."""
    return np.hstack([X, np.ones((len(X), 1))])


def normalize_weights(weights: np.ndarray) -> np.ndarray:
    """Rows scaled to sum to one, as Blender's Armature modifier scales them.

    weights: (n, b) non-negative -> (n, b) float64.  A row whose sum is at most
    :data:`MIN_WEIGHT_SUM` (an all-zero row included) comes back as zeros: no
    bone moves that vertex, never NaN and never a guessed bone.  Callers that
    cannot accept such rows refuse them (:func:`validate_bone_weights`).
    """
    W = np.asarray(weights, dtype=np.float64)
    s = W.sum(axis=1, keepdims=True)
    skinned = s > MIN_WEIGHT_SUM
    return np.where(skinned, W, 0.0) / np.where(skinned, s, 1.0)


def lbs_basis(weights: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The scalar LBS basis Y (n, 4b): column 4 b + k is ``weights[:, b] * [X | 1][:, k]``.

    weights: (n, b), X: (n, 3).  With P (4b, 3), ``P[4b + k, i] = A_b[i, k]``,
    ``Y P`` is the linear blend skinning of X by the affine maps A_b.  Y is
    the factor ``(1_m^T kron X) (.) (W kron 1_4^T)`` of
    ``B_lbs = I_3 kron Y`` (Benchekroun et al. 2023, §4, eqs. 6-7): products
    with B reduce to products with Y, and B is never formed.
    """
    Xh = homogeneous(X)
    return (weights[:, :, None] * Xh[:, None, :]).reshape(len(X), -1)


def validate_bone_weights(weights: np.ndarray, n: int) -> np.ndarray:
    """Check and normalise bone weights so every row sums to one.

    weights: (n, b) -> (n, b) float64, non-negative, rows summing to 1.
    Blender's Armature modifier normalises the same way.
    """
    W = np.asarray(weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != n:
        raise RigError(f"bone weights must be an ({n}, bones) array, got shape {W.shape}")
    if W.shape[1] == 0:
        raise RigError("the rig has no deforming bones; add bones with vertex-group weights to the armature")
    if not np.isfinite(W).all():
        raise RigError(
            "bone weights contain NaN or infinite values; remove the affected vertices from their vertex groups "
            "and assign them again (Weights > Clean does not remove NaN)"
        )
    if (W < 0).any():
        raise RigError("bone weights must not be negative; clamp the vertex groups to [0, 1]")
    unskinned = W.sum(axis=1) <= MIN_WEIGHT_SUM
    if unskinned.all():
        raise RigError("all bone weights are zero; paint weights or use Parent > With Automatic Weights")
    if unskinned.any():
        bad = np.flatnonzero(unskinned)
        raise RigError(
            f"{bad.size} vertices have no bone weight (first: {bad[:3].tolist()}); "
            "weight every vertex or let skinmodes extend the weights inside the volume"
        )
    return normalize_weights(W)


def lbs_jacobian(X: np.ndarray, weights: np.ndarray) -> sp.csr_matrix:
    """J (3n x 12b) with ``J[3a + i, 12b + 4i + k] = w[a, b] [X_a; 1][k]``.

    X: (n, 3) rest positions, weights: (n, b).
    """
    n, b = weights.shape
    Xh = homogeneous(X)
    a_idx, b_idx = np.nonzero(weights)
    w = weights[a_idx, b_idx]
    i = np.arange(3)[None, :, None]
    k = np.arange(4)[None, None, :]
    shape = (len(a_idx), 3, 4)
    rows = np.broadcast_to(3 * a_idx[:, None, None] + i, shape)
    cols = np.broadcast_to(12 * b_idx[:, None, None] + 4 * i + k, shape)
    vals = np.broadcast_to(w[:, None, None] * Xh[a_idx][:, None, :], shape)
    return sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())), shape=(3 * n, 12 * b))


def rig_parameters(transforms: np.ndarray) -> np.ndarray:
    """p (12b,) from per-bone affine transforms (b, 3, 4) or (b, 4, 4), row-major."""
    A = np.asarray(transforms, dtype=np.float64)
    if A.ndim != 3 or A.shape[1:] not in ((3, 4), (4, 4)):
        raise RigError(f"bone transforms must have shape (bones, 3, 4) or (bones, 4, 4), got {A.shape}")
    return np.ascontiguousarray(A[:, :3, :]).reshape(-1)


def transforms_from_parameters(p: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rig_parameters`: (12b,) -> (b, 3, 4)."""
    return np.asarray(p, dtype=np.float64).reshape(-1, 3, 4)


def rig_matrix(p: np.ndarray) -> np.ndarray:
    """P (4b x 3) from rig parameters p (12b,): P[4b + k, i] = A_b[i, k]."""
    return np.asarray(p, dtype=np.float64).reshape(-1, 3, 4).transpose(0, 2, 1).reshape(-1, 3)


def rest_parameters(bones: int) -> np.ndarray:
    """Parameters of the rest pose: identity transforms, (12b,)."""
    return rig_parameters(np.tile(np.eye(4)[:3], (bones, 1, 1)))


def lbs_positions(X: np.ndarray, weights: np.ndarray, transforms: np.ndarray) -> np.ndarray:
    """Skinned positions (n, 3) = sum_b w[:, b] (A_b [X; 1]); transforms (b, 3, 4)."""
    A = np.asarray(transforms, dtype=np.float64)[:, :3, :]
    per_bone = np.einsum("bik,nk->nbi", A, homogeneous(X))
    return np.einsum("nb,nbi->ni", weights, per_bone)


@dataclass(frozen=True)
class LBSRig:
    """A linear blend skinning rig on the simulation vertices.

    weights: (n, b), normalised.  Its Jacobian is exactly linear in p, so the
    reduced model precomputes every rig product and a step costs O(m r).
    """

    weights: np.ndarray

    @classmethod
    def from_weights(cls, weights: np.ndarray) -> LBSRig:
        w = np.asarray(weights)
        return cls(validate_bone_weights(w, w.shape[0] if w.ndim == 2 else -1))

    @property
    def bones(self) -> int:
        return int(self.weights.shape[1])

    @property
    def n_params(self) -> int:
        return 12 * self.bones

    def jacobian(self, X: np.ndarray) -> sp.csr_matrix:
        return lbs_jacobian(X, self.weights)

    def positions(self, X: np.ndarray, p: np.ndarray) -> np.ndarray:
        return lbs_positions(X, self.weights, transforms_from_parameters(p))


@dataclass(frozen=True)
class LinearRig:
    """Any rig with a constant Jacobian J (3n x p): positions x = X + J (p - p0).

    Used for blendshape-like rigs.  The complementarity constraint is built
    from J directly (eq. 21) instead of the LBS monomial shortcut.
    """

    J: sp.csr_matrix

    @classmethod
    def from_matrix(cls, J: np.ndarray | sp.spmatrix, n: int) -> LinearRig:
        Jm = sp.csr_matrix(J, dtype=np.float64)
        if Jm.shape[0] != 3 * n or Jm.shape[1] == 0:
            raise RigError(f"a rig Jacobian must have shape ({3 * n}, p >= 1), got {Jm.shape}")
        if not np.isfinite(Jm.data).all():
            raise RigError("the rig Jacobian contains NaN or infinite values")
        return cls(Jm)

    @property
    def n_params(self) -> int:
        return int(self.J.shape[1])

    def jacobian(self, X: np.ndarray) -> sp.csr_matrix:
        return self.J


Rig = LBSRig | LinearRig
