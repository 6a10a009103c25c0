"""The training poses' drive: the bones drive the subspace blended at their pose (Xu & Barbič).

See :class:`core.dynamics.drive.Drive`; the render vertices and the guard's
probes follow the blend at each frame's pose, and so do the contact's sample
rows (the ground, colliders and skin on skin, as for :class:`RigDrive`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..contact.colliders import Ground, MeshCollider
from ..contact.surface import ContactSettings, SurfaceContact
from ..dynamics.simulator import SimulationSettings, StepReport
from .model import PoseSpaceModel
from .points import PosePoints
from .simulator import PoseSpaceSimulator, PoseSpaceState


class PoseSpaceDrive:
    """LBS parameters p (12 b,) per frame drive a :class:`PoseSpaceModel`.

    rig: p at an integer frame; render, probes: the render vertices' and the guard's
    probe points' per-pose bases; obstacles, friction, self_contact: as for
    :class:`core.dynamics.drive.RigDrive` (the rig wins there too).
    """

    jiggles = True

    def __init__(
        self,
        model: PoseSpaceModel,
        settings: SimulationSettings,
        rig: Callable[[int], np.ndarray],
        render: PosePoints,
        probes: PosePoints,
        obstacles: Callable[[float], list[Ground | MeshCollider]] | None = None,
        friction: float = ContactSettings.friction,
        self_contact: bool = False,
    ) -> None:
        contact = None
        if obstacles is not None or self_contact:
            contact = SurfaceContact(
                model.rest, settings.time_step, ContactSettings(friction, self_contact=self_contact)
            )
        self.simulator = PoseSpaceSimulator(model, settings, contact)
        self.obstacles = obstacles
        self.model = model
        self.rig = rig
        self.render = render
        self.probes = probes

    @property
    def size(self) -> float:
        return self.simulator.size

    @property
    def arap(self) -> bool:
        return self.simulator.arap

    def pose_weights(self, frame: int) -> np.ndarray:
        """The training poses' weights (k,) at an integer ``frame``."""
        return self.model.pose_weights(self.rig(frame))

    def sample(self, frame: int) -> np.ndarray:
        return self.rig(frame)

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> PoseSpaceState:
        return self.simulator.initial_state(sample, p_prev=before)

    def restart(self, state: PoseSpaceState, sample: np.ndarray) -> PoseSpaceState:
        return self.initial_state(sample, None).with_step(state.step)

    def step(
        self, state: PoseSpaceState, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[PoseSpaceState, StepReport]:
        obstacles = None if self.obstacles is None else self.obstacles(frame)
        return self.simulator.step(
            state, p=sample, frame=frame, stiffness_scale=stiffness_scale, damping=damping, obstacles=obstacles
        )

    def probe_displacement(self, state: PoseSpaceState, frame: int) -> np.ndarray:
        return self.probes.displacement(self.pose_weights(frame), state.z)

    def displacement(self, state: PoseSpaceState, frame: int) -> np.ndarray:
        return self.render.displacement(self.pose_weights(frame), state.z)

    def offset(self, state: PoseSpaceState, frame: int, displacement: np.ndarray) -> np.ndarray:
        return displacement

    def skin_correction(self, frame: int) -> np.ndarray | None:
        return None

    def forget_after(self, frame: int) -> None:
        pass  # nothing cached: the rig is read as asked

    def notes(self) -> list[tuple[str, list[int]]]:
        return []  # nothing this drive solves per frame stops short
