"""The Taylor (3, 0) RS map precomputed as a quartic polynomial in x~ (seed 003, §5.2 and Table 1's beam).

With exp(w) ~ I + w + w^2/2 + w^3/6 and omega, eps linear in x~, F~ and hence
x = Phi vec(F~) are polynomials of degree 4 in x~:

    F~ = (w + e) + (w e + w^2/2) + (w^2 e/2 + w^3/6) + w^3 e/6.

Contracting each degree with Phi once leaves coefficient tensors C_d of shape
(m, r, ..., r) (d copies of r), so an evaluation of x and J costs O(m r^4),
independent of the mesh: what makes the seed's 0.45 ms per step.  The tensors
are symmetrised, so J = sum_d d C_d x~^(d-1).
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .basis import ReducedFit


def _symmetrize(C: np.ndarray) -> np.ndarray:
    """Average over all orderings of the trailing r-axes: (m, r, ..., r)."""
    d = C.ndim - 1
    perms = list(permutations(range(1, d + 1)))
    out = np.zeros_like(C)
    for p in perms:  # at most 24 orderings (degree 4), each one whole-array transpose
        out += np.transpose(C, (0, *p))
    return out / len(perms)


class PolynomialMap:
    """x(x~) and dx/dx~ of the Taylor (3, 0) RS map from precomputed coefficients (same interface as RSMap).

    W, S: (r, t, 3, 3) RS vectors; fit: the reduced Poisson fit (m basis vectors).
    """

    def __init__(self, W: np.ndarray, S: np.ndarray, fit: ReducedFit) -> None:
        r, t = W.shape[:2]
        m = fit.phi.shape[0]
        self.fit = fit
        self.r = r
        phi = fit.phi.reshape(m, t, 3, 3)
        # PW[m, i, t, c, b] = sum_a phi[m, t, a, b] W_i[t, a, c]: phi contracted with a leading W_i.
        PW = np.einsum("mtab,itac->mitcb", phi, W)
        Y = 0.5 * S + W / 6.0  # degree 3: W_i W_j (S_k / 2 + W_k / 6)
        C1 = np.einsum("mtab,itab->mi", phi, W + S)
        C2 = np.einsum("mitcb,jtcb->mij", PW, S + 0.5 * W, optimize=True)
        WY = np.einsum("jtcd,ktdb->jktcb", W, Y)
        C3 = np.einsum("mitcb,jktcb->mijk", PW, WY, optimize=True)
        WWS = np.einsum("jtcd,ktde,ltef->jkltcf", W, W, S) / 6.0
        C4 = np.einsum("mitcb,jkltcb->mijkl", PW, WWS, optimize=True)
        self.C1 = C1
        self.C2 = _symmetrize(C2).reshape(m * r, r)
        self.C3 = _symmetrize(C3).reshape(m * r * r, r)
        self.C4 = _symmetrize(C4).reshape(m * r**3, r)
        self.m = m

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (m,) and J = dx/dx~ (m, r) at q (r,)."""
        m, r = self.m, self.r
        # Contract the last axis with q repeatedly; matrix-vector products keep the numpy calls few.
        c4 = (self.C4 @ q).reshape(m * r * r, r) @ q  # (m r r,)
        c4 = c4.reshape(m * r, r) @ q  # (m r,)
        c3 = (self.C3 @ q).reshape(m * r, r) @ q
        c2 = self.C2 @ q
        J = self.C1 + (2.0 * c2 + 3.0 * c3 + 4.0 * c4).reshape(m, r)
        x = self.C1 @ q + (c2 + c3 + c4).reshape(m, r) @ q
        return x, J

    def positions(self, q: np.ndarray) -> np.ndarray:
        """x (m,) only."""
        return self.evaluate(q)[0]
