"""RS maps precomputed as polynomials in x~ (seed 003, §5.2): Taylor (3, 0), Table 1's beam, and Padé (3, 2).

With exp(w) ~ I + w + w^2/2 + w^3/6 and omega, eps linear in x~, F~ and hence
x = Phi vec(F~) are polynomials of degree 4 in x~:

    F~ = (w + e) + (w e + w^2/2) + (w^2 e/2 + w^3/6) + w^3 e/6.

Contracting each degree with Phi once leaves coefficient tensors C_d of shape
(m, r, ..., r) (d copies of r), so an evaluation of x and J costs O(m r^4),
independent of the mesh: what makes the seed's 0.45 ms per step.  The tensors
are symmetrised, so J = sum_d d C_d x~^(d-1).  The Padé (3, 2) map of the
seed solves a small m x m system whose two sides are such polynomials.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from ..geometry.tetmesh import TetMesh
from .basis import ReducedFit
from .coordinates import displacement_gradients
from .exponential import pade_coefficients


def _symmetrize(C: np.ndarray) -> np.ndarray:
    """Average over all orderings of the trailing r-axes: (m, r, ..., r)."""
    d = C.ndim - 1
    perms = list(permutations(range(1, d + 1)))
    out = np.zeros_like(C)
    for p in perms:  # at most 24 orderings (degree 4), each one whole-array transpose
        out += np.transpose(C, (0, *p))
    return out / len(perms)


class Quartic:
    """sum_e psi_e : [ (w + e) + (a2 w^2 + b2 w e) + (a3 w^3 + b3 w^2 e) + b4 w^3 e ]_e as a polynomial in x~.

    psi: (m, t, 3, 3) test fields; W, S: (r, t, 3, 3) RS vectors (w = sum x~_i W_i, e = sum x~_i S_i).
    Stored as symmetrised coefficient tensors C_1 .. C_4 of shape (m, r, ..., r).
    """

    def __init__(
        self, psi: np.ndarray, W: np.ndarray, S: np.ndarray, a2: float, b2: float, a3: float, b3: float, b4: float
    ) -> None:
        m, r = len(psi), len(W)
        # PW[m, i, t, c, b] = sum_a psi[m, t, a, b] W_i[t, a, c]: psi contracted with a leading W_i.
        PW = np.einsum("mtab,itac->mitcb", psi, W)
        self.C1 = np.einsum("mtab,itab->mi", psi, W + S)
        C2 = np.einsum("mitcb,jtcb->mij", PW, b2 * S + a2 * W, optimize=True)
        WY = np.einsum("jtcd,ktdb->jktcb", W, b3 * S + a3 * W)
        C3 = np.einsum("mitcb,jktcb->mijk", PW, WY, optimize=True)
        WWS = b4 * np.einsum("jtcd,ktde,ltef->jkltcf", W, W, S)
        C4 = np.einsum("mitcb,jkltcb->mijkl", PW, WWS, optimize=True)
        self.C2 = _symmetrize(C2).reshape(m * r, r)
        self.C3 = _symmetrize(C3).reshape(m * r * r, r)
        self.C4 = _symmetrize(C4).reshape(m * r**3, r)
        self.m, self.r = m, r

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Value (m,) and derivative (m, r) at q (r,)."""
        m, r = self.m, self.r
        # Contract the last axis with q repeatedly; matrix-vector products keep the numpy calls few.
        c4 = (self.C4 @ q).reshape(m * r * r, r) @ q  # (m r r,)
        c4 = c4.reshape(m * r, r) @ q  # (m r,)
        c3 = (self.C3 @ q).reshape(m * r, r) @ q
        c2 = self.C2 @ q
        J = self.C1 + (2.0 * c2 + 3.0 * c3 + 4.0 * c4).reshape(m, r)
        return self.C1 @ q + (c2 + c3 + c4).reshape(m, r) @ q, J


