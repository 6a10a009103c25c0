"""Batched closest rotations of 3x3 matrices: the local step of the reduced solver.

For F = U S V^T the closest rotation (det +1) in the Frobenius norm is
R = U diag(1, 1, det(U V^T)) V^T: the polar factor, with the axis of the
smallest singular value flipped when det F < 0.  The solver needs it for
~100 clusters several times per time step, so what costs is the number of
numpy calls, not arithmetic.  ``rotation_rows`` therefore uses a closed form
that is the same few whole-array operations for every matrix, instead of an
iteration on matrices.

Closed form.  Write F = R U with U symmetric (the signed stretch: eigenvalues
s1, s2, sgn(det F) s3 for singular values s1 >= s2 >= s3).  Its invariants
are I1 = tr U, I2 = (I1^2 - tr C) / 2 with C = F^T F, and I3 = det F.
Cayley-Hamilton for U, multiplied by R, with F = R U, F C = R U^3 and
cof F = I3 R U^-1, gives

    R = (F C - (I1^2 - I2) F - I1 cof F) / (I3 - I1 I2).

I1 is the largest eigenvalue of Horn's (1987) traceless 4x4 quaternion
matrix of F, i.e. the largest root of its characteristic polynomial

    p(t) = t^4 - 2 tr(C) t^2 - 8 det(F) t + tr(C)^2 - 4 |cof F|^2.

Newton's method from an upper bound of I1 (``_largest_quaternion_eigenvalue``) converges
monotonically (p is increasing and convex right of its largest root) and
quadratically; for the mildly stretched clusters of a simulation three steps
reach round-off.  The denominator I3 - I1 I2 = -(s1 + s2)(s1 +- s3)(s2 +- s3)
is -1/8 of the product of the quaternion matrix's eigenvalue gaps: it vanishes
only where the closest rotation itself is ill-defined (a cluster squashed
flat, or inverted with two equal singular values).  Those matrices, and any
whose root did not converge, go through the SVD, so the result is always the
determinant-corrected polar factor, and rotation(Q F) = Q rotation(F).
"""

from __future__ import annotations

import numpy as np

# cof[i, j] = X[i1, j1] X[i2, j2] - X[i1, j2] X[i2, j1] on row-major flat indices (i1, i2 = i + 1, i + 2 mod 3).
_NEXT = [((i + 1) % 3, (i + 2) % 3) for i in range(3)]
_COFACTOR_GATHER = np.array(
    [3 * _NEXT[i][a] + _NEXT[j][b] for a, b in ((0, 0), (1, 1), (0, 1), (1, 0)) for i in range(3) for j in range(3)]
)

# Newton steps on the quartic taken before the first convergence test, and the cap.
NEWTON_MIN_STEPS = 3
NEWTON_MAX_STEPS = 40
# Quadratic convergence: once a step is below this share of sqrt(3 tr C) the
# next error is about its square, below double-precision round-off.
NEWTON_STEP_TOL = 1e-8
# |I3 - I1 I2| / tr(C)^(3/2) below this goes through the SVD.  The closed
# form's error grows like round-off / ratio^2 (the root's sensitivity times
# the division); at 0.03 it stays below 1e-13.  A rotating, mildly stretched
# cluster has ratio ~ 8 / 3^1.5 = 1.5.
GAP_TOL = 0.03


def rotation_svd(F: np.ndarray) -> np.ndarray:
    """Closest rotations (k, 3, 3) to matrices F (k, 3, 3), via SVD (the reference)."""
    U, _, Vt = np.linalg.svd(F)
    d = np.sign(np.linalg.det(U @ Vt))
    d[d == 0] = 1.0
    U[:, :, 2] *= d[:, None]
    return U @ Vt


