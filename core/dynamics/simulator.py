"""The hyper-reduced complementary dynamics solver (Benchekroun et al. 2023, Algorithm 2 and App. C).

Unknown: the secondary displacement of the tet vertices, ``u = Y Z`` with Z
(4m x 3) the affine matrices of the m skinning modes (see ``reduced.py``).
Each time step minimises the backward-Euler incremental potential

    E(Z) = 1/(2h^2) ||x - y||_M^2 + c/(2h) ||u - u_prev||_M^2 + kappa * Psi(Z) - sum_a m_a g . u_a

with x = x_rig + u, y = 2 x_now - x_before (inertia of the rig *and* of the
secondary motion), c the mass-proportional damping, kappa a stiffness scale
(``wobble.py`` derives it from a wobble frequency) and Psi the hyper-reduced
elastic energy

    Psi_rest(Z) = sum_c sum_{e in c} mu_e V_e ||F_e - R_c||^2 + sum_c lam_c/2 (tr(R_c^T F_c) - 3)^2

with R_c = polar(F_c) per cluster, F_c the stiffness-weighted average
deformation gradient of cluster c.  The rig motion is prescribed; u stays in
the rig-complementary subspace by construction.

Two rest states.  ``rest_state="rest"`` is the paper's energy: the flesh
relaxes towards the elastic rest shape, so a bent elbow held still keeps a
secondary offset (the rig's pose is not an elastic equilibrium).
``rest_state="pose"`` (the product's default: animators own the pose) gives
every cluster the rig's own stretch S_c as its rest shape (F_rig,c = R0_c S_c)
and measures the volume term from the pose's trace s0_c:

    Psi_pose(Z) = sum_c sum_{e in c} mu_e V_e ||F_e - R_c S_c||^2 + sum_c lam_c/2 (tr(Rv_c^T F_c) - s0_c)^2
                  - (its value and gradient at Z = 0)

with R_c = polar(F_c S_c) and Rv_c = polar(F_c).  Z = 0 (the animated pose) is
then a stable rest on every pose: the subtracted gradient is only the rig's
variation inside a cluster, small.  (Subtracting the whole rest energy's
gradient instead makes the pose an equilibrium but not a stable one: a
squashed cluster's pre-stress does not turn with it, so turning lowers the
energy, and squashed paws buckled away from the pose.)  S_c, R_c and s0_c
rotate with the problem, so complementarity, rotation equivariance and
Galilean invariance stay exact.  The cost is one more batched polar
decomposition per step (the rig's clusters), two 3x3 products per cluster
per iteration, and for co-rotational a second polar per evaluation.

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

from ..errors import SimulationError
from ..model.fem import scalar_laplacian
from ..model.rig import homogeneous
from ..subspace.reduced import ReducedModel, cluster_gradient_operator, rig_matrix
from .polar import rotation

ARMIJO = 1e-4
MAX_BACKTRACKS = 30
# A secondary displacement this many times the character's size means the
# integrator has blown up, not that the flesh is jiggling.
BLOWUP_FACTOR = 10.0
REST_STATES = ("pose", "rest")
MATERIAL_MODELS = ("auto", "arap", "corotational")
# Systems (factorisations) kept for animated stiffness/damping values.
SYSTEM_CACHE = 16


@dataclass(frozen=True)
class SimulationSettings:
    """Solver settings.

    time_step: h in seconds (frame duration / sub-steps).
    max_iterations, tolerance: stop when the RMS change of u in an iteration
    falls below ``tolerance`` times the character size (twice the largest
    distance of a vertex from the centroid: unlike a bounding box it does not
    change when the problem is rotated), or when the cap is hit.
    damping: mass-proportional damping of the secondary velocity, 1/s.
    stiffness_scale: kappa, multiplies the whole elastic energy (1 = the
    model's material as built).
    gravity: (3,) m/s^2 acting on the secondary motion; off by default because
    the rig already carries the character's weight.
    material: "auto" (ARAP when the Poisson ratio is 0), "arap" or "corotational".
    rest_state: "pose" (settle on the animated pose) or "rest" (relax towards
    the elastic rest shape, the paper's energy); see the module doc.
    """

    time_step: float = 1.0 / 48.0
    max_iterations: int = 10
    tolerance: float = 1e-5
    damping: float = 0.0
    stiffness_scale: float = 1.0
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    material: str = "auto"
    rest_state: str = "pose"

    def validated(self) -> SimulationSettings:
        if not (np.isfinite(self.time_step) and self.time_step > 0):
            raise SimulationError("the time step must be positive; check the frame rate and sub-steps")
        if self.max_iterations < 1:
            raise SimulationError("allow at least one solver iteration per step")
        if not (self.tolerance >= 0 and self.damping >= 0 and np.isfinite(self.damping)):
            raise SimulationError("tolerance and damping must be non-negative")
        if not (np.isfinite(self.stiffness_scale) and self.stiffness_scale > 0):
            raise SimulationError("the stiffness scale must be positive; check the wobble frequency")
        if self.material not in MATERIAL_MODELS:
            raise SimulationError(f"unknown material model {self.material!r}; use 'arap' or 'corotational'")
        if self.rest_state not in REST_STATES:
            raise SimulationError(f"unknown rest state {self.rest_state!r}; use 'pose' or 'rest'")
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


def cluster_traces(Rs: np.ndarray, Fs: np.ndarray) -> np.ndarray:
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


@dataclass(frozen=True)
class _System:
    """The prefactored global step for one stiffness scale kappa and damping c.

    chol: Cholesky factor of H = 2 kappa A_L + (1/h^2 + c/h) A_M (4m x 4m);
    K_R (4m x 3r) maps stacked rotations to modes, Z = K_R Rs + Z0;
    K_F (4m x 3r) = H^-1 C_W^T, for the co-rotational volume force;
    w3 (3r, 1) kappa mu_c per row of the stacked F; lam (r,) kappa lam_c.
    """

    kappa: float
    damping: float
    chol: tuple[np.ndarray, bool]
    K_R: np.ndarray
    K_F: np.ndarray
    w3: np.ndarray
    lam: np.ndarray
    ch: float


@dataclass(frozen=True)
class _StepTerms:
    """Everything one step's potential needs besides Z (all 4m x 3 unless noted).

    lin, e0, s_ref, S: the elastic energy's linear coefficient, constant,
    reference traces (r,) and the rig's cluster stretches (r, 3, 3) or None
    (unscaled; see ``_elastic_reference``);
    Fr (3r x 3): the rig's stacked cluster gradients F_rig,c^T;
    Zh: inertial prediction 2 z - z_prev; z: the state now; dq: the rig's
    momentum change q - (2 q_now - q_before); Z0: the global step's constant part.
    """

    lin: np.ndarray
    e0: float
    s_ref: np.ndarray
    S: np.ndarray | None
    Fr: np.ndarray
    Zh: np.ndarray
    z: np.ndarray
    dq: np.ndarray
    Z0: np.ndarray


def character_size(X: np.ndarray) -> float:
    """Twice the largest distance of a vertex from the centroid, X (n, 3): invariant under rotations."""
    X = np.asarray(X, dtype=np.float64)
    return 2.0 * float(np.sqrt(np.max(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))


class Simulator:
    """Steps a :class:`ReducedModel` forward in time."""

    def __init__(self, model: ReducedModel, settings: SimulationSettings | None = None) -> None:
        self.model = model
        self.settings = (settings or SimulationSettings()).validated()
        s = self.settings
        self.arap = s.material == "arap" or (s.material == "auto" and model.is_arap)
        self.pose = s.rest_state == "pose"
        self._ih2 = 1.0 / (s.time_step * s.time_step)
        self._mu3 = np.repeat(model.cluster_mu, 3)[:, None]  # cluster stiffness per F row
        self._lam = np.zeros(model.r) if self.arap else model.cluster_lam
        self._systems: dict[tuple[float, float], _System] = {}
        self._sys = self.system(s.stiffness_scale, s.damping)
        self._size = character_size(model.X)
        self._mass_total = float(model.masses.sum())
        g = np.asarray(s.gravity, dtype=np.float64)
        self._gravity = None if not g.any() else np.outer(model.basis().T @ model.masses, g)
        self._A_RR = None
        if model.rig_weights is not None and not self.pose:
            YR = (model.rig_weights[:, :, None] * homogeneous(model.X)[:, None, :]).reshape(model.n, -1)
            self._A_RR = YR.T @ (scalar_laplacian(model.mesh(), model.mu) @ YR)
        self._basis: np.ndarray | None = None
        self._positions_ops: tuple[np.ndarray, np.ndarray, sp.csr_matrix, sp.csr_matrix] | None = None

    @property
    def size(self) -> float:
        """The character size (m) the tolerance and the blow-up guard are relative to."""
        return self._size

    def system(self, stiffness_scale: float, damping: float) -> _System:
        """The factorised global step for stiffness scale kappa and damping c (1/s), cached."""
        key = (float(stiffness_scale), float(damping))
        found = self._systems.get(key)
        if found is not None:
            return found
        kappa, c = key
        if not (np.isfinite(kappa) and kappa > 0 and np.isfinite(c) and c >= 0):
            raise SimulationError(
                f"stiffness scale {kappa:g} and damping {c:g} must be positive and finite; check the wobble controls"
            )
        m = self.model
        h = self.settings.time_step
        H = 2.0 * kappa * m.A_L + (self._ih2 + c / h) * m.A_M
        chol = sla.cho_factor(0.5 * (H + H.T))
        w3 = kappa * self._mu3
        new = _System(
            kappa=kappa,
            damping=c,
            chol=chol,
            K_R=sla.cho_solve(chol, 2.0 * (m.C_W * w3).T),
            K_F=sla.cho_solve(chol, m.C_W.T),
            w3=w3,
            lam=kappa * self._lam,
            ch=c / h,
        )
        if len(self._systems) >= SYSTEM_CACHE:
            self._systems.pop(next(iter(self._systems)))
        self._systems[key] = new
        return new

    # ------------------------------------------------------------------ rig input
    def _rig_terms_lbs(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        m = self.model
        if m.A_LR is None or m.A_MR is None or m.C_R is None:
            raise SimulationError("this model was built without an LBS rig; drive it with rig positions instead")
        P = rig_matrix(p)
        if P.shape[0] != m.A_LR.shape[1]:
            raise SimulationError(f"expected {3 * m.A_LR.shape[1]} rig parameters, got {np.size(p)}")
        if self.pose:
            return m.A_MR @ P, m.C_R @ P, None, 0.0
        assert self._A_RR is not None
        return m.A_MR @ P, m.C_R @ P, m.A_LR @ P, float(np.sum(P * (self._A_RR @ P)))

    def _rig_terms_positions(self, x_rig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
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
        if self.pose:
            return MY.T @ x, np.asarray(CD @ x), None, 0.0
        return MY.T @ x, np.asarray(CD @ x), LY.T @ x, float(np.sum(x * (Ls @ x)))

    def _rig_terms(
        self, p: np.ndarray | None, x_rig: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        """(q, F_rig, b_L, constant) for an LBS pose p or rig positions x_rig; exactly one must be given.

        b_L (4m x 3) and the constant are the rig's Laplacian terms, needed
        only by the "rest" energy (None and 0 for "pose").
        """
        if p is not None:
            return self._rig_terms_lbs(p)
        if x_rig is None:
            raise SimulationError("give exactly one of rig parameters p or rig positions x_rig")
        return self._rig_terms_positions(x_rig)

    def rig_momentum(self, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> np.ndarray:
        """q = Y^T M x_rig (4m x 3) for an LBS pose p or rig positions x_rig (n, 3)."""
        return self._rig_terms(p, x_rig)[0]

    # ------------------------------------------------------------------ states
    def initial_state(
        self,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        p_prev: np.ndarray | None = None,
        x_rig_prev: np.ndarray | None = None,
    ) -> SimState:
        """At rest relative to the rig; the rig's previous pose (one *step* back) sets its initial velocity."""
        q = self.rig_momentum(p, x_rig)
        if p_prev is not None or x_rig_prev is not None:
            q_prev = self.rig_momentum(p_prev, x_rig_prev)
        else:
            q_prev = q.copy()
        z = np.zeros((4 * self.model.m, 3))
        return SimState(z=z, z_prev=z.copy(), q=q, q_prev=q_prev)

    # ------------------------------------------------------------------ energy
    def _elastic_reference(
        self, Fr: np.ndarray, bL: np.ndarray | None, const: float
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray | None]:
        """(lin (4m x 3), e0, s_ref (r,), S (r, 3, 3) or None): the terms that set where the flesh rests.

        Psi(Z) = Z.A_L Z + lin.Z + e0 - 2 mu.a + lam/2 (s - s_ref)^2 with
        a_c = tr(R_c^T F_c S_c), R_c = polar(F_c S_c), s_c = tr(polar(F_c)^T F_c).

        "rest": S = I, lin = 2 b_L, e0 = the rig's Laplacian constant + 3 sum mu,
        s_ref = 3: the paper's energy.  "pose": each cluster's rest shape is the
        rig's own stretch S_c (F_rig,c = R0_c S_c), i.e. sum_e mu_e V_e
        ||F_e - R_c S_c||^2, minus its value and gradient at Z = 0 (only the
        rig's variation inside a cluster is left there, a small force);
        that leaves lin = 2 C_W^T (mu F_rig), e0 = 2 mu.||F_rig||^2.  The
        volume part is measured from the pose's traces, s_ref = s0.  Both
        parts are minimal at Z = 0 with positive curvature there, so a
        squashed or stretched pose is a stable rest, not just an equilibrium.
        """
        m = self.model
        if not self.pose:
            assert bL is not None
            return 2.0 * bL, const + 3.0 * float(m.cluster_mu.sum()), np.full(m.r, 3.0), None
        r = m.r
        R0t = rotation(Fr.reshape(r, 3, 3))  # R0_c^T
        S = R0t @ np.swapaxes(Fr.reshape(r, 3, 3), 1, 2)  # R0^T F_rig: the rig's stretch per cluster
        S = 0.5 * (S + np.swapaxes(S, 1, 2))
        s0 = cluster_traces(R0t.reshape(3 * r, 3), Fr)
        e0 = 2.0 * float(m.cluster_mu @ np.einsum("ij,ij->i", Fr.reshape(r, 9), Fr.reshape(r, 9)))
        return m.C_W.T @ (2.0 * self._mu3 * Fr), e0, s0, S

    def _elastic(self, Z: np.ndarray, a: np.ndarray, s: np.ndarray, t: _StepTerms) -> float:
        """Psi(Z) (unscaled, J) given the traces a and s at Z: the one place the elastic energy is written."""
        m = self.model
        e = float(np.sum(Z * (m.A_L @ Z))) + float(np.sum(Z * t.lin)) + t.e0
        return e - 2.0 * float(m.cluster_mu @ a) + 0.5 * float(self._lam @ (s - t.s_ref) ** 2)

    def _potential(self, sys: _System, t: _StepTerms, Z: np.ndarray, a: np.ndarray, s: np.ndarray) -> float:
        """The incremental potential E(Z) of one step (J)."""
        A_M = self.model.A_M
        d = Z - t.Zh
        e = sys.kappa * self._elastic(Z, a, s, t)
        e += 0.5 * self._ih2 * float(np.sum(d * (A_M @ d))) + self._ih2 * float(np.sum(d * t.dq))
        if sys.ch:
            dz = Z - t.z
            e += 0.5 * sys.ch * float(np.sum(dz * (A_M @ dz)))
        if self._gravity is not None:
            e -= float(np.sum(Z * self._gravity))
        return e

    def _local(self, Fs: np.ndarray, S: np.ndarray | None) -> np.ndarray:
        """The local step: stacked (R_c S_c)^T (3r x 3) with R_c = polar(F_c S_c).

        Fs stacks F_c^T.  (R S)^T is what the global step and the energy's
        gradient need, and a_c = tr(R_c^T F_c S_c) = cluster_traces(RS, Fs)
        (computed only where the energy is); S = None is the identity (the
        "rest" energy).
        """
        r = self.model.r
        if S is None:
            RS = rotation(Fs.reshape(r, 3, 3)).reshape(3 * r, 3)
        else:
            SF = S @ Fs.reshape(r, 3, 3)  # (F S)^T
            RS = (S @ rotation(SF)).reshape(3 * r, 3)
        return RS

    def _volume(self, Fs: np.ndarray, t: _StepTerms, RS: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stacked polar(F_c)^T and s_c = tr(polar(F_c)^T F_c) for the volume term (the local step's when S = I)."""
        if t.S is None:
            return RS, a
        r = self.model.r
        Rv = rotation(Fs.reshape(r, 3, 3)).reshape(3 * r, 3)
        return Rv, cluster_traces(Rv, Fs)

    def _rms(self, dZ: np.ndarray) -> float:
        """Mass-weighted RMS (m) of the displacement change u = Y dZ."""
        return float(np.sqrt(max(np.sum(dZ * (self.model.A_M @ dZ)), 0.0) / self._mass_total))

    # ------------------------------------------------------------------ step
    def _terms(
        self,
        sys: _System,
        state: SimState,
        q: np.ndarray,
        Fr: np.ndarray,
        ref: tuple[np.ndarray, float, np.ndarray, np.ndarray | None],
    ) -> _StepTerms:
        A_M = self.model.A_M
        lin, e0, s_ref, S = ref
        Zh = 2.0 * state.z - state.z_prev
        dq = q - (2.0 * state.q - state.q_prev)
        rhs = -sys.kappa * lin + self._ih2 * (A_M @ Zh - dq)
        if sys.ch:
            rhs += sys.ch * (A_M @ state.z)
        if self._gravity is not None:
            rhs += self._gravity
        Z0 = sla.cho_solve(sys.chol, rhs, check_finite=False)
        return _StepTerms(lin=lin, e0=e0, s_ref=s_ref, S=S, Fr=Fr, Zh=Zh, z=state.z, dq=dq, Z0=Z0)

    def step(
        self,
        state: SimState,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        frame: float | None = None,
        record: list[float] | None = None,
        stiffness_scale: float | None = None,
        damping: float | None = None,
    ) -> tuple[SimState, StepReport]:
        """Advance one time step to the rig pose p (LBS parameters) or rig positions x_rig (n, 3).

        stiffness_scale, damping: this step's values when they are animated
        (default: the settings').  ``record``, if given, receives the energy
        after every local and every global step (tests of monotonicity).
        Raises :class:`SimulationError` naming ``frame`` on non-finite input or blow-up.
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
        sys = self._sys
        if stiffness_scale is not None or damping is not None:
            s = self.settings
            sys = self.system(
                s.stiffness_scale if stiffness_scale is None else stiffness_scale,
                s.damping if damping is None else damping,
            )
        q, Fr, bL, const = self._rig_terms(p, x_rig)
        terms = self._terms(sys, state, q, Fr, self._elastic_reference(Fr, bL, const))
        solve = self._solve_arap if self.arap else self._solve_corotational
        Z, report = solve(sys, terms, record)
        self._check(Z, where)
        return SimState(z=Z, z_prev=state.z, q=q, q_prev=state.q, step=state.step + 1), report

    def _solve_arap(self, sys: _System, t: _StepTerms, record: list[float] | None) -> tuple[np.ndarray, StepReport]:
        """Local-global iterations: rotations, then one prefactored solve; monotone in the energy."""
        C_W = self.model.C_W
        tol = self.settings.tolerance * self._size
        n_iter = self.settings.max_iterations
        Z = t.z.copy()
        Fs = C_W @ Z + t.Fr
        RS = self._local(Fs, t.S)
        if record is not None:
            a = cluster_traces(RS, Fs)
            record.append(self._potential(sys, t, Z, a, a))
        residual, it = np.inf, 0
        for it in range(1, n_iter + 1):
            Z_new = sys.K_R @ RS + t.Z0
            if record is not None:
                a_fixed = cluster_traces(RS, C_W @ Z_new + t.Fr)  # rotations of the last local step
                record.append(self._potential(sys, t, Z_new, a_fixed, a_fixed))
            if tol > 0.0 or it == n_iter:  # with tolerance 0 only the final update is reported
                residual = self._rms(Z_new - Z)
            Z = Z_new
            Fs = C_W @ Z + t.Fr
            done = residual <= tol or it == n_iter
            if done and record is None:
                break  # no local step follows the last global one
            RS = self._local(Fs, t.S)
            if record is not None:
                a = cluster_traces(RS, Fs)
                record.append(self._potential(sys, t, Z, a, a))
            if done:
                break
        a = cluster_traces(RS, Fs)
        return Z, StepReport(iterations=it, residual=residual, energy=self._potential(sys, t, Z, a, a))

    def _solve_corotational(
        self, sys: _System, t: _StepTerms, record: list[float] | None
    ) -> tuple[np.ndarray, StepReport]:
        """Quasi-Newton with the constant system matrix and an Armijo line search on the true energy."""
        C_W = self.model.C_W
        tol = self.settings.tolerance * self._size
        n_iter = self.settings.max_iterations
        Z = t.z.copy()
        Fs = C_W @ Z + t.Fr
        RS = self._local(Fs, t.S)
        a = cluster_traces(RS, Fs)
        Rv, sv = self._volume(Fs, t, RS, a)
        energy = self._potential(sys, t, Z, a, sv)
        if record is not None:
            record.append(energy)
        residual, it, backtracks = np.inf, 0, 0
        for it in range(1, n_iter + 1):
            target = sys.K_R @ RS - sys.K_F @ (np.repeat(sys.lam * (sv - t.s_ref), 3)[:, None] * Rv) + t.Z0
            dZ = target - Z
            slope = -float(np.sum(dZ * self._hess_dot(sys, dZ)))
            dF = C_W @ dZ
            alpha = 1.0
            while True:
                Fs_t = Fs + alpha * dF
                RS_t = self._local(Fs_t, t.S)
                a_t = cluster_traces(RS_t, Fs_t)
                Rv_t, sv_t = self._volume(Fs_t, t, RS_t, a_t)
                e_t = self._potential(sys, t, Z + alpha * dZ, a_t, sv_t)
                if e_t <= energy + ARMIJO * alpha * slope or backtracks >= MAX_BACKTRACKS:
                    break
                alpha *= 0.5
                backtracks += 1
            if tol > 0.0 or it == n_iter:
                residual = self._rms(alpha * dZ)
            Z = Z + alpha * dZ
            Fs = Fs_t
            RS, a, Rv, sv, energy = RS_t, a_t, Rv_t, sv_t, e_t
            if record is not None:
                record.append(energy)
            if residual <= tol:
                break
        return Z, StepReport(iterations=it, residual=residual, energy=energy, backtracks=backtracks)

    def elastic_energy(self, z: np.ndarray, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> float:
        """Hyper-reduced elastic energy kappa * Psi (J) of secondary motion z on the rig pose p or x_rig.

        Zero at rest for "rest", and zero at z = 0 on every pose for "pose".
        """
        _, Fr, bL, const = self._rig_terms(p, x_rig)
        ref = self._elastic_reference(Fr, bL, const)
        t = _StepTerms(lin=ref[0], e0=ref[1], s_ref=ref[2], S=ref[3], Fr=Fr, Zh=z, z=z, dq=z, Z0=z)
        Fs = self.model.C_W @ z + Fr
        RS = self._local(Fs, t.S)
        a = cluster_traces(RS, Fs)
        _, sv = self._volume(Fs, t, RS, a)
        return self._sys.kappa * self._elastic(z, a, sv, t)

    def kinetic_energy(self, state: SimState) -> float:
        """Kinetic energy (J) of the secondary motion alone, from the last step's velocity."""
        dz = state.z - state.z_prev
        return 0.5 * self._ih2 * float(np.sum(dz * (self.model.A_M @ dz)))

    def _hess_dot(self, sys: _System, dZ: np.ndarray) -> np.ndarray:
        """H dZ for the constant quasi-Newton matrix H (so grad . dZ = -dZ^T H dZ)."""
        m = self.model
        return 2.0 * sys.kappa * (m.A_L @ dZ) + (self._ih2 + sys.ch) * (m.A_M @ dZ)

    def _check(self, Z: np.ndarray, where: str) -> None:
        if not np.isfinite(Z).all():
            raise SimulationError(
                where + "the simulation produced NaN; the time step is too large for the stiffness "
                "(add sub-steps or lower the wobble frequency) or the rig jumps between frames"
            )
        rms = float(np.sqrt(np.sum(Z * (self.model.A_M @ Z)) / self._mass_total))
        if rms > BLOWUP_FACTOR * self._size:
            raise SimulationError(
                where + f"the simulation blew up (secondary motion {rms:.3g} m on a {self._size:.3g} m character); "
                "raise the damping or the wobble frequency, or check the rig for jumps"
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
