"""Backward Euler in RS coordinates for a clamped object (seed 003, §4.2, eq. 10).

The step minimises the Euclidean incremental potential with x = x(x~):

    E(x~) = 1/(2h^2) ||x(x~) - x_n - h v_n||^2_M  +  c/(2h) ||x(x~) - x_n||^2_M
            + (1/2) x~^T K~ x~  -  f . x(x~)

M is the mass in span(B) (the identity: B is M-orthonormal), c an optional
mass-proportional damping rate (1/s), f the reduced external force.  The
kinetic term is kept *through* x(x~): its Hessian carries the
configuration-dependent mass J^T M J / h^2 (J = dx/dx~), re-evaluated at every
iterate; a constant "tangent mass" instead gives large error and drift (the
seed's Fig. 3).  Newton uses the seed's Hessian (J^T M J (1/h^2 + c/h) + K~,
the Gauss-Newton part: positive definite, so every direction descends) and a
line search (``newton.py``).

``tangent_mass=True`` is the ablation the seed argues against (its Fig. 3):
the kinetic and force terms see x linearised at the step's start,
x(x~_n) + J_n (x~ - x~_n), so the mass is frozen within each step.  It is
there to be measured against (``core/validation/rotstrain_bar.py``), not used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .newton import NewtonReport, Problem, minimize
from .transfer import PositionMap

# Newton stops once an iteration moves the object by less than this share of its size (RMS).
TOLERANCE = 1e-9


@dataclass
class RSState:
    """RS coordinates q (r,) and the Euclidean reduced coordinates x (m,) now and one step before."""

    q: np.ndarray
    x: np.ndarray
    x_prev: np.ndarray


class RSSimulator:
    """RS subspace dynamics of a clamped object.

    rsmap: x(x~) and its Jacobian; K: (r, r) RS stiffness; total_mass (kg) and
    size (m) make the stop scale-free; force: (m,) constant reduced force.
    """

    def __init__(
        self,
        rsmap: PositionMap,
        K: np.ndarray,
        time_step: float,
        total_mass: float,
        size: float,
        force: np.ndarray | None = None,
        damping: float = 0.0,
        tolerance: float = TOLERANCE,
        max_iterations: int = 50,
        tangent_mass: bool = False,
    ) -> None:
        self.map = rsmap
        self.tangent_mass = tangent_mass
        self.K = K
        self.h = time_step
        self.c = damping
        self.force = np.zeros(rsmap.fit.phi.shape[0]) if force is None else force
        self.sqrt_mass = float(np.sqrt(total_mass))
        self.tol = tolerance * size
        self.max_iterations = max_iterations

    def rest_state(self) -> RSState:
        m = self.map.fit.phi.shape[0]
        return RSState(np.zeros(self.map.r), np.zeros(m), np.zeros(m))

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """The configuration-dependent mass M~(x~) = J^T M J (r, r) (M = I on the M-orthonormal basis)."""
        _, J = self.map.evaluate(q)
        return J.T @ J

    def kinetic_energy(self, state: RSState) -> float:
        """(1/2) |v|^2_M with the backward-difference velocity (J)."""
        v = (state.x - state.x_prev) / self.h
        return 0.5 * float(v @ v)

    def potential_energy(self, state: RSState) -> float:
        """(1/2) x~^T K~ x~ - f . x (J)."""
        return 0.5 * float(state.q @ self.K @ state.q) - float(self.force @ state.x)

    def step(self, state: RSState) -> tuple[RSState, NewtonReport]:
        """One time step from ``state``: the new state and Newton's report."""
        h, c = self.h, self.c
        a = 1.0 / h**2 + c / h
        # Both quadratic terms in x combine into one: (a/2) ||x - z||^2 + const.
        y = 2.0 * state.x - state.x_prev
        z = (y / h**2 + c / h * state.x) / a
        # x(q) is needed by the energy, the derivatives and the distance at the same iterates: evaluate each once.
        cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

        def exact(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            key = q.tobytes()
            if key not in cache:
                if len(cache) > 4:
                    cache.clear()
                cache[key] = self.map.evaluate(q)
            return cache[key]

        if self.tangent_mass:
            x0, J0 = exact(state.q)
            q0 = state.q.copy()

            def evaluate(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                return x0 + J0 @ (q - q0), J0
        else:
            evaluate = exact

        def energy(q: np.ndarray) -> float:
            x = evaluate(q)[0]
            d = x - z
            return 0.5 * a * float(d @ d) + 0.5 * float(q @ self.K @ q) - float(self.force @ x)

        def derivatives(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            x, J = evaluate(q)
            g = J.T @ (a * (x - z) - self.force) + self.K @ q
            return g, a * (J.T @ J) + self.K

        def distance(q1: np.ndarray, q0: np.ndarray) -> float:
            # x is M-orthonormal coordinates: |dx| is the mass-weighted norm of the displacement change.
            return float(np.linalg.norm(evaluate(q1)[0] - evaluate(q0)[0])) / self.sqrt_mass

        problem = Problem(energy=energy, derivatives=derivatives, move=lambda q, d: q + d, distance=distance)
        q, report = minimize(problem, state.q.copy(), self.tol, self.max_iterations)
        return RSState(q=q, x=exact(q)[0], x_prev=state.x), report
