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

# Local support's default reach: a contact pose weighs nothing half-way to its nearest contact-free pose.
REACH = 0.5


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


def support_radii(features: np.ndarray, contact: np.ndarray, reach: float) -> np.ndarray:
    """Support radii (k,) of the training poses: reach times each contact pose's feature distance to the
    nearest contact-free pose; inf for the contact-free poses (they keep global support).

    features (k, F); contact (k,) bool, True where a pose's basis holds contact (at least one pose,
    the rest, is contact-free); reach > 0: 0.5 fades a contact pose out half-way to its nearest
    contact-free neighbour, where (between the two) its skin has come apart.
    """
    F = np.asarray(features, dtype=np.float64)
    contact = np.asarray(contact, dtype=bool)
    if contact.all():
        raise SubspaceError("local support needs a contact-free training pose (the rest pose is one)")
    if reach <= 0.0:
        raise SubspaceError(f"local support needs reach > 0, got {reach}")
    D = np.linalg.norm(F[:, None, :] - F[None, contact == 0, :], axis=2)  # (k, free)
    return np.where(contact, reach * D.min(axis=1), np.inf)


def local_support(w: np.ndarray, features: np.ndarray, f: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Weights (k,) where each contact pose weighs nothing beyond its radius; they still sum to one.

    w (k,): the global weights (:func:`weights`) at features f (F,); features (k, F); radii (k,)
    from :func:`support_radii`.  A contact pose's weight is faded by (1 - (d / radius)^2)^2 (1 at
    the pose, so the blend still interpolates the training poses; C1 and 0 at the radius); the
    weight taken off goes to the contact-free poses by inverse squared distance (Shepard), so it
    lands on the nearest of them and the weights stay continuous and invariant to rigid motion.
    """
    w = np.asarray(w, dtype=np.float64)
    d = np.linalg.norm(np.asarray(features, dtype=np.float64) - np.asarray(f, dtype=np.float64)[None, :], axis=1)
    contact = np.isfinite(radii)
    t = np.where(contact, d / np.where(contact, radii, 1.0), 0.0)
    fade = np.clip(1.0 - t * t, 0.0, None) ** 2
    out = np.where(contact, fade * w, w)
    taken = float(np.sum(w - out))
    free = ~contact
    if np.any(d[free] == 0.0):  # at a contact-free training pose: every other weight is already 0
        share = (d == 0.0) & free
    else:
        share = np.where(free, 1.0 / np.where(free, d, 1.0) ** 2, 0.0)
    return out + taken * share / np.sum(share)
