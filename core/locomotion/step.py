"""The actuated local-global step: backward Euler in the unconstrained skinning subspace.

Each step minimises (Z: q x 3, Zt = 2 Z_now - Z_prev the inertial prediction)

    E(Z) = 1/(2h^2) ||Y (Z - Zt)||_M^2 - sum_a m_a g . x_a
         + 1/2 sum_e mu_e V_e ||F_e - R_c(e)||^2                 (passive ARAP, Cp clusters)
         + 1/2 sum_e gamma_e V_e ||F_e - Omega_c(e) Y_e(a)||^2   (actuation, Ca clusters)

over the rotations and Z, plus the ground contact of ``ground.py`` (a one-sided normal penalty and
a Coulomb friction drag fixed for the step, both convex in Z).
Derived here rather than copied (the seed's eqs. 10, 11, 36, 39 and 44 differ
by factors of 2 and signs): with the rotations fixed E is the quadratic
1/2 tr(Z^T Q Z) - tr(Z^T F) + const with

    Q = A_M / h^2 + A_mu + A_gamma
    F = A_M Zt / h^2 + mass_Y g^T + sum_c P[c] R_c^T + sum_c (K[c] abar) Omega_c^T

(P, K from ``covariance.py``); with Z fixed each rotation is the polar factor
of its cluster covariance, det fixed to +1 (:func:`rotation`, a batched SVD).
Both steps are exact minimisations, so the energy evaluated at the optimal
rotations never rises; an iteration that raises it beyond round-off stops the
step at the lower iterate and says so (``StepReport.energy_rose``).

The actuation adds no net force or torque: F_e and Y_e are unchanged by a
translation of x, and E_a(Z R^T) = E_a(Z) for every rotation R (Omega_c turns
with the body), so its gradient is orthogonal to the rigid motions, which
the subspace contains.  Rest is a fixed point with abar = [0, ..., 0, 1]
(Y_e = I, every term at its minimum).

Stopping: the mass-weighted RMS move of the last global step below
``tolerance`` times the RMS radius (scale-free); ``max_iterations`` is the
safety cap, reported when hit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..contact.ground import ContactStep, GroundContact, GroundPlane
from ..errors import SimulationError
from .model import LocomotionModel

# Relative round-off allowance when checking that an iteration did not raise the energy.
ENERGY_ROUNDOFF = 1e-11


@dataclass(frozen=True)
class StepSettings:
    """dt (s); gravity (3,) m/s^2; tolerance: share of the radius; max_iterations: safety cap per solve;
    contact_depth: how far (share of the radius) the body's weight, spread over the samples, sinks into the
    ground (sets the penalty's stiffness); stick_speed: sliding speed (radii per second) below which
    friction grips."""

    dt: float = 1.0 / 60.0
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    tolerance: float = 1e-6
    max_iterations: int = 200
    contact_depth: float = 1e-5
    stick_speed: float = 1e-3

    def __post_init__(self) -> None:
        if not self.dt > 0:
            raise SimulationError("the time step must be positive")
        if self.max_iterations < 1:
            raise SimulationError("allow at least one solver iteration per step")


@dataclass(frozen=True)
class StepReport:
    """iterations; residual (m) of the last iteration; converged; energy_rose: an iteration
    raised the energy (the step kept the lower iterate); active: samples in contact."""

    iterations: int
    residual: float
    converged: bool
    energy_rose: bool
    active: int


@dataclass(frozen=True)
class State:
    """Z (q, 3) now and Z_prev (q, 3) one step before; forces (k,): the ground's push on each sample
    at Z (N; None off the ground), which sets the next step's friction."""

    Z: np.ndarray
    Z_prev: np.ndarray
    forces: np.ndarray | None = None

    @property
    def z(self) -> np.ndarray:
        """Z under the name :class:`core.dynamics.drive.State` reads (FrameSimulation sizes its cache by it)."""
        return self.Z


def rotation(H: np.ndarray) -> np.ndarray:
    """The closest proper rotations (c, 3, 3) to H (c, 3, 3): U diag(1, 1, det(U V^T)) V^T of H = U S V^T.

    A handful of clusters per iteration: one batched 3x3 SVD is the cheapest exact polar factor here
    (a third of ``core.linalg.polar``'s cost, which is built for thousands of tets).
    """
    U, _, Vt = np.linalg.svd(H)
    U[:, :, 2] *= np.sign(np.linalg.det(U @ Vt))[:, None]  # det fix: reflect the weakest axis
    return U @ Vt


def rest_state(model: LocomotionModel) -> State:
    return State(model.rest.copy(), model.rest.copy())


def linear_momentum(model: LocomotionModel, state: State, dt: float) -> np.ndarray:
    """Sum of m_a v_a (3,) from the last step's velocity, in O(q)."""
    return model.mass_Y @ (state.Z - state.Z_prev) / dt


def body_rotation(model: LocomotionModel, Z: np.ndarray) -> np.ndarray:
    """Best-fit rotation (3, 3) of the whole body from its rest shape: polar(sum_a m_a x_a (X_a - com0)^T)."""
    return rotation((Z.T @ model.orient)[None])[0]


class FreeStep:
    """The global step without contact: one factor of Q for every step."""

    def __init__(self, Q: np.ndarray) -> None:
        self.factor = sla.cho_factor(Q)
        self.active = np.zeros(0, dtype=bool)

    def solve(self, F: np.ndarray) -> np.ndarray:
        return sla.cho_solve(self.factor, F)

    def energy(self, Z: np.ndarray) -> float:
        return 0.0


class Stepper:
    """Advances a :class:`State` by one backward-Euler step under an actuation abar (m+1,)."""

    def __init__(self, model: LocomotionModel, settings: StepSettings, ground: GroundPlane | None = None) -> None:
        self.model, self.settings, self.ground = model, settings, ground
        h = settings.dt
        self.M_h = model.A_M / h**2
        self.Q = self.M_h + model.A_mu + model.A_gamma
        self.f_gravity = np.outer(model.mass_Y, np.asarray(settings.gravity, dtype=np.float64))
        self.free = FreeStep(self.Q)
        self.contact = None if ground is None else contact_for(model, settings, ground, self.Q)

    def energy(self, Z: np.ndarray, Zt: np.ndarray, Ka: np.ndarray, abar: np.ndarray) -> tuple[float, tuple]:
        """E(Z) without contact at the optimal rotations, and the rotations (R (Cp,3,3), Omega (Ca,3,3))."""
        m = self.model
        Hp = np.einsum("ui,cuj->cij", Z, m.P)
        Ha = np.einsum("ui,cuk->cik", Z, Ka)
        R, Om = rotation(Hp), rotation(Ha)
        D = Z - Zt
        E = (
            0.5 * np.vdot(D, self.M_h @ D)
            - np.vdot(Z, self.f_gravity)
            + 0.5 * np.vdot(Z, (m.A_mu + m.A_gamma) @ Z)
            - np.vdot(R, Hp)
            - np.vdot(Om, Ha)
            + m.passive_constant
            + 0.5 * abar @ m.G_target @ abar
        )
        return float(E), (R, Om)

    def forces(self, Zt: np.ndarray, Ka: np.ndarray, rotations: tuple) -> np.ndarray:
        """F (q, 3) of the module doc for fixed rotations."""
        R, Om = rotations
        m = self.model
        return self.M_h @ Zt + self.f_gravity + np.einsum("cuj,cij->ui", m.P, R) + np.einsum("cuk,cik->ui", Ka, Om)

    def solve(
        self, system: FreeStep | ContactStep, Z0: np.ndarray, Zt: np.ndarray, Ka: np.ndarray, abar: np.ndarray
    ) -> tuple[np.ndarray, int, float, bool, bool]:
        """Local-global iterations from Z0: (Z, iterations, residual, converged, energy rose)."""
        m, s = self.model, self.settings
        tol = s.tolerance * m.radius
        _, rot = self.energy(Z0, Zt, Ka, abar)
        Z, E_prev, rose, converged, residual = Z0, np.inf, False, False, np.inf
        it = 0
        for it in range(1, s.max_iterations + 1):
            Z_new = system.solve(self.forces(Zt, Ka, rot))
            E, rot_new = self.energy(Z_new, Zt, Ka, abar)
            E += system.energy(Z_new)
            D = Z_new - Z
            residual = float(np.sqrt(max(np.vdot(D, m.A_M @ D), 0.0) / m.mass))
            scale = abs(E) + 0.5 * abs(np.vdot(Z_new, self.Q @ Z_new))
            if E > E_prev + ENERGY_ROUNDOFF * scale:
                rose = True  # keep the lower iterate: this one raised the energy
                break
            Z, E_prev, rot = Z_new, E, rot_new
            if residual <= tol:
                converged = True
                break
        return Z, it, residual, converged, rose

    def step(self, state: State, abar: np.ndarray) -> tuple[State, StepReport]:
        """One time step under actuation abar (m+1,) (last entry 1)."""
        Zt = 2.0 * state.Z - state.Z_prev
        Ka = self.model.K @ abar  # (Ca, q, 3): the actuation target enters once per step
        if self.contact is None:
            Z, it, res, conv, rose = self.solve(self.free, state.Z, Zt, Ka, abar)
            return State(Z, state.Z), StepReport(it, res, conv, rose, 0)
        c = self.contact.drag(state.Z, state.Z_prev, state.forces)
        system = self.contact.step(state.Z, c)
        Z, it, res, conv, rose = self.solve(system, state.Z, Zt, Ka, abar)
        forces = self.contact.normal_forces(Z)
        return State(Z, state.Z, forces), StepReport(it, res, conv, rose, int((forces > 0).sum()))


def contact_for(model: LocomotionModel, settings: StepSettings, ground: GroundPlane, Q: np.ndarray) -> GroundContact:
    """The ground's contact at the model's samples, its stiffness and stick speed scaled to the body.

    The penalty k makes the body's weight (mass g; g = 9.81 m/s^2 when gravity is off), shared by
    the samples, sink ``contact_depth`` radii: k = mass g / (samples depth radius).
    """
    g = float(np.linalg.norm(settings.gravity)) or 9.81
    k = model.mass * g / (len(model.samples) * settings.contact_depth * model.radius)
    return GroundContact(ground, model.Y_samples, Q, settings.dt, k, settings.stick_speed * model.radius)
