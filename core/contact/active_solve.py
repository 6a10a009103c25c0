"""The contact's global step on one active set: minimise 1/2 (z - z0)^T (I3 (x) H) (z - z0) + 1/2 |K z - c|^2.

K = W^1/2 J_a and c = W^1/2 b_a are the active rows (a of them, J_a (a, 3q))
scaled by the square roots of their weights, H (q, q) the step's SPD
matrix, shared by the three coordinates.  The minimiser is

    z = z0 + Hb^-1 K^T (I + K Hb^-1 K^T)^-1 (c - K z0),      Hb = I3 (x) H

(its gradient Hb (z - z0) + K^T (K z - c) vanishes: K z - c is minus the
bracketed solve).  With few active rows (a pressed sample or ten, and their
friction rows) that is a solve with H's own q x q factor and an a x a one,
instead of a fresh 3q x 3q factor of Hb + J_a^T W J_a per active set; with
many (a > 2q) the whole factor is the cheaper, and is used.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.linalg as sla


class ContactRows(Protocol):
    """What the solve reads of a set of contact rows (:class:`.penalty.ContactRows`, which builds this
    solve: named here by what it offers, so the two modules do not import each other)."""

    J: np.ndarray  # (a, 3q)
    b: np.ndarray  # (a,)
    w: np.ndarray  # (a,)

    def hessian_of(self, on: np.ndarray) -> np.ndarray: ...


# Up to this many active rows per column of H the low-rank solve is the cheaper (measured at q = 64, one
# BLAS thread: setting up 0.13 ms against 0.22 ms for the whole factor at a = q, even at a = 2q, and each
# solve cheaper up to there).
LOW_RANK = 2.0


class ActiveSolve:
    """The minimiser (module doc) for H (q, q) and the rows ``on`` (a,) of ``rows`` (a ContactRows: J (a, 3q),
    weights w > 0, targets b), those that act; their J^T W J comes from ``rows`` (cached there)."""

    def __init__(self, H: np.ndarray, rows: ContactRows, on: np.ndarray) -> None:
        q, a = H.shape[0], int(np.count_nonzero(on))
        self.H = H
        self.empty, self.low_rank = a == 0, a <= LOW_RANK * q
        if self.empty:
            return
        if self.low_rank:
            s = np.sqrt(rows.w[on])
            self.K = rows.J[on]
            self.K *= s[:, None]
            self.c = s * rows.b[on]
            # Hb^-1 K^T, as rows (a, 3q): each row's three q-blocks solved with H.
            self.HK = sla.cho_solve(sla.cho_factor(H), self.K.reshape(-1, q).T).T.reshape(a, -1)
            # (I + K Hb^-1 K^T)^-1 folded into Hb^-1 K^T once per set: each solve is then two small products.
            S = sla.cho_factor(np.eye(a) + self.K @ self.HK.T)
            self.M = sla.cho_solve(S, self.HK).T  # (3q, a)
        else:
            A = rows.hessian_of(on).copy()
            for i in range(3):  # I3 (x) H: three diagonal blocks
                A[i * q : (i + 1) * q, i * q : (i + 1) * q] += H
            self.full = sla.cho_factor(A)
            self.rhs = (np.where(on, rows.w * rows.b, 0.0)) @ rows.J  # J_a^T W b_a without copying J_a

    def solve(self, z0: np.ndarray) -> np.ndarray:
        """The minimiser (3q,) for z0 (3, q)."""
        if self.empty:
            return z0.ravel().copy()
        if self.low_rank:
            return z0.ravel() + self.M @ (self.c - self.K @ z0.ravel())
        return sla.cho_solve(self.full, (z0 @ self.H).ravel() + self.rhs, check_finite=False)
