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
  once.  Global: the quadratic with R fixed, one prefactored solve.
  The energy never increases.
* Co-rotational (lam > 0): projected Newton.  The system (12m x 12m,
  ``_newton``) is I3 (x) H plus the volume term's Gauss-Newton part
  sum_c lam_c u_c u_c^T (u_c = d s_c / dZ) plus the rotations' curvature
  along each cluster's three twists, clamped so that the matrix stays
  positive definite; it is formed and factorised per iteration (~1.5 ms at
  m = 16, r = 100, one BLAS thread).  (The constant H alone, the former
  quasi-Newton direction, leaves out the volume stiffness and the
  rotations' curvature: near incompressibility it converged so slowly that
  a capped step was far from the solution.)  A backtracking (Armijo) line
  search on the true reduced energy makes every iteration lower it; a line
  search that finds no decrease ends the step at the current iterate (the
  best there is) and says so; it never accepts an increase.  Measured on
  the real characters: 1.5-2.5 iterations per step on average, at most 5.
  ARAP switches to the same Newton when its local-global iterations
  converge too slowly (``_solve_arap``).

Stopping (both paths).  A step stops when the residual

    h^2 sqrt(g^T A_M^-1 g / mass)   (m; g = dE/dZ, 3 x 4m)

falls below ``tolerance`` times the character's size: the residual
acceleration of the step's equations of motion times h^2.  The potential is
at least (1/h^2) A_M-convex wherever the elastic part is convex, so this
bounds the mass-weighted RMS distance of u from the step's solution; unlike
the size of the last update it does not read a slowly converging iteration as
converged.  For ARAP the gradient at Z is H (Z - Z_new) with Z_new the next
global step, free; the step returns Z_new, which is closer still.  The
iteration cap is a safety net: a step that hits it unconverged says so in its
:class:`StepReport`.

Layout.  Inside a step the 4m x 3 quantities (Z and its companions) are
handled transposed, 3 x 4m, one row per coordinate, and the per-cluster 3x3
matrices as rows (9, r) (``rows.py``); the constant operators are stored in
the matching cluster order.  A global step is then three matrix-vector
products with one precomputed matrix (BLAS runs those faster than one
matrix product with three columns), and a local step one closed-form polar
decomposition of all clusters at once (``polar.py``): a few tens of numpy
calls on ~r numbers per iteration, O(m r), independent of the number of
vertices.  The LBS path (``step(p=...)``) is O(m b) per step on top; the
rig-positions path (``step(x_rig=...)``) projects an arbitrary (n, 3) rig
shape, O(n m + t).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..contact.colliders import Ground, MeshCollider
from ..contact.penalty import ContactRows, concatenate
from ..contact.surface import PASSES, SurfaceContact
from ..errors import SimulationError
from ..geometry.size import character_size
from ..linalg import rows
from ..linalg.polar import rotation_rows
from ..model.fem import scalar_laplacian
from ..model.rig import lbs_basis, rig_matrix
from ..settings import BY_NAME
from ..subspace.reduced import ReducedModel, cluster_rows_operator

ARMIJO = 1e-4
MAX_BACKTRACKS = 30
# An ARAP step turns from local-global to Newton when local-global predicts more than this many more
# iterations (``_solve_arap``), keeping NEWTON_RESERVE of the cap for Newton.
LOCAL_GLOBAL_BUDGET = 12
NEWTON_RESERVE = 3
# The twists' curvature 2 / (s_i + s_j) is capped at this multiple of 1 / |t S|^2 (inverted or flattened
# clusters, where it is infinite) before the first try with the exact Hessian (``_newton``).
TWIST_CAP = 100.0
# A Newton decrease below this share of the step's energy is round-off (64 ulps): the step is converged.
ROUNDOFF = 64.0 * np.finfo(np.float64).eps
# A secondary displacement this many times the character's size means the
# integrator has blown up, not that the flesh is jiggling.
BLOWUP_FACTOR = 10.0
REST_STATES = ("pose", "rest")
MATERIAL_MODELS = ("auto", "arap", "corotational")
# Systems (factorisations) kept for animated stiffness/damping values.
SYSTEM_CACHE = 16
# The frame rate assumed where none is given (film).
FILM_FPS = 24.0


@dataclass(frozen=True)
class SimulationSettings:
    """Solver settings; user-facing defaults come from ``core/settings.py``.

    time_step: h in seconds (frame duration / sub-steps).
    max_iterations, tolerance: a step stops when its residual (module doc:
    h^2 times the residual acceleration, a bound on the mass-weighted RMS
    distance of u from the step's solution) falls below ``tolerance`` times
    the character size (twice the largest distance of a vertex from the
    centroid: unlike a bounding box it does not change when the problem is
    rotated); ``max_iterations`` is a safety cap, reported when hit.
    damping: mass-proportional damping of the secondary velocity, 1/s.
    stiffness_scale: kappa, multiplies the whole elastic energy (1 = the
    model's material as built).
    gravity: (3,) m/s^2 acting on the secondary motion; off by default because
    the rig already carries the character's weight.
    material: "auto" (ARAP when the Poisson ratio is 0), "arap" or "corotational".
    rest_state: "pose" (settle on the animated pose) or "rest" (relax towards
    the elastic rest shape, the paper's energy); see the module doc.
    """

    time_step: float = 1.0 / (FILM_FPS * int(BY_NAME["substeps"].default))
    max_iterations: int = int(BY_NAME["iterations"].default)
    tolerance: float = 1e-6
    damping: float = 0.0
    stiffness_scale: float = 1.0
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    material: str = "auto"
    rest_state: str = str(BY_NAME["rest_state"].default).lower()
    # kappa_f of the model's fiber clusters (core/model/fibers.py): their stiffness scale, which the Wobble
    # does not animate; 0 leaves them out (as does the "rest" state, whose rig terms have no fiber part).
    fiber_scale: float = 0.0

    def validated(self) -> SimulationSettings:
        if not (np.isfinite(self.time_step) and self.time_step > 0):
            raise SimulationError("the time step must be positive; check the frame rate and sub-steps")
        if self.max_iterations < 1:
            raise SimulationError("allow at least one solver iteration per step")
        if not (self.tolerance >= 0 and self.damping >= 0 and np.isfinite(self.damping)):
            raise SimulationError("tolerance and damping must be non-negative")
        if not (np.isfinite(self.stiffness_scale) and self.stiffness_scale > 0):
            raise SimulationError("the stiffness scale must be positive; check the wobble frequency")
        if not (np.isfinite(self.fiber_scale) and self.fiber_scale >= 0):
            raise SimulationError("the fiber stiffness scale must be zero or positive")
        if self.material not in MATERIAL_MODELS:
            raise SimulationError(f"unknown material model {self.material!r}; use 'arap' or 'corotational'")
        if self.rest_state not in REST_STATES:
            raise SimulationError(f"unknown rest state {self.rest_state!r}; use 'pose' or 'rest'")
        return self