def cofactors(X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Cofactor matrices cof X = det(X) X^-T, (9, k), of matrices stored as rows X (9, k) (row-major entries)."""
    G = X[_COFACTOR_GATHER].reshape(4, 9, -1)
    cof = np.multiply(G[0], G[1], out=out)
    cof -= np.multiply(G[2], G[3], out=G[2])
    return cof


def _largest_quaternion_eigenvalue(
    trC: np.ndarray, det: np.ndarray, cof2: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    """I1 (k,): the largest root of p(t) = (t^2 - trC)^2 - 8 det t - 4 cof2; and None, or the unconverged (k,).

    trC = |F|^2, det = det F and cof2 = |cof F|^2, all (k,).  The start
    sqrt(trC + 2 sqrt(3 cof2)) bounds the nuclear norm s1 + s2 + s3 >= I1
    (Cauchy-Schwarz on the pair products s_i s_j, whose squares sum to cof2):
    a third of the gap of sqrt(3 trC), a Newton step fewer.
    """
    t = np.sqrt(trC + 2.0 * np.sqrt(3.0 * cof2))
    tol = NEWTON_STEP_TOL * t
    tol_all = tol.min()  # one scalar test per step; the per-matrix one only when it fails
    c1 = -8.0 * det
    c0 = -4.0 * cof2
    for it in range(NEWTON_MAX_STEPS):
        u = t * t
        u -= trC
        p = u * u
        p += c1 * t
        p += c0
        u *= t
        u *= 4.0
        u += c1  # p'(t) = 4 t (t^2 - trC) - 8 det
        p /= u
        t -= p
        # A NaN step (a singular F) compares False: it counts as not converged.
        if it + 1 >= NEWTON_MIN_STEPS and p.max() <= tol_all:
            return t, None
    return t, ~(p <= tol)


def rotation_rows(X: np.ndarray) -> np.ndarray:
    """Closest rotations (9, k) to matrices stored as rows X (9, k): X[3 i + j, c] = F_c[i, j].

    Row storage keeps every entry of all k matrices contiguous, so each
    arithmetic step below is one numpy call on k numbers.
    """
    k = X.shape[1]
    # R = sum_j w_j T_j over T = (F C, F, cof F): one contraction instead of three broadcasts.
    terms = np.empty((3, 9, k))
    terms[1] = X
    cofactors(X, out=terms[2])
    dots = np.einsum("aik,bik->abk", terms[1:], terms[1:])  # |F|^2, 3 det F (every row's expansion), |cof F|^2
    trC, cof2 = dots[0, 0], dots[1, 1]
    det = dots[0, 1] / 3.0
    I1, unconverged = _largest_quaternion_eigenvalue(trC, det, cof2)
    Y = X.reshape(3, 3, k)
    np.einsum("ikc,lkc,ljc->ijc", Y, Y, Y, out=terms[0].reshape(3, 3, k))  # F F^T F = F C
    w = np.empty((3, k))
    w[0] = 1.0
    np.multiply(I1, I1, out=w[1])  # I1^2
    I2 = w[1] - trC
    I2 *= 0.5
    w[1] = I2 - w[1]
    np.negative(I1, out=w[2])
    I2 *= I1
    denom = det - I2  # I3 - I1 I2 <= 0
    w /= denom
    R = np.einsum("jik,jk->ik", terms, w)
    # Every |denom| / trC^1.5 above GAP_TOL when the largest |denom| is (NaN compares False).
    if not (unconverged is None and denom.max() < -GAP_TOL * trC.max() ** 1.5):
        bad = ~(denom < -GAP_TOL * trC**1.5)
        if unconverged is not None:
            bad |= unconverged
        if bad.any():
            R[:, bad] = rotation_svd(X[:, bad].T.reshape(-1, 3, 3)).reshape(-1, 9).T
    return R


def rotation(F: np.ndarray) -> np.ndarray:
    """Closest rotations (k, 3, 3) to matrices F (k, 3, 3)."""
    k = len(F)
    R = rotation_rows(np.ascontiguousarray(np.reshape(F, (k, 9)).T))
    return np.ascontiguousarray(R.T).reshape(k, 3, 3)
