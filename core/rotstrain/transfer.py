"""The RS-to-Euclidean map x(x~) and its Jacobian (seed 003, eqs. 1 and 5, §5.2).

    F~_e(x~) = E(omega_e) (eps_e + I) - I,     x(x~) = Phi vec(F~(x~)),
    dx/dx~_i = Phi vec(dE(omega)[W_i] (eps + I) + E(omega) S_i)

E is exp or its Padé / Taylor approximant (``exponential.py``).  The
Jacobian is the whole nonlinearity of the method: the configuration-dependent
mass is J^T M_B J (``dynamics.py``).  Cost is O(r t) batched 3x3 products per
evaluation; ``polynomial.py`` precomputes the Taylor case into O(m r^4)
coefficients, independent of the mesh, as the seed does for its timings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import SimulationError
from .basis import ReducedFit
from .coordinates import rs_fields
from .exponential import exp_accurate, exp_rational

# name -> (p, q) of the rational approximant; "exact" is scaling and squaring to round-off.
EXPONENTIALS = {"pade": (3, 2), "taylor": (3, 0), "exact": None}


def rs_exponential(omega: np.ndarray, W: np.ndarray | None, method: str) -> tuple[np.ndarray, np.ndarray | None]:
    """E(omega) (t, 3, 3) and its derivatives along W (r, t, 3, 3) by ``method`` in :data:`EXPONENTIALS`."""
    if method not in EXPONENTIALS:
        raise SimulationError(f"unknown exponential {method!r}; use one of {', '.join(EXPONENTIALS)}")
    pq = EXPONENTIALS[method]
    return exp_accurate(omega, W) if pq is None else exp_rational(omega, W, *pq)


def rs_gradient(omega: np.ndarray, eps: np.ndarray, method: str = "exact") -> np.ndarray:
    """F~ = E(omega) (eps + I) - I: omega, eps (t, 3, 3) -> (t, 3, 3)."""
    E, _ = rs_exponential(omega, None, method)
    return E @ (eps + np.eye(3)) - np.eye(3)


class PositionMap(Protocol):
    """What the solvers need of an RS-to-Euclidean map (:class:`RSMap`, ``polynomial.PolynomialMap``)."""

    @property
    def r(self) -> int: ...

    @property
    def fit(self) -> ReducedFit: ...

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def positions(self, q: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class RSMap:
    """x(x~) and dx/dx~ through per-tet exponentials.

    W, S: (r, t, 3, 3) RS vectors; fit: the reduced Poisson fit onto B (m basis vectors).
    """

    W: np.ndarray
    S: np.ndarray
    fit: ReducedFit
    method: str = "pade"

    @property
    def r(self) -> int:
        return len(self.W)

    def gradients(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F~ (t, 3, 3) and dF~/dx~ (r, t, 3, 3) at RS coordinates q (r,)."""
        omega, eps = rs_fields(self.W, self.S, q)
        E, dE = rs_exponential(omega, self.W, self.method)
        assert dE is not None
        stretch = eps + np.eye(3)
        return E @ stretch - np.eye(3), dE @ stretch[None] + E[None] @ self.S

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (m,) and J = dx/dx~ (m, r) at q (r,)."""
        F, dF = self.gradients(q)
        return self.fit.phi @ F.ravel(), self.fit.phi @ dF.reshape(self.r, -1).T

    def positions(self, q: np.ndarray) -> np.ndarray:
        """x (m,) only."""
        omega, eps = rs_fields(self.W, self.S, q)
        return self.fit.fit(rs_gradient(omega, eps, self.method))