def uses_arap(material: str, model: ReducedModel) -> bool:
    """Whether the solver runs ARAP: asked for, or "auto" and the model has no volume term (Poisson ratio 0)."""
    return material == "arap" or (material == "auto" and not model.cluster_lam.any())


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


@dataclass(frozen=True)
class StepReport:
    """What one step did.

    iterations: solver iterations taken (updates of Z); residual: the last
    residual measured (m, see the module doc; with tolerance 0 the final
    update's RMS instead, no gradient is needed); energy: the step's potential
    at exit (J); backtracks: line-search halvings, all iterations together;
    converged: the residual reached the tolerance (False: stopped by the cap
    or a stalled line search); stalled: the line search found no decrease
    (round-off, far below any useful tolerance, or a broken energy).

    For ARAP the energy is evaluated with the last local step's rotations
    (an upper bound of the hyper-reduced energy, equal to it at convergence),
    which spares a polar decomposition per step.
    """

    iterations: int
    residual: float
    energy: float
    backtracks: int = 0
    converged: bool = True
    stalled: bool = False


@dataclass(frozen=True)
class _System:
    """The prefactored global step for one stiffness scale kappa and damping c (1/s).

    H = 2 A_k + (1/h^2 + c/h) A_M (4m x 4m) is the quadratic part of the
    step's potential, A_k = kappa A_L + kappa_f A_F the elastic one (the fiber clusters'
    A_F at their own scale kappa_f, :class:`SimulationSettings`); with the rotations fixed
    its minimiser is Z = H^-1 (rhs + C_W^T W) for cluster forces W.  Transposed layout
    (module doc): H_inv (4m x 4m); K_F (4m x 3r) = H^-1 C_W^T, columns in cluster order;
    K_R = K_F diag(2 kappa_c mu_c), ARAP's whole global step; mu2 (r,) = 2 kappa_c mu_c
    with kappa_c = kappa for the plain clusters and kappa_f for the fiber clusters;
    lam (r,) = kappa_c lam_c; ch = c / h.
    """

    kappa: float
    damping: float
    ch: float
    H: np.ndarray
    H_inv: np.ndarray
    K_F: np.ndarray
    K_R: np.ndarray
    mu2: np.ndarray
    lam: np.ndarray
    A_k: np.ndarray
    fiber_scale: float = 0.0


@dataclass(frozen=True)
class _Reference:
    """Where the flesh rests on one rig pose (see ``_elastic_reference``).

    Psi(Z) = Z.A_k Z + lin_k.Z + e0_k - 2 kappa_c mu.a + lam/2 (s - s_ref)^2 with
    lin_k = kappa lin + kappa_f lin_f (3 x 4m), e0_k likewise (the plain clusters' and
    the fiber clusters' parts), reference traces s_ref (r,) and the rig's cluster
    stretches S (9, r) (None: the identity, the "rest" energy).
    """

    lin: np.ndarray
    e0: float
    s_ref: np.ndarray
    S: np.ndarray | None
    lin_f: np.ndarray | None = None
    e0_f: float = 0.0

    def scaled(self, sys: _System) -> tuple[np.ndarray, float]:
        """(lin_k, e0_k) at the system's stiffness scales."""
        if self.lin_f is None or not sys.fiber_scale:
            return sys.kappa * self.lin, sys.kappa * self.e0
        return sys.kappa * self.lin + sys.fiber_scale * self.lin_f, sys.kappa * self.e0 + sys.fiber_scale * self.e0_f


@dataclass(frozen=True)
class _StepTerms:
    """Everything one step's potential needs besides Z (3 x 4m arrays unless noted).

    ref: the elastic reference; Fr (9, r): the rig's cluster gradients;
    z: the state now; zh: the inertial prediction 2 z - z_prev; dq: the rig's
    momentum change q - (2 q_now - q_before); Z0: the global step's constant part;
    contact: the step's contact rows (:mod:`core.contact.penalty`), None without contact.
    """

    ref: _Reference
    Fr: np.ndarray
    z: np.ndarray
    zh: np.ndarray
    dq: np.ndarray
    Z0: np.ndarray
    contact: ContactRows | None = None


@dataclass(frozen=True)
class _Point:
    """The co-rotational solver's iterate: Z (3 x 4m), its cluster gradients F, targets T = R S and
    volume rotations Rv (9, r), volume traces s (r,) and the step's potential (J)."""

    Z: np.ndarray
    F: np.ndarray
    T: np.ndarray
    Rv: np.ndarray
    s: np.ndarray
    energy: float


