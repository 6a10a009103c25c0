"""Rotation-strain coordinates as a drive of the frame loop: an object's own motion carries an RS body (issue 27).

The rig is one affine map per frame, A = [L | t] (the object's transform:
``core.dynamics.drive.Drive``'s sample, 12 numbers row-major), which is the
floating frame of seed 003 §4.1 *prescribed* instead of integrated: world
positions are

    p(x~) = L (X + B x(x~)) + t,

with X the rest shape, B the free extended basis (rigid motions projected
out, ``basis.extended_basis(free=True)``) and x(x~) the RS map.  The object's
motion is the animator's, exactly; B x is the secondary motion, M-orthogonal
to the rest shape's rigid motions, so the flesh lags behind while its mass
centre and mean rotation stay on the object's (to first order).

What deforms it.  The frame carries the whole body, as a uniform body force
would: a translation, however sudden, strains nothing (a uniform
acceleration has no component along B), and only the frame's rotation does,
through the centrifugal and Euler forces.  Measured on a 2 m box: a quarter
turn at one turn a second jiggles it by 0.8 % of its size, a 2 m slide in a
quarter second by 0.00 %.  Skinning eigenmodes hold the core to the object
and let the skin lag instead, so they answer to both (7 % and 7.6 %).

A step minimises the world-space incremental potential of ``frame.py`` over
x~ alone (the frame is given):

    E = 1/(2h^2) ||p(x~) - 2 p_n + p_(n-1)||^2_M + c/(2h) ||x(x~) - x_n||^2 + (kappa/2) x~^T K~ x~

so the frame's acceleration, its centrifugal and Euler forces all reach the
flesh through the kinetic term, with the configuration-dependent mass kept;
damping acts on the deformation only.  Newton with a line search
(``newton.py``) and the Gauss-Newton Hessian J^T (B^T L^T M L B) J / h^2 +
(c/h) J^T J + kappa K~, positive definite.

The stiffness controls.  In frequency mode the frame loop calibrates kappa
on the skinning model's slowest frequency; the RS body's slowest motion is
another one (a free mode, not a rig-complementary one), so the drive is
given the ratio (omega_skin / omega_rs)^2 to scale kappa by
(``core.pipeline.drives``): its slowest motion then wobbles at the requested
frequency.  In physical mode kappa is the material's ratio to the base
material both models were built with, and applies as is (ratio 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..dynamics.simulator import StepReport
from ..errors import SimulationError
from ..geometry.embedding import Embedding, interpolate
from ..geometry.size import character_size
from ..geometry.tetmesh import TetMesh
from ..model.fem import lumped_mass
from ..model.materials import Material
from .basis import ReducedFit, extended_basis, linear_modes
from .coordinates import rs_vectors
from .energy import rs_stiffness
from .newton import Problem, minimize
from .poisson import PoissonReconstruction
from .polynomial import PadePolynomialMap, PolynomialMap
from .solver import TOLERANCE
from .transfer import PositionMap, RSMap


@dataclass(frozen=True)
class RSDriveState:
    """RS coordinates q (r,), reduced positions x (m,) now and one step before, the frame samples now and before
    (12,), and the step count.  World positions are never stored: L (X + B x) + t rebuilds them (O(n m))."""

    q: np.ndarray
    x: np.ndarray
    x_prev: np.ndarray
    a: np.ndarray
    a_prev: np.ndarray
    step: int = 0

    @property
    def z(self) -> np.ndarray:
        """The reduced coordinates the frame loop sizes its state cache by: x (m, 1)."""
        return self.x[:, None]


@dataclass(frozen=True)
class RSBody:
    """The RS model of a tet mesh: the map x(x~), K~ (r, r), the mesh (rest X (n, 3)), masses (n,), and its
    slowest angular frequency (rad/s) at rest."""

    map: PositionMap
    K: np.ndarray
    mesh: TetMesh
    masses: np.ndarray
    omega0: float

    @classmethod
    def build(cls, mesh: TetMesh, material: Material, modes: int, method: str = "taylor") -> RSBody:
        """``modes`` free linear modes of the mesh, their RS vectors and the extended basis without rigid
        motions.  method: "taylor" or "pade", the seed's Taylor (3, 0) or Padé (3, 2) map precomputed as
        polynomials in x~ (``polynomial.py``: a step's cost is then independent of the mesh, the
        precomputation grows as tets x modes^5), or "exact" (per-tet exponentials by scaling and squaring,
        ``transfer.RSMap``: the reference, ~100x slower per step).  In the moving frame the flesh's own
        rotations are small, where Taylor's error (angle^4 / 24) is: the seed's choice for its timings."""
        masses = lumped_mass(mesh, material.density)
        U, _ = linear_modes(mesh, material, masses, modes, None)
        W, S = rs_vectors(mesh, U)
        B = extended_basis(PoissonReconstruction(mesh, None, masses), W, S, masses, free=True)
        fit = ReducedFit.build(mesh, B)
        rsmap: PositionMap
        if method == "pade":
            rsmap = PadePolynomialMap.build(W, S, fit, mesh)
        elif method == "taylor":
            rsmap = PolynomialMap(W, S, fit)
        else:
            rsmap = RSMap(W, S, fit, method)
        K = rs_stiffness(mesh, material, S)
        _, J0 = rsmap.evaluate(np.zeros(rsmap.r))
        lowest = float(sla.eigh(0.5 * (K + K.T), J0.T @ J0, eigvals_only=True)[0])
        return cls(rsmap, K, mesh, masses, float(np.sqrt(max(lowest, 0.0))))

    def deformation(self, x: np.ndarray) -> np.ndarray:
        """B x: (m,) -> (n, 3), in the rest frame."""
        return self.map.fit.displacements(x)


def frame_of(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L (3, 3), t (3,)) of a rig sample (12,), a 3 x 4 matrix row-major."""
    A = np.asarray(a, dtype=np.float64).reshape(3, 4)
    return A[:, :3], A[:, 3]


