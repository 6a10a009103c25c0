"""Pose-space RBF weights (Xu & Barbič, eq. 2): how much each training pose counts at a rig pose.

Poses are compared by their bones' rotations, not by the raw rig parameters:
translations carry the character's walk across the set, and a turn of the whole
character is not a new pose.  :func:`pose_features` therefore expresses each
bone's rotation relative to the rig's mean rotation, which makes the weights
invariant to any rigid motion of the whole rig (the solver's rotation
equivariance and Galilean invariance survive the blend).

The kernel is the seed's biharmonic phi(r) = r.  The interpolation system is
augmented with a constant term (a Lagrange row Σ_i ŵ_ij = 0), so the weights sum
to one at every pose, not only at the training poses: far from every training
pose the blend tends to a constant convex-like combination (the seed's §9
remark) instead of drifting in scale.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import SubspaceError
from ..linalg.polar import rotation_svd


def pose_features(p: np.ndarray) -> np.ndarray:
    """Features (9 b,) of rig parameters p (12 b,): each bone's rotation R̄^T R_b, flattened.

    R_b is the rotation of bone b's affine map (its polar factor, so a scaled bone
    counts by its turn only); R̄ is the polar factor of Σ_b R_b, the rig's mean
    rotation.  A rigid motion G of the whole rig maps R_b -> G R_b and R̄ -> G R̄,
    leaving every feature unchanged.
    """
    A = np.asarray(p, dtype=np.float64).reshape(-1, 3, 4)[:, :, :3]
    R = rotation_svd(A)
    mean = rotation_svd(R.sum(axis=0)[None])[0]
    return np.einsum("ji,bjk->bik", mean, R).ravel()


def train(features: np.ndarray) -> np.ndarray:
    """Coefficients (k + 1, k) of the augmented biharmonic RBF through k training poses.

    features: (k, f), one row per training pose (distinct rows).  Column i of the
    result holds ŵ_i (its first k entries) and the constant term (its last), solved
    from [Φ 1; 1^T 0] [ŵ_i; c_i] = [e_i; 0] with Φ_jl = ||f_j - f_l||, so that
    w_i(f_j) = δ_ij; summed over i the system reads [Φ 1; 1^T 0] [0; 1] = [1; 0], so
    Σ_i ŵ_i = 0, Σ_i c_i = 1 and Σ_i w_i(f) = 1 for every f.
    """
    F = np.asarray(features, dtype=np.float64)
    k = len(F)
    if k == 0:
        raise SubspaceError("pose-space RBF needs at least one training pose")
    D = np.linalg.norm(F[:, None, :] - F[None, :, :], axis=2)
    if k > 1 and D[~np.eye(k, dtype=bool)].min() <= 1e-12 * max(D.max(), 1.0):
        raise SubspaceError("two training poses have the same bone rotations: remove one of them")
    A = np.zeros((k + 1, k + 1))
    A[:k, :k], A[:k, k], A[k, :k] = D, 1.0, 1.0
    rhs = np.vstack([np.eye(k), np.zeros((1, k))])
    return sla.solve(A, rhs)


def weights(coefficients: np.ndarray, features: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Weights (k,) of the training poses at the pose with features f (F,).

    coefficients (k + 1, k) from :func:`train`, features (k, F) the training poses'.
    """
    r = np.linalg.norm(np.asarray(features, dtype=np.float64) - np.asarray(f, dtype=np.float64)[None, :], axis=1)
    return r @ coefficients[:-1] + coefficients[-1]
