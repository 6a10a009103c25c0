"""The hyper-reduced complementary dynamics solver (seed 000 Algorithm 2, App. C).

Unknown: the secondary displacement of the tet vertices, ``u = Y Z`` with Z
(4m x 3) the affine matrices of the m skinning modes (see ``reduced.py``).
Each time step minimises the backward-Euler incremental potential

    E(Z) = 1/(2h^2) ||x - y||_M^2 + c/(2h) ||u - u_prev||_M^2
           + sum_c sum_{e in c} mu_e V_e ||F_e - R_c||^2           (ARAP part)
           + sum_c lam_c / 2 (tr(R_c^T F_c) - 3)^2                 (volume part)
           - sum_a m_a g . u_a                                      (optional gravity)

with x = x_rig + u, y = 2 x_now - x_before (inertia of the rig *and* of the
secondary motion), R_c = polar(F_c) per cluster, F_c the stiffness-weighted
average deformation gradient of cluster c.  The rig motion is prescribed; u
stays in the rig-complementary subspace by construction.

* ARAP (lam = 0): local-global.  Local: R_c = polar(F_c) for all clusters at
  once.  Global: the quadratic with R fixed, one prefactored Cholesky solve.
  The energy never increases.
* Co-rotational (lam > 0): the same system matrix gives a quasi-Newton
  direction; a backtracking (Armijo) line search on the true reduced energy
  guarantees decrease.

Per iteration the work is two small GEMMs and one batched 3x3 polar
decomposition: O(m r), independent of the number of vertices.  The LBS path
(``step(p=...)``) is O(m b) per step on top; the rig-positions path
(``step(x_rig=...)``) projects an arbitrary (n, 3) rig shape, O(n m + t).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .errors import SimulationError
from .fem import scalar_laplacian
from .polar import rotation
from .reduced import ReducedModel, cluster_gradient_operator, rig_matrix
from .rig import homogeneous

ARMIJO = 1e-4
MAX_BACKTRACKS = 30
# A secondary displacement this many times the character's size means the
# integrator has blown up, not that the flesh is jiggling.
BLOWUP_FACTOR = 10.0


@dataclass(frozen=True)
class SimulationSettings:
    """Solver settings.

    time_step: h in seconds (frame duration / sub-steps).
    max_iterations, tolerance: stop when the RMS change of u in an iteration
    falls below ``tolerance`` times the character size (or the cap is hit).
    damping: extra mass-proportional damping of the secondary velocity, 1/s.
    gravity: (3,) m/s^2 acting on the secondary motion; off by default because
    the rig already carries the character's weight.
    material: "auto" (ARAP when the Poisson ratio is 0), "arap" or "corotational".
    """

    time_step: float = 1.0 / 24.0
    max_iterations: int = 20
    tolerance: float = 1e-6
    damping: float = 0.0
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    material: str = "auto"

    def validated(self) -> SimulationSettings:
        if not (np.isfinite(self.time_step) and self.time_step > 0):
            raise SimulationError("the time step must be positive; check the frame rate and sub-steps")
        if self.max_iterations < 1:
            raise SimulationError("allow at least one solver iteration per step")
        if not (self.tolerance >= 0 and self.damping >= 0 and np.isfinite(self.damping)):
            raise SimulationError("tolerance and damping must be non-negative")
        if self.material not in ("auto", "arap", "corotational"):
            raise SimulationError(f"unknown material model {self.material!r}; use 'arap' or 'corotational'")
        return self


@dataclass(frozen=True)
class SimState:
    """The whole simulation state: a few small arrays (4m x 3 each).

    z, z_prev: secondary motion now and one step before.  q, q_prev: the rig's
    reduced momentum coordinate ``Y^T M x_rig`` now and one step before (for
    an LBS rig ``B^T M J p``).  step: steps taken since the initial state.
    """

    z: np.ndarray
    z_prev: np.ndarray
    q: np.ndarray
    q_prev: np.ndarray
    step: int = 0

    def copy(self) -> SimState:
        return SimState(self.z.copy(), self.z_prev.copy(), self.q.copy(), self.q_prev.copy(), self.step)


_EMPTY = np.empty(0)


def _traces(Rs: np.ndarray, Fs: np.ndarray) -> np.ndarray:
    """s_c = tr(R_c^T F_c) (r,) for stacked R_c^T and F_c^T (3r x 3)."""
    return np.einsum("ij,ij->i", Rs.reshape(-1, 9), Fs.reshape(-1, 9))


@dataclass(frozen=True)
class StepReport:
    """What one step did: iterations used, final RMS update (m), energy (J), backtracks.

    For ARAP the energy is evaluated with the last local step's rotations
    (an upper bound of the hyper-reduced energy, equal to it at convergence),
    which spares a polar decomposition per step.
    """

    iterations: int
    residual: float
    energy: float
    backtracks: int = 0


class Simulator:
    """Steps a :class:`ReducedModel` forward in time."""

    def __init__(self, model: ReducedModel, settings: SimulationSettings | None = None) -> None:
        self.model = model
        self.settings = (settings or SimulationSettings()).validated()
        s = self.settings
        self.arap = s.material == "arap" or (s.material == "auto" and model.is_arap)
        h = s.time_step
        self._ih2 = 1.0 / (h * h)
        self._ch = s.damping / h
        A_M = model.A_M
        H = 2.0 * model.A_L + (self._ih2 + self._ch) * A_M
        self._chol = sla.cho_factor(0.5 * (H + H.T))
        r = model.r
        self._w3 = np.repeat(model.cluster_mu, 3)[:, None]  # cluster stiffness per F row
        self._lam = np.zeros(r) if self.arap else model.cluster_lam
        # Z = K_R Rs + Z0 is the global step: K_R maps the stacked rotations to modes.
        self._K_R = sla.cho_solve(self._chol, 2.0 * (model.C_W * self._w3).T)
        self._K_F = sla.cho_solve(self._chol, model.C_W.T)
        self._size = float(np.linalg.norm(model.X.max(axis=0) - model.X.min(axis=0)))
        self._mass_total = float(model.masses.sum())
        g = np.asarray(s.gravity, dtype=np.float64)
        self._gravity = None if not g.any() else np.outer(model.basis().T @ model.masses, g)
        self._A_RR = None
        if model.rig_weights is not None:
            YR = (model.rig_weights[:, :, None] * homogeneous(model.X)[:, None, :]).reshape(model.n, -1)
            self._A_RR = YR.T @ (scalar_laplacian(model.mesh(), model.mu) @ YR)
        self._basis: np.ndarray | None = None
        self._positions_ops: tuple[np.ndarray, np.ndarray, sp.csr_matrix, sp.csr_matrix] | None = None

    # ------------------------------------------------------------------ rig input
    def _rig_terms_lbs(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        m = self.model
        if m.A_LR is None or m.A_MR is None or m.C_R is None or self._A_RR is None:
            raise SimulationError("this model was built without an LBS rig; drive it with rig positions instead")
        P = rig_matrix(p)
        if P.shape[0] != m.A_LR.shape[1]:
            raise SimulationError(f"expected {3 * m.A_LR.shape[1]} rig parameters, got {np.size(p)}")
        const = float(np.sum(P * (self._A_RR @ P)))
        return m.A_LR @ P, m.A_MR @ P, m.C_R @ P, const

    def _rig_terms_positions(self, x_rig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        if self._positions_ops is None:
            m = self.model
            mesh = m.mesh()
            Y = m.basis()
            Ls = scalar_laplacian(mesh, m.mu)
            CD = cluster_gradient_operator(mesh, m.labels, m.mu * mesh.volumes)
            self._positions_ops = (np.asarray(Ls @ Y), m.masses[:, None] * Y, CD, Ls)
        LY, MY, CD, Ls = self._positions_ops
        x = np.asarray(x_rig, dtype=np.float64)
        if x.shape != (self.model.n, 3):
            raise SimulationError(f"rig positions must have shape ({self.model.n}, 3), got {x.shape}")
        return LY.T @ x, MY.T @ x, np.asarray(CD @ x), float(np.sum(x * (Ls @ x)))

    def _rig_terms(
        self, p: np.ndarray | None, x_rig: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(b_L, q, F_rig, constant) for an LBS pose p or rig positions x_rig; exactly one must be given."""
        if p is not None:
            return self._rig_terms_lbs(p)
        if x_rig is None:
            raise SimulationError("give exactly one of rig parameters p or rig positions x_rig")
        return self._rig_terms_positions(x_rig)

    def rig_momentum(self, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> np.ndarray:
        """q = Y^T M x_rig (4m x 3) for an LBS pose p or rig positions x_rig (n, 3)."""
        return self._rig_terms(p, x_rig)[1]

    # ------------------------------------------------------------------ states
    def initial_state(
        self,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        p_prev: np.ndarray | None = None,
        x_rig_prev: np.ndarray | None = None,
    ) -> SimState:
        """At rest relative to the rig; the rig's previous pose sets its initial velocity."""
        q = self.rig_momentum(p, x_rig)
        if p_prev is not None or x_rig_prev is not None:
            q_prev = self.rig_momentum(p_prev, x_rig_prev)
        else:
            q_prev = q.copy()
        z = np.zeros((4 * self.model.m, 3))
        return SimState(z=z, z_prev=z.copy(), q=q, q_prev=q_prev)

    # ------------------------------------------------------------------ energy
    def _energy(self, Z: np.ndarray, s: np.ndarray, const: float) -> float:
        """Reduced incremental potential at Z, given s_c = tr(R_c^T F_c) at Z and the rig constant."""
        m = self.model
        d = Z - self._Zh
        e = float(np.sum(Z * (m.A_L @ Z)) + 2.0 * np.sum(Z * self._bL))
        e += const - 2.0 * float(self.model.cluster_mu @ s) + 3.0 * float(self.model.cluster_mu.sum())
        e += 0.5 * float(self._lam @ (s - 3.0) ** 2)
        e += 0.5 * self._ih2 * float(np.sum(d * (m.A_M @ d))) + self._ih2 * float(np.sum(d * self._dq))
        if self._ch:
            dz = Z - self._Zc
            e += 0.5 * self._ch * float(np.sum(dz * (m.A_M @ dz)))
        if self._gravity is not None:
            e -= float(np.sum(Z * self._gravity))
        return e

    def _rotations(self, Fs: np.ndarray, traces: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Stacked R^T (3r x 3) for stacked F^T (3r x 3), and s_c = tr(R_c^T F_c) (empty if not ``traces``)."""
        r = self.model.r
        Ft = Fs.reshape(r, 3, 3)
        Rt = rotation(Ft)
        Rs = Rt.reshape(3 * r, 3)
        return Rs, _traces(Rs, Fs) if traces else _EMPTY

    # ------------------------------------------------------------------ step
    def step(
        self,
        state: SimState,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        frame: float | None = None,
        record: list[float] | None = None,
    ) -> tuple[SimState, StepReport]:
        """Advance one time step to the rig pose p (LBS parameters) or rig positions x_rig (n, 3).

        ``record``, if given, receives the energy after every local and every
        global step (used by tests of monotonicity).  Raises
        :class:`SimulationError` naming ``frame`` on non-finite input or blow-up.
        """
        where = f"frame {frame:g}: " if frame is not None else f"step {state.step + 1}: "
        if (p is None) == (x_rig is None):
            raise SimulationError("give exactly one of rig parameters p or rig positions x_rig")
        rig_in = p if p is not None else x_rig
        if not np.isfinite(np.asarray(rig_in, dtype=np.float64)).all():
            raise SimulationError(
                where + "the rig pose contains NaN or infinite values; check the armature's animation"
            )
        if not (np.isfinite(state.z).all() and np.isfinite(state.z_prev).all()):
            raise SimulationError(where + "the simulation state holds NaN; clear the cache and simulate again")
        bL, q, Fr, const = self._rig_terms(p, x_rig)
        m = self.model
        ih2 = self._ih2
        self._bL = bL
        self._Zh = 2.0 * state.z - state.z_prev
        self._Zc = state.z
        self._dq = q - (2.0 * state.q - state.q_prev)
        rhs = -2.0 * bL + ih2 * (m.A_M @ self._Zh - self._dq)
        if self._ch:
            rhs += self._ch * (m.A_M @ state.z)
        if self._gravity is not None:
            rhs += self._gravity
        Z0 = sla.cho_solve(self._chol, rhs, check_finite=False)
        tol = self.settings.tolerance * self._size
        Z = state.z.copy()
        Fs = m.C_W @ Z + Fr
        Rs, s = self._rotations(Fs)
        residual, iters, backtracks = np.inf, 0, 0
        energy = self._energy(Z, s, const) if (record is not None or not self.arap) else np.nan
        if record is not None:
            record.append(energy)
        for iters in range(1, self.settings.max_iterations + 1):
            if self.arap:
                Z_new = self._K_R @ Rs + Z0
                if record is not None:
                    Fs_g = m.C_W @ Z_new + Fr
                    s_fixed = _traces(Rs, Fs_g)
                    record.append(self._energy(Z_new, s_fixed, const))
            else:
                # Quasi-Newton direction with the constant system matrix.
                target = self._K_R @ Rs - self._K_F @ (np.repeat(self._lam * (s - 3.0), 3)[:, None] * Rs) + Z0
                dZ = target - Z
                grad_dot = -float(np.sum(dZ * self._hess_dot(dZ)))
                dF = m.C_W @ dZ
                alpha = 1.0
                while True:
                    Fs_t = Fs + alpha * dF
                    Rs_t, s_t = self._rotations(Fs_t)
                    e_t = self._energy(Z + alpha * dZ, s_t, const)
                    if e_t <= energy + ARMIJO * alpha * grad_dot or backtracks >= MAX_BACKTRACKS:
                        break
                    alpha *= 0.5
                    backtracks += 1
                Z_new = Z + alpha * dZ
                energy = e_t
            last = iters == self.settings.max_iterations
            if tol > 0.0 or last:  # with tolerance 0 only the final update is reported
                delta = Z_new - Z
                residual = float(np.sqrt(max(np.sum(delta * (m.A_M @ delta)), 0.0) / self._mass_total))
            Z = Z_new
            Fs = m.C_W @ Z + Fr
            if self.arap:
                # No local step follows the last global one: the energy below uses the rotations in hand.
                if not (last and record is None):
                    Rs, s = self._rotations(Fs, traces=record is not None)
                if record is not None:
                    record.append(self._energy(Z, s, const))
            else:
                Rs, s = Rs_t, s_t
                if record is not None:
                    record.append(energy)
            if residual <= tol:
                break
        if self.arap and not np.isfinite(energy):
            s = _traces(Rs, Fs)
            energy = self._energy(Z, s, const)
        self._check(Z, where)
        new = SimState(z=Z, z_prev=state.z, q=q, q_prev=state.q, step=state.step + 1)
        return new, StepReport(iterations=iters, residual=residual, energy=float(energy), backtracks=backtracks)

    def elastic_energy(self, z: np.ndarray, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> float:
        """Hyper-reduced elastic energy (J) of secondary motion z on the rig pose p or x_rig.

        ``sum_e mu_e V_e ||F_e - R_c||^2 + sum_c lam_c/2 (tr(R_c^T F_c) - 3)^2``
        with R_c = polar(F_c); zero at rest.
        """
        bL, _, Fr, const = self._rig_terms(p, x_rig)
        m = self.model
        _, s = self._rotations(m.C_W @ z + Fr)
        e = float(np.sum(z * (m.A_L @ z)) + 2.0 * np.sum(z * bL)) + const
        e += 3.0 * float(m.cluster_mu.sum()) - 2.0 * float(m.cluster_mu @ s) + 0.5 * float(self._lam @ (s - 3.0) ** 2)
        return e

    def kinetic_energy(self, state: SimState) -> float:
        """Kinetic energy (J) of the secondary motion alone, from the last step's velocity."""
        dz = state.z - state.z_prev
        return 0.5 * self._ih2 * float(np.sum(dz * (self.model.A_M @ dz)))

    def _hess_dot(self, dZ: np.ndarray) -> np.ndarray:
        """H dZ for the constant quasi-Newton matrix H (so grad . dZ = -dZ^T H dZ)."""
        m = self.model
        return 2.0 * (m.A_L @ dZ) + (self._ih2 + self._ch) * (m.A_M @ dZ)

    def _check(self, Z: np.ndarray, where: str) -> None:
        if not np.isfinite(Z).all():
            raise SimulationError(
                where + "the simulation produced NaN; the time step is too large for the stiffness "
                "(add sub-steps or lower Young's modulus) or the rig jumps between frames"
            )
        rms = float(np.sqrt(np.sum(Z * (self.model.A_M @ Z)) / self._mass_total))
        if rms > BLOWUP_FACTOR * self._size:
            raise SimulationError(
                where + f"the simulation blew up (secondary motion {rms:.3g} m on a {self._size:.3g} m character); "
                "add sub-steps, add damping or lower Young's modulus"
            )

    # ------------------------------------------------------------------ output
    def displacement(self, state_or_z: SimState | np.ndarray) -> np.ndarray:
        """Secondary displacement u (n, 3) of the tet vertices."""
        Z = state_or_z.z if isinstance(state_or_z, SimState) else state_or_z
        return self.basis @ Z

    @property
    def basis(self) -> np.ndarray:
        """Y (n x 4m) of the tet vertices, built on first use."""
        if self._basis is None:
            self._basis = self.model.basis()
        return self._basis

    def with_settings(self, **changes: object) -> Simulator:
        return Simulator(self.model, replace(self.settings, **changes))  # type: ignore[arg-type]
