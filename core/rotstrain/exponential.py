"""Batched matrix exponentials of the per-tet rotations, with their directional derivatives (seed 003, §5.2).

The seed replaces exp(omega) by a (p, q) rational function Q(omega)^-1 P(omega)
(Padé; q = 0 is the degree-p Taylor polynomial), because then the RS map and
its Jacobian are cheap and, in the polynomial case, precomputable.  Here one
function covers both, and optional scaling and squaring
(exp(w) = exp(w / 2^s)^(2^s)) turns the same rational function into an
accurate exponential for any angle: that is the "exact" evaluation the
approximations are checked against.  Derivatives are along given directions
(the RS vectors of the modes), so the Jacobian of the whole map comes out
of the same few batched 3x3 products.
"""

from __future__ import annotations

from math import factorial

import numpy as np

from .coordinates import vee

# Scaling and squaring brings every angle below this before the Padé (3, 2)
# step; its relative error there is ~ angle^6 / 7200 < 1e-13 at 0.02.
SQUARING_ANGLE = 0.02


def pade_coefficients(p: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients of the (p, q) Padé approximant of exp: P (p+1,) of w^j and Q (q+1,) of (-w)^j.

    exp(w) ~ Q(w)^-1 P(w) with P(w) = sum_j P_j w^j, Q(w) = sum_j Q_j (-w)^j (Moler & Van Loan).
    """
    P = [
        factorial(p + q - j) * factorial(p) / (factorial(p + q) * factorial(j) * factorial(p - j)) for j in range(p + 1)
    ]
    Q = [
        factorial(p + q - j) * factorial(q) / (factorial(p + q) * factorial(j) * factorial(q - j)) for j in range(q + 1)
    ]
    return np.array(P), np.array(Q)


def _polynomial(coeffs: np.ndarray, w: np.ndarray, dW: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """sum_j c_j w^j and its derivatives along dW: w (t, 3, 3), dW (k, t, 3, 3) -> (t, 3, 3), (k, t, 3, 3)."""
    value = np.broadcast_to(coeffs[0] * np.eye(3), w.shape).copy()
    deriv = None if dW is None else np.zeros(dW.shape)
    power, dpower = np.broadcast_to(np.eye(3), w.shape), None
    for j in range(1, len(coeffs)):
        if dW is not None:
            # d(w^j) = dW w^(j-1) + w d(w^(j-1))
            dpower = dW @ power if dpower is None else dW @ power + w @ dpower
            deriv += coeffs[j] * dpower
        power = w @ power
        value += coeffs[j] * power
    return value, deriv


def exp_rational(
    w: np.ndarray, dW: np.ndarray | None = None, p: int = 3, q: int = 2, squarings: int = 0
) -> tuple[np.ndarray, np.ndarray | None]:
    """(p, q) Padé approximant of exp(w) and its directional derivatives.

    w: (t, 3, 3); dW: (k, t, 3, 3) directions or None -> E (t, 3, 3), dE (k, t, 3, 3) or None.
    q = 0 is the Taylor polynomial of degree p.  ``squarings`` s evaluates the
    approximant at w / 2^s and squares s times (chain rule for dE).
    """
    scale = 0.5**squarings
    ws = w * scale
    dWs = None if dW is None else dW * scale
    cp, cq = pade_coefficients(p, q)
    P, dP = _polynomial(cp, ws, dWs)
    if q == 0:
        E, dE = P, dP
    else:
        Q, dQ = _polynomial(cq * (-1.0) ** np.arange(q + 1), ws, dWs)
        E = np.linalg.solve(Q, P)
        # d(Q^-1 P) = Q^-1 (dP - dQ Q^-1 P)
        dE = None if dP is None or dQ is None else np.linalg.solve(Q[None], dP - dQ @ E[None])
    for _ in range(squarings):
        if dE is not None:
            dE = dE @ E[None] + E[None] @ dE
        E = E @ E
    return E, dE


def squarings_for(w: np.ndarray, angle: float = SQUARING_ANGLE) -> int:
    """How many squarings bring every rotation angle of w (t, 3, 3) below ``angle``."""
    biggest = float(np.linalg.norm(vee(w), axis=-1).max(initial=0.0))
    return 0 if biggest <= angle else int(np.ceil(np.log2(biggest / angle)))


def exp_accurate(w: np.ndarray, dW: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """exp(w) and its derivatives for any angle, to about 1e-12: Padé (3, 2) with scaling and squaring."""
    return exp_rational(w, dW, 3, 2, squarings_for(w))


def exp_rodrigues(w: np.ndarray) -> np.ndarray:
    """exp of skew matrices w (t, 3, 3) by Rodrigues' formula (values only, the reference in tests)."""
    theta = np.linalg.norm(vee(w), axis=-1)[..., None, None]
    small = theta < 1e-8
    safe = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - theta**2 / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - theta**2 / 24.0, (1.0 - np.cos(safe)) / safe**2)
    return np.eye(3) + a * w + b * (w @ w)
