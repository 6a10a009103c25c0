"""The reduced solver in a pose-space subspace (Xu & Barbič, §5.2, on Benchekroun et al.'s solver).

Each step blends the model at the step's target pose (:meth:`PoseSpaceModel.at`)
and runs the ordinary :class:`Simulator` on it (:meth:`Simulator.rebound`: the
products swapped, the small system refactored).  The secondary motion's reduced
coordinates z carry over from step to step unchanged, as in the seed: the
displacement u = Y(p) z is measured in the current pose's subspace, which morphs
with the pose like the rig's own shape does.

The rig's inertia is re-projected onto the current subspace every step: the
state keeps the rig parameters of the last two steps, and q, q_prev (Y^T M x_rig)
are recomputed from them with the blended products, so the inertial force is
B(p)^T M (x_rig,new - 2 x_rig,now + x_rig,before) exactly, whatever the basis
was when those poses were stepped.  Every blended basis satisfies the common
complementarity constraint, so u stays complementary at every step; the pose
weights ignore rigid motions of the whole rig, so rotation equivariance and
Galilean invariance carry over from the solver.

Contact (issue 29): given a :class:`SurfaceContact` of the rest model, the
ground, colliders and skin on skin act here as on the plain jiggle; the
contact's sample rows follow the blended basis each step (:mod:`.surface`),
so the one-sided rows of a step are those of the blended model's own solver.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..contact.colliders import Ground, MeshCollider
from ..contact.surface import SurfaceContact
from ..dynamics.simulator import SimState, SimulationSettings, Simulator, StepReport
from ..errors import SimulationError
from ..model.rig import rig_matrix
from .model import PoseSpaceModel
from .surface import PoseContact


@dataclass
class PoseSpaceState:
    """The solver's state and the rig parameters (12 b,) of its last two steps."""

    sim: SimState
    p: np.ndarray
    p_prev: np.ndarray

    @property
    def z(self) -> np.ndarray:
        """The secondary motion's reduced coordinates (4m x 3), as :attr:`SimState.z`."""
        return self.sim.z

    @property
    def step(self) -> int:
        return self.sim.step

    def with_step(self, step: int) -> PoseSpaceState:
        return PoseSpaceState(replace(self.sim, step=step), self.p, self.p_prev)

    def copy(self) -> PoseSpaceState:
        return PoseSpaceState(self.sim.copy(), self.p.copy(), self.p_prev.copy())


class PoseSpaceSimulator:
    """Steps a :class:`PoseSpaceModel` forward in time, driven by LBS rig parameters.

    contact: the rest model's contact samples (None: no contact); the obstacles come per step.
    """

    def __init__(
        self, model: PoseSpaceModel, settings: SimulationSettings | None = None, contact: SurfaceContact | None = None
    ) -> None:
        self.model = model
        rest, _ = model.blend(np.eye(model.k)[0])
        self._base = Simulator(rest, settings)
        self._contact = None if contact is None else PoseContact(model, contact)
        self._weights = np.eye(model.k)[0]

    @property
    def size(self) -> float:
        return self._base.size

    @property
    def arap(self) -> bool:
        return self._base.arap

    @property
    def weights(self) -> np.ndarray:
        """The training poses' weights (k,) at the last step's pose."""
        return self._weights

    def _solver(self, w: np.ndarray, stiffness_scale: float | None = None, damping: float | None = None) -> Simulator:
        """The solver on the subspace blended with pose weights w (k,), its system factorised once for
        the given stiffness scale and damping (default: the settings'): no pass over the mesh."""
        blended, gravity = self.model.blend(w, weights=False)
        sim = self._base.rebound(blended, gravity, stiffness_scale, damping)
        if self._contact is not None:
            sim.contact = self._contact.at(w)  # rebound made a new solver: its contact is its own
        return sim

    def initial_state(self, p: np.ndarray, p_prev: np.ndarray | None = None) -> PoseSpaceState:
        """At rest relative to the rig at p; p_prev (one step back) sets the rig's initial velocity."""
        p = np.asarray(p, dtype=np.float64)
        before = p if p_prev is None else np.asarray(p_prev, dtype=np.float64)
        sim = self._solver(self.model.pose_weights(p))
        return PoseSpaceState(sim.initial_state(p, p_prev=before), p.copy(), before.copy())

    def step(
        self,
        state: PoseSpaceState,
        p: np.ndarray | None = None,
        x_rig: np.ndarray | None = None,
        frame: float | None = None,
        record: list[float] | None = None,
        stiffness_scale: float | None = None,
        damping: float | None = None,
        obstacles: list[Ground | MeshCollider] | None = None,
    ) -> tuple[PoseSpaceState, StepReport]:
        """Advance one time step to rig parameters p (12 b,); see :meth:`Simulator.step` (``obstacles``
        as there: they need a ``contact``).

        The bone maps choose the blend, so rig positions (``x_rig``) cannot drive it.
        """
        if x_rig is not None or p is None:
            raise SimulationError("a pose-space model is driven by the bones' parameters p, not by rig positions")
        p = np.asarray(p, dtype=np.float64)
        self._weights = self.model.pose_weights(p) if np.isfinite(p).all() else self._weights
        sim = self._solver(self._weights, stiffness_scale, damping)
        A_MR = sim.model.A_MR
        assert A_MR is not None  # a pose-space model always has its LBS rig
        moved = replace(state.sim, q=A_MR @ rig_matrix(state.p), q_prev=A_MR @ rig_matrix(state.p_prev))
        new, report = sim.step(
            moved,
            p=p,
            frame=frame,
            record=record,
            stiffness_scale=stiffness_scale,
            damping=damping,
            obstacles=obstacles,
        )
        return PoseSpaceState(new, p.copy(), state.p.copy()), report

    def displacement(self, state: PoseSpaceState) -> np.ndarray:
        """Secondary displacement u (n, 3) of the tet vertices, in the subspace of the state's pose
        (one pass over the mesh: the blended weights, then Y z)."""
        blended, _ = self.model.at(state.p)
        return blended.basis() @ state.sim.z
