"""RS dynamics in a floating frame, for free-flying objects (seed 003, §4.1 and Appendix B).

World positions are p = R (r + B x(x~)) + t (eq. 8), with r the rest shape
about its centre of mass, R = exp(Theta) the frame's rotation and t its
translation; B holds no rigid motion (``basis.extended_basis(free=True)``),
so the frame and the RS coordinates never describe the same motion.

The step minimises the world-space incremental potential over (x~, t, Theta),

    E = 1/(2h^2) ||p - p_n - h v_n||^2_M + c/(2h) ||x(x~) - x_n||^2_M + (1/2) x~^T K~ x~ - f . p,

so the off-diagonal mass blocks between deformation and frame, the
centrifugal and Coriolis forces of Appendix B, are all in the kinetic term;
damping acts on the deformation only, so it never brakes the flight.
Rotations are updated multiplicatively, R <- exp(dTheta) R, so there is no
parametrisation singularity.  The kinetic term is evaluated on the vertices
(O(n r) per iterate) rather than through the seed's precomputed Xi tensors:
the same quantity, simpler, and fast enough on the meshes this serves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coordinates import hat
from .exponential import exp_rodrigues
from .newton import NewtonReport, Problem, minimize
from .solver import TOLERANCE
from .transfer import PositionMap


@dataclass
class FrameState:
    """RS coordinates q (r,), reduced positions x (m,), the frame (R (3, 3), t (3,)), world positions now and before."""

    q: np.ndarray
    x: np.ndarray
    R: np.ndarray
    t: np.ndarray
    p: np.ndarray
    p_prev: np.ndarray


class FloatingRSSimulator:
    """RS subspace dynamics of a free object.

    rest: (n, 3) rest positions; masses: (n,); acceleration: (3,) uniform
    external acceleration (gravity) or None.
    """

    def __init__(
        self,
        rsmap: PositionMap,
        K: np.ndarray,
        rest: np.ndarray,
        masses: np.ndarray,
        time_step: float,
        acceleration: np.ndarray | None = None,
        damping: float = 0.0,
        tolerance: float = TOLERANCE,
        max_iterations: int = 50,
    ) -> None:
        self.map = rsmap
        self.K = K
        self.m = masses
        self.center = masses @ rest / masses.sum()
        self.r0 = rest - self.center
        self.B = rsmap.fit.B
        self.h = time_step
        self.c = damping
        self.g = np.zeros(3) if acceleration is None else np.asarray(acceleration, dtype=np.float64)
        self.sqrt_mass = float(np.sqrt(masses.sum()))
        extent = rest.max(axis=0) - rest.min(axis=0)
        self.tol = tolerance * float(np.linalg.norm(extent))
        self.max_iterations = max_iterations

    def state(self, q: np.ndarray, R: np.ndarray, t: np.ndarray, velocity: np.ndarray | None = None) -> FrameState:
        """A state at (q, R, t) with vertex velocities ``velocity`` (n, 3) (zero if None)."""
        x = self.map.positions(q)
        p = self.world(x, R, t)
        v = np.zeros_like(p) if velocity is None else velocity
        return FrameState(q=q, x=x, R=R, t=t, p=p, p_prev=p - self.h * v)

    def rest_state(self) -> FrameState:
        return self.state(np.zeros(self.map.r), np.eye(3), self.center.copy())

    def world(self, x: np.ndarray, R: np.ndarray, t: np.ndarray) -> np.ndarray:
        """p = R (r + B x) + t: (n, 3)."""
        return (self.r0 + self.map.fit.displacements(x)) @ R.T + t

    def momentum(self, state: FrameState) -> tuple[np.ndarray, np.ndarray]:
        """Linear (3,) and angular (3,, about the origin) momentum of the backward-difference velocity."""
        v = (state.p - state.p_prev) / self.h
        return self.m @ v, np.einsum("a,ai->i", self.m, np.cross(state.p, v))

    def step(self, state: FrameState) -> tuple[FrameState, NewtonReport]:
        """One time step: the new state and Newton's report."""
        h, c, m, r = self.h, self.c, self.m, self.map.r
        y = 2.0 * state.p - state.p_prev
        force = np.outer(m, self.g)

        def energy(s: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
            q, R, t = s
            x = self.map.positions(q)
            d = self.world(x, R, t) - y
            dx = x - state.x
            return (
                0.5 / h**2 * float(np.einsum("a,ai,ai->", m, d, d))
                + 0.5 * c / h * float(dx @ dx)
                + 0.5 * float(q @ self.K @ q)
                - float(np.sum(force * (d + y)))
            )

        def derivatives(s: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            q, R, t = s
            x, J = self.map.evaluate(q)
            body = self.r0 + self.map.fit.displacements(x)
            p = body @ R.T + t
            # dp/d(q, t, Theta) per vertex: R B J, I, and -hat(R s) for R <- exp(dTheta) R.
            Jp = np.concatenate(
                [
                    np.einsum("ij,maj,mk->aik", R, self.B, J),
                    np.broadcast_to(np.eye(3), (len(p), 3, 3)),
                    -hat(body @ R.T),
                ],
                axis=2,
            )
            resid = m[:, None] * (p - y) / h**2 - force
            g = np.einsum("ajk,aj->k", Jp, resid)
            H = np.einsum("ajk,a,ajl->kl", Jp, m, Jp) / h**2
            g[:r] += c / h * (J.T @ (x - state.x)) + self.K @ q
            H[:r, :r] += c / h * (J.T @ J) + self.K
            return g, H

        def move(s: tuple[np.ndarray, np.ndarray, np.ndarray], d: np.ndarray):
            q, R, t = s
            return q + d[:r], exp_rodrigues(hat(d[r + 3 :])[None])[0] @ R, t + d[r : r + 3]

        def distance(s1, s0) -> float:
            d = self.world(self.map.positions(s1[0]), s1[1], s1[2]) - self.world(
                self.map.positions(s0[0]), s0[1], s0[2]
            )
            return float(np.sqrt(np.einsum("a,ai,ai->", m, d, d))) / self.sqrt_mass

        problem = Problem(energy=energy, derivatives=derivatives, move=move, distance=distance)
        (q, R, t), report = minimize(problem, (state.q.copy(), state.R, state.t), self.tol, self.max_iterations)
        x = self.map.positions(q)
        return FrameState(q=q, x=x, R=R, t=t, p=self.world(x, R, t), p_prev=state.p), report
