"""Rotation-strain (RS) coordinates of a tet mesh (seed 003, §3).

Per tet an RS pair is a skew 3x3 ``omega`` (rotation) and a symmetric 3x3
``eps`` (strain); the tet's displacement gradient is

    F~(omega, eps) = exp(omega) (eps + I) - I            (eq. 1)

RS *vectors* are fields of such pairs over all tets.  A reduced RS
configuration x~ (r,) sets ``omega_e = sum_i x~_i W[i, e]`` and
``eps_e = sum_i x~_i S[i, e]``: the RS vectors W, S (r, t, 3, 3) come from a
few Euclidean (linear) modes by splitting each mode's displacement gradient
into its skew and symmetric parts, which is the RS map linearised at rest.

That *linear* split is only right for small gradients: applied to a finite
rotation it is what seed 000 §9.4 shows collapsing (a 90° turn about z gives
``exp(omega)(eps + I) = diag(0, 0, 1)``).  The exact inverse of eq. 1 is
:func:`rs_from_gradient` (polar decomposition, then the rotation's log).
"""

from __future__ import annotations

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..linalg.polar import rotation


def displacement_gradients(mesh: TetMesh, U: np.ndarray) -> np.ndarray:
    """grad u per tet for displacement fields: U (r, n, 3) -> (r, t, 3, 3), ``[i, j] = d u_i / d X_j``."""
    return np.einsum("rtai,taj->rtij", U[:, mesh.T], mesh.gradients)


def skew_part(A: np.ndarray) -> np.ndarray:
    """(A - A^T) / 2 over the last two axes: (..., 3, 3)."""
    return 0.5 * (A - np.swapaxes(A, -1, -2))


def sym_part(A: np.ndarray) -> np.ndarray:
    """(A + A^T) / 2 over the last two axes: (..., 3, 3)."""
    return 0.5 * (A + np.swapaxes(A, -1, -2))


def hat(v: np.ndarray) -> np.ndarray:
    """Skew matrices of axis-angle vectors: v (..., 3) -> (..., 3, 3) with hat(v) w = v x w."""
    z = np.zeros(v.shape[:-1])
    return np.stack(
        [
            np.stack([z, -v[..., 2], v[..., 1]], -1),
            np.stack([v[..., 2], z, -v[..., 0]], -1),
            np.stack([-v[..., 1], v[..., 0], z], -1),
        ],
        -2,
    )


def vee(W: np.ndarray) -> np.ndarray:
    """Axis-angle vectors of skew matrices (the inverse of :func:`hat`): (..., 3, 3) -> (..., 3)."""
    return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def rs_vectors(mesh: TetMesh, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RS vectors (W, S) of Euclidean modes, the RS map linearised at rest.

    U: (r, n, 3) displacement modes -> W (r, t, 3, 3) skew, S (r, t, 3, 3) symmetric,
    with W + S = grad U, so that d F~ / d x~_i = W_i + S_i at x~ = 0.
    """
    G = displacement_gradients(mesh, U)
    return skew_part(G), sym_part(G)


def rs_fields(W: np.ndarray, S: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-tet (omega, eps), each (t, 3, 3), of reduced RS coordinates q (r,)."""
    return np.einsum("r,rtij->tij", q, W), np.einsum("r,rtij->tij", q, S)


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Skew logarithms of rotations R (k, 3, 3) -> (k, 3, 3), angles in [0, pi].

    The angle is atan2(|sin|, cos); away from pi the axis comes from the skew part (sin theta axis); near pi,
    where that vanishes, from the largest column of R + R^T - (tr R - 1) I
    (= 2 (1 - cos theta) axis axis^T), whose sign the skew part then fixes.
    """
    c = np.clip(0.5 * (np.einsum("kii->k", R) - 1.0), -1.0, 1.0)
    s = vee(skew_part(R))  # sin(theta) * axis
    sn = np.linalg.norm(s, axis=1)
    theta = np.arctan2(sn, c)  # accurate at every angle, unlike arccos near 0 and pi
    axis = s / np.where(sn > 0, sn, 1.0)[:, None]
    near_pi = c < -0.9
    if near_pi.any():
        A = sym_part(R[near_pi]) - c[near_pi, None, None] * np.eye(3)  # (1 - cos) a a^T
        col = np.argmax(np.einsum("kii->ki", A), axis=1)
        a = A[np.arange(len(A)), :, col]
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        sign = np.sign(np.einsum("ki,ki->k", a, s[near_pi]))
        axis[near_pi] = a * np.where(sign == 0, 1.0, sign)[:, None]
    return hat(axis * theta[:, None])


def rs_from_gradient(Fd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact RS pair of displacement gradients (the inverse of eq. 1).

    Fd: (t, 3, 3) displacement gradients (F - I) -> omega, eps (t, 3, 3) with
    exp(omega) (eps + I) = I + Fd wherever I + Fd is not inverted: R = polar(I + Fd),
    omega = log R, eps = R^T (I + Fd) - I (symmetric: the stretch).
    """
    F = Fd + np.eye(3)
    R = rotation(F)
    return rotation_log(R), sym_part(np.swapaxes(R, 1, 2) @ F) - np.eye(3)