class RotStrainDrive:
    """The object's transform moves an RS body (see the module doc); a :class:`core.dynamics.drive.Drive`.

    body: the RS model; rig: the object's sample (12,) at an integer frame; embedding: the render
    vertices' in the body's tets, keep: (k,) False for render vertices not simulated (None: all are);
    probes: indices (p,) of the tet vertices the guard watches; time_step: of one solver step (s);
    iterations: Newton's cap per step; kappa_ratio: what the frame loop's stiffness scale is multiplied
    by (the module doc); tolerance: a step stops once an iteration moved the object by less than this
    share of its size (mass-weighted RMS), as the skinning solver's.
    """

    arap = False  # co-rotational (the RS energy, ``energy.py``): what the frame loop calibrates on
    jiggles = True

    def __init__(
        self,
        body: RSBody,
        rig: Callable[[int], np.ndarray],
        embedding: Embedding,
        keep: np.ndarray | None,
        probes: np.ndarray,
        time_step: float,
        iterations: int,
        kappa_ratio: float = 1.0,
        tolerance: float = TOLERANCE,
    ) -> None:
        self.body = body
        self.rig = rig
        self.h = float(time_step)
        self.max_iterations = int(iterations)
        self._size = character_size(body.mesh.X)
        self.tol = float(tolerance) * self._size
        self.kappa_ratio = float(kappa_ratio)
        self.probes = np.asarray(probes)
        self.embedding, self.keep = embedding, keep

    @property
    def size(self) -> float:
        return self._size

    def sample(self, frame: int) -> np.ndarray:
        return np.asarray(self.rig(frame), dtype=np.float64)

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> RSDriveState:
        zq, zx = np.zeros(self.body.map.r), np.zeros(self.body.map.fit.phi.shape[0])
        return RSDriveState(zq, zx, zx, sample, sample if before is None else before)

    def restart(self, state: RSDriveState, sample: np.ndarray) -> RSDriveState:
        return RSDriveState(**{**self.initial_state(sample, None).__dict__, "step": state.step})

    def world(self, x: np.ndarray, a: np.ndarray) -> np.ndarray:
        """World positions (n, 3) of reduced positions x (m,) in frame sample a (12,)."""
        L, t = frame_of(a)
        return (self.body.mesh.X + self.body.deformation(x)) @ L.T + t

    def step(
        self, state: RSDriveState, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[RSDriveState, StepReport]:
        """One backward-Euler step to the frame ``sample``: minimise the module doc's E over x~."""
        body, c = self.body, float(damping)
        kappa = float(stiffness_scale) * self.kappa_ratio
        m, B = body.masses, body.map.fit.B
        L, _ = frame_of(sample)
        y = 2.0 * self.world(state.x, state.a) - self.world(state.x_prev, state.a_prev)
        # L B flattened (m, 3n), so that every product below is one BLAS call (einsum's loops were ~8x slower),
        # and B^T L^T M L B (m x m): the kinetic metric of the deformation in this frame (I when L is a rotation).
        LB = (B @ L.T).reshape(len(B), -1)
        G = (LB * np.repeat(m, 3)) @ LB.T
        problem = Problem(
            energy=lambda q: self._energy(q, state, y, sample, kappa, c),
            derivatives=lambda q: self._derivatives(q, state, y, sample, LB, G, kappa, c),
            move=lambda q, d: q + d,
            distance=lambda q1, q0: float(np.sqrt(self._kinetic_gap(q1, q0, G))),
        )
        q, rep = minimize(problem, state.q.copy(), self.tol, self.max_iterations)
        x = body.map.positions(q)
        if not np.isfinite(x).all():
            raise SimulationError(f"frame {frame:g}: the rotation-strain step diverged; lower Wobble or add sub-steps")
        new = RSDriveState(q, x, state.x, np.asarray(sample, dtype=np.float64), state.a, state.step + 1)
        return new, StepReport(
            iterations=rep.iterations,
            residual=0.0 if rep.converged else float("nan"),
            energy=rep.energies[-1],
            converged=rep.converged,
        )

    def _energy(self, q: np.ndarray, s: RSDriveState, y: np.ndarray, a: np.ndarray, kappa: float, c: float) -> float:
        x = self.body.map.positions(q)
        d = self.world(x, a) - y
        dx = x - s.x
        kinetic = 0.5 / self.h**2 * float(np.einsum("a,ai,ai->", self.body.masses, d, d))
        return kinetic + 0.5 * c / self.h * float(dx @ dx) + 0.5 * kappa * float(q @ self.body.K @ q)

    def _derivatives(
        self,
        q: np.ndarray,
        s: RSDriveState,
        y: np.ndarray,
        a: np.ndarray,
        LB: np.ndarray,
        G: np.ndarray,
        kappa: float,
        c: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(g (r,), H (r, r)): the gradient, and the Gauss-Newton Hessian (positive definite); LB (m, 3n)."""
        x, J = self.body.map.evaluate(q)
        resid = self.body.masses[:, None] * (self.world(x, a) - y)  # M (p - y) (n, 3)
        pulled = LB @ resid.ravel()  # B^T L^T M (p - y) (m,)
        h = self.h
        g = J.T @ (pulled / h**2 + c / h * (x - s.x)) + kappa * (self.body.K @ q)
        H = J.T @ (G / h**2 + c / h * np.eye(len(G))) @ J + kappa * self.body.K
        return g, H

    def _kinetic_gap(self, q1: np.ndarray, q0: np.ndarray, G: np.ndarray) -> float:
        """Mass-weighted mean square distance (m^2) between the world positions of q1 and q0 (same frame)."""
        dx = self.body.map.positions(q1) - self.body.map.positions(q0)
        return float(dx @ G @ dx) / float(self.body.masses.sum())

    def _secondary(self, state: RSDriveState) -> np.ndarray:
        """World-space secondary displacement L B x of the tet vertices (n, 3)."""
        L, _ = frame_of(state.a)
        return self.body.deformation(state.x) @ L.T

    def probe_displacement(self, state: RSDriveState, frame: int) -> np.ndarray:
        return self._secondary(state)[self.probes]

    def displacement(self, state: RSDriveState, frame: int) -> np.ndarray:
        u = interpolate(self.embedding, self.body.mesh.T, self._secondary(state)).astype(np.float32)
        if self.keep is not None:
            u[~self.keep] = 0.0  # skipped loose parts follow the object only
        return u

    def offset(self, state: RSDriveState, frame: int, displacement: np.ndarray) -> np.ndarray:
        return displacement

    def skin_correction(self, frame: int) -> np.ndarray | None:
        return None

    def forget_after(self, frame: int) -> None:
        pass  # nothing cached: the rig is read as asked

    def notes(self) -> list[tuple[str, list[int]]]:
        return []  # nothing this drive solves per frame stops short