class PolynomialMap:
    """x(x~) and dx/dx~ of the Taylor (3, 0) RS map from precomputed coefficients (same interface as RSMap).

    W, S: (r, t, 3, 3) RS vectors; fit: the reduced Poisson fit (m basis vectors).
    """

    def __init__(self, W: np.ndarray, S: np.ndarray, fit: ReducedFit) -> None:
        self.fit = fit
        self.r = len(W)
        phi = fit.phi.reshape(len(fit.phi), W.shape[1], 3, 3)
        # exp ~ I + w + w^2/2 + w^3/6, times (e + I), minus I
        self.quartic = Quartic(phi, W, S, a2=0.5, b2=1.0, a3=1.0 / 6.0, b3=0.5, b4=1.0 / 6.0)

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (m,) and J = dx/dx~ (m, r) at q (r,)."""
        return self.quartic.evaluate(q)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """x (m,) only."""
        return self.evaluate(q)[0]


class PadePolynomialMap:
    """The seed's precomputed Padé (3, 2) map x_pq (§5.2): Q_bar(x~) x = P_bar(x~), both polynomials in x~.

    exp(w) ~ Q(w)^-1 P(w); multiplying the fit's residual by Q per tet and testing with grad B (not Q grad B,
    which would raise the degree) gives

        Q_bar = sum_e V_e grad B^T Q(w_e) grad B          (degree 2: Q(w) = I - 2/5 w + 1/20 w^2)
        P_bar = sum_e V_e grad B : [P(w_e)(e_e + I) - Q(w_e)]   (degree 4)
        J = Q_bar^-1 (dP_bar - dQ_bar : x).

    Not the same x as per-tet Padé (the metric change moves it at O(w^2) times the fit's residual), but
    a rational, not polynomial, approximation of the rotations at a mesh-independent cost.
    volumes: (t,) tet volumes; gradB: (m, t, 3, 3) the basis' displacement gradients (``build`` from a mesh).
    """

    def __init__(self, W: np.ndarray, S: np.ndarray, fit: ReducedFit, volumes: np.ndarray, gradB: np.ndarray) -> None:
        self.fit = fit
        self.r = len(W)
        m = len(gradB)
        VG = gradB * volumes[None, :, None, None]  # (m, t, 3, 3)
        cp, cq = pade_coefficients(3, 2)
        # P(w)(e + I) - Q(w): w + e, (cp2 - cq2) w^2 + cp1 w e, cp3 w^3 + cp2 w^2 e, cp3 w^3 e
        self.P = Quartic(VG, W, S, a2=cp[2] - cq[2], b2=cp[1], a3=cp[3], b3=cp[2], b4=cp[3])
        VGW = np.einsum("ktab,itac->kitcb", VG, W)  # VG_k contracted with a leading W_i
        self.Q0 = np.einsum("ktab,ltab->kl", VG, gradB)
        self.Q1 = -cq[1] * np.einsum("kitcb,ltcb->kli", VGW, gradB, optimize=True)
        WG = np.einsum("jtcd,ltdb->jltcb", W, gradB)
        Q2 = cq[2] * np.einsum("kitcb,jltcb->klij", VGW, WG, optimize=True)
        self.Q2 = 0.5 * (Q2 + np.swapaxes(Q2, 2, 3))
        self.m = m

    @classmethod
    def build(cls, W: np.ndarray, S: np.ndarray, fit: ReducedFit, mesh: TetMesh) -> PadePolynomialMap:
        return cls(W, S, fit, mesh.volumes, displacement_gradients(mesh, fit.B))

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (m,) and J = dx/dx~ (m, r) at q (r,)."""
        Pq, dP = self.P.evaluate(q)
        Q2q = self.Q2 @ q  # (m, m, r)
        Qbar = self.Q0 + self.Q1 @ q + Q2q @ q
        # Q_bar is small (m x m) and needed against two right-hand sides, the second depending on the first.
        Qinv = np.linalg.inv(Qbar)
        x = Qinv @ Pq
        # d(Q_bar)/dq_i x: (m, r)
        dQx = np.einsum("kli,l->ki", self.Q1 + 2.0 * Q2q, x)
        return x, Qinv @ (dP - dQx)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """x (m,) only."""
        return self.evaluate(q)[0]