def _discard(_: float) -> None:
    """Where energies go when nobody records them."""


def _twists(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The twist directions and curvatures of the signed nuclear norm at P (r, 3, 3).

    For P = U diag(s) V^T with U, V rotations (s_3 < 0 when det P < 0),
    returns t (r, 3, 3, 3): t[c, k] = (u_i v_j^T - u_j v_i^T) / sqrt 2 for the
    pairs (i, j) = (0, 1), (0, 2), (1, 2), unit Frobenius norm, and
    w (r, 3) = 2 / (s_i + s_j), the nuclear norm's curvature along them
    (inf where s_i + s_j <= 0, the callers clamp it).
    """
    U, sig, Vt = np.linalg.svd(P)
    d = np.sign(np.linalg.det(U) * np.linalg.det(Vt))
    d[d == 0] = 1.0
    U[:, :, 2] *= d[:, None]
    sig[:, 2] *= d
    i, j = np.array([0, 0, 1]), np.array([1, 2, 2])
    t = (U[:, :, i].transpose(0, 2, 1)[:, :, :, None] * Vt[:, j, None, :]) - (
        U[:, :, j].transpose(0, 2, 1)[:, :, :, None] * Vt[:, i, None, :]
    )
    den = sig[:, i] + sig[:, j]
    with np.errstate(divide="ignore"):
        w = np.where(den > 0.0, 2.0 / np.maximum(den, 1e-300), np.inf)
    return t / np.sqrt(2.0), w


class Simulator:
    """Steps a :class:`ReducedModel` forward in time."""

    def __init__(
        self, model: ReducedModel, settings: SimulationSettings | None = None, contact: SurfaceContact | None = None
    ) -> None:
        """contact: the surface's contact samples; the obstacles come per step (``step(obstacles=...)``)."""
        self.model = model
        self.contact = contact
        self.settings = (settings or SimulationSettings()).validated()
        s = self.settings
        self.arap = uses_arap(s.material, model)
        self.pose = s.rest_state == "pose"
        self._ih2 = 1.0 / (s.time_step * s.time_step)
        # Symmetric to the last bit, so transposed products equal the untransposed ones.
        self._A_L = 0.5 * (model.A_L + model.A_L.T)
        self._A_M = 0.5 * (model.A_M + model.A_M.T)
        self._M_inv = np.linalg.inv(self._A_M)  # the residual's metric (4m x 4m)
        order = rows.cluster_order(model.r)
        self._C = np.ascontiguousarray(model.C_W[order])  # Z -> cluster rows
        self._C_R = None if model.C_R is None else np.ascontiguousarray(model.C_R[order])  # P -> the rig's rows
        self._set_fibers(model)
        self._lam = np.zeros(model.r) if self.arap else model.cluster_lam
        self._systems: dict[tuple[float, float], _System] = {}
        self._sys = self.system(s.stiffness_scale, s.damping)
        self._size = character_size(model.X)
        self._mass_total = float(model.masses.sum())
        g = np.asarray(s.gravity, dtype=np.float64)
        self._gravity = None if not g.any() else np.outer(g, model.basis().T @ model.masses)
        self._A_RR = None
        if model.rig_weights is not None and not self.pose:
            YR = lbs_basis(model.rig_weights, model.X)
            self._A_RR = YR.T @ (scalar_laplacian(model.mesh(), model.mu) @ YR)
        self._basis: np.ndarray | None = None
        self._positions_ops: tuple[np.ndarray, np.ndarray, sp.csr_matrix, sp.csr_matrix] | None = None

    def _set_fibers(self, model: ReducedModel) -> None:
        """The plain and fiber clusters' masks, their mu rows and the fibers' quadratic part (None: no fibers).

        The fibers act with the "pose" rest state only: the "rest" energy's rig terms have no fiber part.
        """
        fiber = np.zeros(model.r, dtype=bool) if model.fiber is None else np.asarray(model.fiber, dtype=bool)
        on = fiber.any() and model.A_F is not None and self.pose and self.settings.fiber_scale > 0
        self._fiber = fiber
        self._fiber_scale = float(self.settings.fiber_scale) if on else 0.0
        self._A_F = 0.5 * (model.A_F + model.A_F.T) if on and model.A_F is not None else None
        # mu_c at position j r + c of a (3, 3r) row block, for the plain clusters and the fiber ones.
        self._mu_rows = np.tile(np.where(fiber, 0.0, model.cluster_mu), 3)
        self._mu_rows_f = np.tile(np.where(fiber, model.cluster_mu, 0.0), 3) if on else None

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
        h = self.settings.time_step
        A_k = kappa * self._A_L if self._A_F is None else kappa * self._A_L + self._fiber_scale * self._A_F
        H = 2.0 * A_k + (self._ih2 + c / h) * self._A_M
        chol = sla.cho_factor(H)
        K_F = sla.cho_solve(chol, self._C.T)
        scale = np.where(self._fiber, self._fiber_scale, kappa)  # per cluster: the fibers keep their own
        mu2 = 2.0 * scale * self.model.cluster_mu
        new = _System(
            kappa=kappa,
            damping=c,
            ch=c / h,
            H=H,
            H_inv=sla.cho_solve(chol, np.eye(len(H))),
            K_F=K_F,
            K_R=K_F * np.tile(mu2, 3),
            mu2=mu2,
            lam=scale * self._lam,
            A_k=A_k,
            fiber_scale=self._fiber_scale,
        )
        if len(self._systems) >= SYSTEM_CACHE:
            self._systems.pop(next(iter(self._systems)))
        self._systems[key] = new
        return new

    # ------------------------------------------------------------------ rig input
    def _rig_terms_lbs(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        m = self.model
        if m.A_LR is None or m.A_MR is None or self._C_R is None:
            raise SimulationError("this model was built without an LBS rig; drive it with rig positions instead")
        P = rig_matrix(p)
        if P.shape[0] != m.A_LR.shape[1]:
            raise SimulationError(f"expected {3 * m.A_LR.shape[1]} rig parameters, got {np.size(p)}")
        Fr = np.matmul(self._C_R, P.T[:, :, None]).reshape(9, -1)
        if self.pose:
            return m.A_MR @ P, Fr, None, 0.0
        assert self._A_RR is not None
        return m.A_MR @ P, Fr, m.A_LR @ P, float(np.sum(P * (self._A_RR @ P)))

    def _rig_terms_positions(self, x_rig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        if self._positions_ops is None:
            m = self.model
            mesh = m.mesh()
            Y = m.basis()
            Ls = scalar_laplacian(mesh, m.mu)
            CD = cluster_rows_operator(mesh, m.labels, m.mu, m.fibers())
            self._positions_ops = (np.asarray(Ls @ Y), m.masses[:, None] * Y, CD, Ls)
        LY, MY, CD, Ls = self._positions_ops
        x = np.asarray(x_rig, dtype=np.float64)
        if x.shape != (self.model.n, 3):
            raise SimulationError(f"rig positions must have shape ({self.model.n}, 3), got {x.shape}")
        Fr = rows.from_stacked(np.asarray(CD @ x))
        if self.pose:
            return MY.T @ x, Fr, None, 0.0
        return MY.T @ x, Fr, LY.T @ x, float(np.sum(x * (Ls @ x)))

    def _rig_terms(
        self, p: np.ndarray | None, x_rig: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        """(q (4m x 3), F_rig (9, r), b_L, constant) for an LBS pose p or rig positions x_rig; exactly one.

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
    def _elastic_reference(self, Fr: np.ndarray, bL: np.ndarray | None, const: float) -> _Reference:
        """The terms that set where the flesh rests, for the rig's cluster gradients Fr (9, r).

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
            plain = float(m.cluster_mu[~self._fiber].sum())
            return _Reference(2.0 * bL.T, const + 3.0 * plain, np.full(m.r, 3.0), None)
        R0 = rotation_rows(Fr)
        S = rows.product(rows.transpose(R0), Fr)  # R0^T F_rig: the rig's stretch per cluster
        S = 0.5 * (S + rows.transpose(S))
        lin = (2.0 * self._mu_rows * Fr.reshape(3, -1)) @ self._C
        e0 = 2.0 * float(self._mu_rows[: m.r] @ rows.traces(Fr, Fr))
        if self._mu_rows_f is None:
            return _Reference(lin, e0, rows.traces(R0, Fr), S)
        lin_f = (2.0 * self._mu_rows_f * Fr.reshape(3, -1)) @ self._C
        e0_f = 2.0 * float(self._mu_rows_f[: m.r] @ rows.traces(Fr, Fr))
        return _Reference(lin, e0, rows.traces(R0, Fr), S, lin_f, e0_f)

    def _elastic(self, sys: _System, ref: _Reference, Z: np.ndarray, a: np.ndarray, s: np.ndarray) -> float:
        """kappa Psi(Z) (J) for Z (3 x 4m) given its traces a and s (r,), at the system's stiffness scales.

        The one place the elastic energy is written: the step's potential, its
        record and ``elastic_energy`` all evaluate it here.
        """
        lin, e0 = ref.scaled(sys)
        e = np.vdot(Z, Z @ sys.A_k + lin) + e0 - float(sys.mu2 @ a)
        return float(e + 0.5 * (sys.lam @ (s - ref.s_ref) ** 2))

    def _potential(self, sys: _System, t: _StepTerms, Z: np.ndarray, a: np.ndarray, s: np.ndarray) -> float:
        """The incremental potential E(Z) of one step (J), Z (3 x 4m)."""
        d = Z - t.zh
        e = self._elastic(sys, t.ref, Z, a, s) + self._ih2 * float(np.vdot(d, 0.5 * (d @ self._A_M) + t.dq))
        if sys.ch:
            dz = Z - t.z
            e += 0.5 * sys.ch * float(np.vdot(dz, dz @ self._A_M))
        if self._gravity is not None:
            e -= float(np.vdot(Z, self._gravity))
        if t.contact is not None:
            e += t.contact.energy(Z)
        return e

    # ------------------------------------------------------------------ the two halves of an iteration
    def _gradients(self, Z: np.ndarray, Fr: np.ndarray) -> np.ndarray:
        """Cluster deformation gradients F (9, r) of the rig plus secondary motion Z (3 x 4m)."""
        return np.matmul(self._C, Z[:, :, None]).reshape(9, -1) + Fr

    def _local(self, F: np.ndarray, S: np.ndarray | None) -> np.ndarray:
        """The local step: targets T_c = R_c S_c (9, r) with R_c = polar(F_c S_c); S = None is the identity."""
        if S is None:
            return rotation_rows(F)
        return rows.product(rotation_rows(rows.product(F, S)), S)

    def _traces(self, F: np.ndarray, T: np.ndarray, S: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, Rv, s): a_c = tr(T_c^T F_c), the volume rotations polar(F_c) (9, r) and s_c = tr(Rv_c^T F_c)."""
        a = rows.traces(T, F)
        if S is None:
            return a, T, a
        Rv = rotation_rows(F)
        return a, Rv, rows.traces(Rv, F)

    def _global(self, K: np.ndarray, W: np.ndarray, Z0: np.ndarray) -> np.ndarray:
        """Z = K W + Z0 (3 x 4m) for cluster rows W (9, r) and K (4m x 3r) in cluster order."""
        return np.matmul(K, W.reshape(3, -1, 1)).reshape(3, -1) + Z0

    def _rms(self, dZ: np.ndarray) -> float:
        """Mass-weighted RMS (m) of the displacement change u = Y dZ, dZ (3 x 4m)."""
        return float(np.sqrt(max(np.vdot(dZ, dZ @ self._A_M), 0.0) / self._mass_total))

    # ------------------------------------------------------------------ step
    def _terms(self, sys: _System, state: SimState, q: np.ndarray, Fr: np.ndarray, ref: _Reference) -> _StepTerms:
        z = state.z.T
        zh = 2.0 * z - state.z_prev.T
        dq = (q - (2.0 * state.q - state.q_prev)).T
        rhs = self._ih2 * (zh @ self._A_M - dq) - ref.scaled(sys)[0]
        if sys.ch:
            rhs += sys.ch * (z @ self._A_M)
        if self._gravity is not None:
            rhs += self._gravity
        return _StepTerms(ref=ref, Fr=Fr, z=z, zh=zh, dq=dq, Z0=rhs @ sys.H_inv)

    def step(
        self,
        state: SimState,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        frame: float | None = None,
        record: list[float] | None = None,
        stiffness_scale: float | None = None,
        damping: float | None = None,
        obstacles: list[Ground | MeshCollider] | None = None,
    ) -> tuple[SimState, StepReport]:
        """Advance one time step to the rig pose p (LBS parameters) or rig positions x_rig (n, 3).

        stiffness_scale, damping: this step's values when they are animated
        (default: the settings').  ``record``, if given, receives the energy
        after every local and every global step (tests of monotonicity).
        obstacles: the ground and colliders at this step's time, pushing the
        surface's samples out (needs a ``contact``; module doc of
        :mod:`core.contact.penalty`).
        Raises :class:`SimulationError` naming ``frame`` on non-finite input or blow-up.
        """
        where = f"frame {frame:g}: " if frame is not None else f"step {state.step + 1}: "
        self._check_input(state, p, x_rig, where)
        sys = self._sys
        if stiffness_scale is not None or damping is not None:
            s = self.settings
            sys = self.system(
                s.stiffness_scale if stiffness_scale is None else stiffness_scale,
                s.damping if damping is None else damping,
            )
        q, Fr, bL, const = self._rig_terms(p, x_rig)
        terms = self._with_contact(
            self._terms(sys, state, q, Fr, self._elastic_reference(Fr, bL, const)), state, p, x_rig, obstacles
        )
        solve = self._solve_arap if self.arap else self._solve_corotational
        Z, report = solve(sys, terms, record)
        if self.contact is not None and obstacles:  # the body parts' pairs are not re-linearised
            Z, report = self._relinearised(sys, terms, record, Z, report, p, x_rig, obstacles)
        z = np.ascontiguousarray(Z.T)
        self._check(z, where, report)
        return SimState(z=z, z_prev=state.z, q=q, q_prev=state.q, step=state.step + 1), report

    def _with_contact(
        self,
        t: _StepTerms,
        state: SimState,
        p: np.ndarray | None,
        x_rig: np.ndarray | None,
        obstacles: list[Ground | MeshCollider] | None,
    ) -> _StepTerms:
        """The step's terms with its contact rows, where there is contact and an obstacle or a body part near."""
        if self.contact is None or not (obstacles or self.contact.pairs is not None):
            return t
        found = self.contact.step_rows(p, x_rig, state.z.T, state.z_prev.T, obstacles)
        return t if found is None else replace(t, contact=found)

    def _relinearised(
        self,
        sys: _System,
        t: _StepTerms,
        record: list[float] | None,
        Z: np.ndarray,
        report: StepReport,
        p: np.ndarray | None,
        x_rig: np.ndarray | None,
        obstacles: list[Ground | MeshCollider],
    ) -> tuple[np.ndarray, StepReport]:
        """The step solved again while its solution Z (3 x 4m) violates planes it was not given (a sample
        that crossed onto another face of a collider): those join its rows (:mod:`core.contact.surface`)."""
        assert self.contact is not None
        x_s = self.contact.rig_positions(p, x_rig)
        solve = self._solve_arap if self.arap else self._solve_corotational
        for _ in range(PASSES):
            extra = self.contact.violated(x_s, Z, obstacles, t.z)
            if extra is None:
                break
            t = replace(t, contact=extra if t.contact is None else concatenate([t.contact, extra]))
            Z, report = solve(sys, t, record)
        return Z, report

    def _solve_arap(self, sys: _System, t: _StepTerms, record: list[float] | None) -> tuple[np.ndarray, StepReport]:
        """Local-global iterations: rotations, then one prefactored solve; monotone in the energy.

        The gradient at Z is H (Z - Z_new) (the global step minimises the
        majoriser whose gradient at Z is the energy's), so the residual costs
        one 4m x 4m product per iteration.  Local-global converges linearly,
        fast where the motion is mostly stretch and slowly where rotations
        carry it (measured at tolerance 1e-6: 8-11 iterations per step on
        average on the robot and rigged_simple, 118 and up to 206 on the
        fox's tail).  From the third iteration on, the residual's last ratio
        predicts how many more it needs; when that is more than
        LOCAL_GLOBAL_BUDGET (an iteration costs ~0.1 ms, a Newton iteration
        ~1.5 ms) or than the cap leaves room for, the step goes on with the
        Newton of the co-rotational path (1-3 iterations) from where it is.

        With contact the global step minimises the majoriser plus the contact
        rows exactly (a piecewise quadratic, :meth:`ContactRows.minimise`), so
        the energy still never increases; the gradient at Z is then
        H (Z - Z_free) plus the rows' own, with Z_free the global step without them.
        """
        observe = self._energy_observer(sys, t, record)
        tol = self.settings.tolerance * self._size
        n_iter = self.settings.max_iterations
        Z = t.z
        F = self._gradients(Z, t.Fr)
        residual, previous, it, converged = np.inf, np.inf, 0, False
        for it in range(1, n_iter + 1):
            T = self._local(F, t.ref.S)
            observe(Z, F, T)
            Z_new = self._global(sys.K_R, T, t.Z0)
            g = None
            if t.contact is not None:
                g = (Z - Z_new) @ sys.H + t.contact.gradient(Z)
                Z_new = t.contact.minimise(sys.H, Z_new, Z)
            F = self._gradients(Z_new, t.Fr)
            observe(Z_new, F, T)  # with the last local step's rotations
            if tol > 0.0:
                residual = self._residual((Z - Z_new) @ sys.H if g is None else g)
            elif it == n_iter:  # with tolerance 0 only the final update is reported
                residual = self._rms(Z_new - Z)
            Z = Z_new
            if residual <= tol:
                converged = True
                break
            if tol > 0.0 and it >= 3 and it < n_iter:
                rate = residual / previous
                room = min(LOCAL_GLOBAL_BUDGET, n_iter - it - NEWTON_RESERVE)
                if not rate < 1.0 or np.log(tol / residual) < room * np.log(rate):  # more than ``room`` to go
                    return self._solve_corotational(sys, t, record, start=Z, done=it)
            previous = residual
        a = rows.traces(T, F)
        energy = self._potential(sys, t, Z, a, a)
        return Z, StepReport(iterations=it, residual=residual, energy=energy, converged=converged)

    def _energy_observer(
        self, sys: _System, t: _StepTerms, record: list[float] | None
    ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
        """observe(Z, F, T): appends the ARAP potential at Z with targets T to ``record``, if any."""
        if record is None:
            return lambda Z, F, T: None

        def observe(Z: np.ndarray, F: np.ndarray, T: np.ndarray) -> None:
            a = rows.traces(T, F)
            record.append(self._potential(sys, t, Z, a, a))

        return observe

    def _solve_corotational(
        self, sys: _System, t: _StepTerms, record: list[float] | None, start: np.ndarray | None = None, done: int = 0
    ) -> tuple[np.ndarray, StepReport]:
        """Projected Newton (``_newton``) and an Armijo line search on the true energy (module doc).

        start: the first iterate (3 x 4m; default the state now); done: the
        iterations already spent on it (ARAP's local-global ones), counted
        against the cap.  Each iteration measures the residual at the current
        iterate first, so the exit residual is the returned iterate's own;
        there is at least one update and at most ``max_iterations`` in all.  A
        line search without decrease after MAX_BACKTRACKS halvings ends the
        step at the current iterate.
        """
        keep = _discard if record is None else record.append
        tol = self.settings.tolerance * self._size
        n_iter = self.settings.max_iterations
        Z = t.z if start is None else start
        point = self._evaluate(sys, t, Z, self._gradients(Z, t.Fr))
        keep(point.energy)
        residual, it, backtracks, converged, stalled = np.inf, done, 0, False, False
        last = np.zeros_like(t.z)
        for k in range(done, n_iter + 1):
            g = self._gradient(sys, t, point)
            if tol > 0.0:
                residual = self._residual(g)
                # At least one update: the start (the state now) may be within the tolerance of a
                # step's solution, but stopping there every step would freeze a slow motion.
                if residual <= tol and k > 0:
                    converged = True
                    break
            if k == n_iter:
                break
            dZ = self._newton(sys, t, point, g)
            slope = float(np.vdot(g, dZ))  # < 0: the system is positive definite
            if -slope <= ROUNDOFF * abs(point.energy):
                # The predicted decrease is below the energy's round-off: no line search can see
                # it, and trying only adds noise (a tolerance of 0 runs to here).
                converged = True
                break
            dF = np.matmul(self._C, dZ[:, :, None]).reshape(9, -1)
            alpha, accepted = 1.0, None
            # The forced first update of a start already within the tolerance is optional: one try.
            for _ in range(1 if residual <= tol else MAX_BACKTRACKS + 1):
                trial = self._evaluate(sys, t, point.Z + alpha * dZ, point.F + alpha * dF)
                if trial.energy <= point.energy + ARMIJO * alpha * slope:
                    accepted = trial
                    break
                alpha *= 0.5
                backtracks += 1
            if accepted is None or not slope < 0.0:
                # No decrease to be found: keep the best iterate there is (within the tolerance
                # already when the start was, at round-off).
                stalled, converged = True, residual <= tol
                break
            point = accepted
            last = alpha * dZ
            it = k + 1
            keep(point.energy)
        if tol == 0.0:
            residual = self._rms(last)
        return point.Z, StepReport(
            iterations=it,
            residual=residual,
            energy=point.energy,
            backtracks=backtracks,
            converged=converged,
            stalled=stalled,
        )

    def _newton(self, sys: _System, t: _StepTerms, point: _Point, g: np.ndarray) -> np.ndarray:
        """The direction dZ (3 x 4m) solving A vec(dZ) = -vec(g) with a positive definite Newton matrix A.

        A = I3 (x) H + sum_c lam_c u_c u_c^T + sum_(c, k) w_ck v_ck v_ck^T (12m x 12m, vec row-major, index 4m i + a):

        * u_c = d s_c / dZ: s_c = tr(Rv_c^T F_c) has gradient Rv_c in F_c, and
          dF_c[i, j] = sum_a C[j r + c, a] dZ[i, a], so u_c[i, a] = sum_j Rv_c[i, j] C[j r + c, a]
          (the volume term's Gauss-Newton part);
        * the curvature of the rotations.  a_c = tr(R_c^T F_c S_c) is the (signed)
          nuclear norm of P = F_c S_c, whose Hessian is sum_(i<j) 2/(s_i + s_j) t_ij t_ij^T
          over the twists t_ij = U (e_i e_j^T - e_j e_i^T) V^T / sqrt 2 of P's SVD
          (zero on stretches).  The ARAP term -2 kappa mu_c a_c contributes
          -2 kappa mu_c 2/(s_i + s_j) along t_ij S_c (capped at TWIST_CAP / |t S|^2
          where a cluster is flattened or inverted); the volume term adds
          lam_c (s_c - s_ref,c) times s_c's own twist curvature where that is
          positive (s_c > s_ref,c), and nothing where it is concave.

        That exact curvature is negative along the twists of compressed
        clusters; the inertia and the rest of A_L usually keep A positive
        definite anyway.  Where the factorisation fails, the twist terms are
        clamped so that none exceeds the 2 kappa mu_c |dF|^2 that A_L holds
        for its cluster (projected Newton: with every clamp active this is the
        local-global majoriser again), and if that fails too (round-off) the
        Gauss-Newton matrix without twists is used.  Measured on a floppy
        creature hopping 63 % of its size: the projected matrix alone needed up
        to 27 iterations per step, the exact one first at most 12.  H alone
        (local-global) converges linearly and slowly when the rotations carry
        much of the motion (the fox's tail: ~100 iterations).
        O(m r (m + 1) + m^3) per try: ~1-3 ms at m = 16, r = 200.
        """
        q = g.shape[1]
        r = point.F.shape[1]
        Cc = self._C.reshape(3, r, q)
        vecs = [point.Rv.reshape(3, 3, r).transpose(2, 0, 1)]  # (r, 3, 3) each: directions in F space
        coefs = [sys.lam]
        clusters = [np.arange(r)]
        S = None if t.ref.S is None else t.ref.S.reshape(3, 3, r).transpose(2, 0, 1)
        F = point.F.reshape(3, 3, r).transpose(2, 0, 1)
        twists, w = _twists(F if S is None else F @ S)
        if S is not None:
            twists = twists @ S[:, None]
        norm2 = np.einsum("ckij,ckij->ck", twists, twists)
        vecs.append(twists.reshape(-1, 3, 3))
        coefs.append((-sys.mu2[:, None] * np.minimum(w, TWIST_CAP / norm2)).ravel())
        arap_twists = len(coefs) - 1
        clusters.append(np.repeat(np.arange(r), 3))
        if not sys.lam.any():  # ARAP: no volume term
            del vecs[0], coefs[0], clusters[0]
            arap_twists = 0
        else:
            excess = sys.lam * np.maximum(point.s - t.ref.s_ref, 0.0)
            on = excess > 0.0
            if on.any():
                tv, wv = _twists(F[on])  # s_c's own curvature: F's twists, not F S's
                vecs.append(tv.reshape(-1, 3, 3))
                coefs.append((excess[on][:, None] * wv).ravel())
                clusters.append(np.repeat(np.flatnonzero(on), 3))
        D = np.concatenate(vecs)  # (k, 3, 3) directions in F space, cluster ``clusters[k]``
        V = np.einsum("kij,jka->kia", D, Cc[:, np.concatenate(clusters)]).reshape(len(D), 3 * q)
        # First the exact curvature (the inertia and the rest of A_L usually keep the matrix positive
        # definite); where the factorisation fails, the projected one; then Gauss-Newton without twists.
        exact = np.concatenate(coefs)
        coefs[arap_twists] = np.maximum(coefs[arap_twists], (-sys.mu2[:, None] / norm2).ravel())
        projected = np.concatenate(coefs)
        volume = slice(0, r if sys.lam.any() else 0)
        contact = None if t.contact is None else t.contact.hessian(point.Z)  # convex: never breaks definiteness
        for coef, use in ((exact, slice(None)), (projected, slice(None)), (exact, volume)):
            A = (V[use].T * coef[use]) @ V[use]
            if contact is not None:
                A += contact
            for i in range(3):  # I3 (x) H: three diagonal blocks
                A[i * q : (i + 1) * q, i * q : (i + 1) * q] += sys.H
            try:
                L = np.linalg.cholesky(A)  # numpy's: releases the GIL, and leaves sla.cho_factor to the systems
            except np.linalg.LinAlgError:
                continue
            return -sla.cho_solve((L, True), g.ravel(), check_finite=False).reshape(3, q)
        raise SimulationError("the solver's Newton matrix is not positive definite; the state holds NaN or inf")

    def _gradient(self, sys: _System, t: _StepTerms, point: _Point) -> np.ndarray:
        """dE/dZ (3 x 4m) at ``point``: the global step with the volume force frozen is Z - H^-1 g."""
        W = point.T * sys.mu2 - point.Rv * (sys.lam * (point.s - t.ref.s_ref))
        g = (point.Z - self._global(sys.K_F, W, t.Z0)) @ sys.H
        return g if t.contact is None else g + t.contact.gradient(point.Z)

    def step_residual(
        self,
        state: SimState,
        z: np.ndarray,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        stiffness_scale: float | None = None,
        damping: float | None = None,
        obstacles: list[Ground | MeshCollider] | None = None,
    ) -> float:
        """The residual (m, module doc) of the step from ``state`` to the rig pose at secondary motion z (4m x 3).

        What ``step`` stops on, measured independently of it (tests, benchmarks).
        """
        s = self.settings
        sys = self.system(
            s.stiffness_scale if stiffness_scale is None else stiffness_scale, s.damping if damping is None else damping
        )
        q, Fr, bL, const = self._rig_terms(p, x_rig)
        t = self._terms(sys, state, q, Fr, self._elastic_reference(Fr, bL, const))
        t = self._with_contact(t, state, p, x_rig, obstacles)
        Z = np.asarray(z, dtype=np.float64).T
        return self._residual(self._gradient(sys, t, self._evaluate(sys, t, Z, self._gradients(Z, Fr))))

    def _residual(self, g: np.ndarray) -> float:
        """h^2 sqrt(g^T A_M^-1 g / mass) (m) for the potential's gradient g (3 x 4m): see the module doc."""
        h = self.settings.time_step
        return h * h * float(np.sqrt(max(np.vdot(g, g @ self._M_inv), 0.0) / self._mass_total))

    def _evaluate(self, sys: _System, t: _StepTerms, Z: np.ndarray, F: np.ndarray) -> _Point:
        """The co-rotational iterate at Z (3 x 4m) with cluster gradients F: local step, volume and energy."""
        T = self._local(F, t.ref.S)
        a, Rv, s = self._traces(F, T, t.ref.S)
        return _Point(Z=Z, F=F, T=T, Rv=Rv, s=s, energy=self._potential(sys, t, Z, a, s))

    def elastic_energy(self, z: np.ndarray, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> float:
        """Hyper-reduced elastic energy kappa * Psi (J) of secondary motion z on the rig pose p or x_rig.

        Zero at rest for "rest", and zero at z = 0 on every pose for "pose".
        """
        _, Fr, bL, const = self._rig_terms(p, x_rig)
        ref = self._elastic_reference(Fr, bL, const)
        Z = np.asarray(z, dtype=np.float64).T
        F = self._gradients(Z, Fr)
        a, _, s = self._traces(F, self._local(F, ref.S), ref.S)
        return self._elastic(self._sys, ref, Z, a, s)

    def kinetic_energy(self, state: SimState) -> float:
        """Kinetic energy (J) of the secondary motion alone, from the last step's velocity."""
        dz = state.z - state.z_prev
        return 0.5 * self._ih2 * float(np.vdot(dz, self._A_M @ dz))

    def _check_input(self, state: SimState, p: np.ndarray | None, x_rig: np.ndarray | None, where: str) -> None:
        if (p is None) == (x_rig is None):
            raise SimulationError("give exactly one of rig parameters p or rig positions x_rig")
        if not np.isfinite(np.asarray(p if p is not None else x_rig, dtype=np.float64)).all():
            raise SimulationError(
                where + "the rig pose contains NaN or infinite values; check the armature's animation"
            )
        if not (np.isfinite(state.z).all() and np.isfinite(state.z_prev).all()):
            raise SimulationError(where + "the simulation state holds NaN; clear the cache and simulate again")

    def _check(self, z: np.ndarray, where: str, report: StepReport | None = None) -> None:
        """Raise on NaN or blow-up, naming the cause: an unconverged solve, or (converged) the rig's motion."""
        cause = (
            "the rig moves too far in one step (a jump between frames?); check the rig, or add sub-steps"
            if report is None or report.converged
            else f"the solver did not converge ({report.iterations} iterations"
            + (", line search stalled" if report.stalled else "")
            + "); raise Iterations or add sub-steps"
        )
        if not np.isfinite(z).all():
            raise SimulationError(where + "the simulation produced NaN: " + cause)
        rms = float(np.sqrt(np.vdot(z, self._A_M @ z) / self._mass_total))
        if rms > BLOWUP_FACTOR * self._size:
            raise SimulationError(
                where
                + f"the simulation blew up (secondary motion {rms:.3g} m on a {self._size:.3g} m character): "
                + cause
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

    def rebound(
        self,
        model: ReducedModel,
        gravity_row: np.ndarray | None = None,
        stiffness_scale: float | None = None,
        damping: float | None = None,
    ) -> Simulator:
        """This solver on another subspace of the same mesh, rig and clusters (a pose-space blend).

        Only what depends on the basis is replaced: the products, the factorised
        system (O(m^3 + m^2 r)) and the gravity force, from ``gravity_row`` = Y^T m
        (4m,) when given (else one pass over the mesh).  The system is factorised for
        ``stiffness_scale`` and ``damping`` when given (the next step's animated values,
        so that step finds it ready), else for this solver's.  The character size, the
        total mass and the rig's own terms are the mesh's and stay.  States carry
        over as reduced coordinates (the seed's §5.2: no re-projection).
        """
        new = copy.copy(self)
        new.model = model
        new._A_L = 0.5 * (model.A_L + model.A_L.T)
        new._A_M = 0.5 * (model.A_M + model.A_M.T)
        new._M_inv = np.linalg.inv(new._A_M)
        new._C = np.ascontiguousarray(model.C_W[rows.cluster_order(model.r)])
        new._set_fibers(model)
        new._systems = {}
        new._sys = new.system(
            self._sys.kappa if stiffness_scale is None else stiffness_scale,
            self._sys.damping if damping is None else damping,
        )
        g = np.asarray(self.settings.gravity, dtype=np.float64)
        if g.any():
            row = model.basis().T @ model.masses if gravity_row is None else np.asarray(gravity_row, dtype=np.float64)
            new._gravity = np.outer(g, row)
        new._basis = None
        new._positions_ops = None
        return new

    def with_settings(self, **changes: object) -> Simulator:
        return Simulator(self.model, replace(self.settings, **changes), self.contact)  # type: ignore[arg-type]
