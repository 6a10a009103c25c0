"""The physics skin's drive: its positions, not the bones' blend, drive the reduced model (issue 15).

The jiggle is simulated on top of the physics-skinned shape (x_rig = the physics
skin's tet positions per frame), and the render vertices get the skin's own
correction to linear blend skinning besides.  See :class:`core.dynamics.drive.Drive`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..contact.colliders import Ground, MeshCollider
from ..contact.surface import ContactSettings
from ..dynamics.drive import RigDrive, remember_near
from ..dynamics.reconstruct import Reconstructor
from ..dynamics.simulator import SimState, SimulationSettings, StepReport
from ..errors import SimulationError
from ..geometry.embedding import Embedding
from ..subspace.reduced import ReducedModel
from .rig import PhysicsRig, render_correction


class PhysicsSkinDrive(RigDrive):
    """The rig's drive with the physics skin's tet positions (n, 3) as its sample.

    physics: the character's physics skin; embedding, T, keep: where the render
    vertices sit in the tets (keep (k,): False for vertices not simulated);
    jiggles: Secondary Motion (False: the skin's correction alone); obstacles: the ground and
    colliders at a (fractional) frame, or None.  They push the physics skin's free surface out at
    each integer frame (:mod:`.contact`), and the jiggle on top of it as they push the bones'
    (:class:`RigDrive`, with the physics skin's positions as the rig that wins), with Coulomb
    ``friction``; self_contact: Skin on Skin for the jiggle.
    """

    def __init__(
        self,
        model: ReducedModel,
        settings: SimulationSettings,
        rig: Callable[[int], np.ndarray],
        reconstructor: Reconstructor,
        probes: np.ndarray,
        physics: PhysicsRig,
        embedding: Embedding,
        T: np.ndarray,
        keep: np.ndarray | None,
        jiggles: bool = True,
        obstacles: Callable[[float], list[Ground | MeshCollider]] | None = None,
        friction: float = ContactSettings.friction,
        self_contact: bool = False,
    ) -> None:
        super().__init__(model, settings, rig, reconstructor, probes, obstacles, friction, self_contact)
        self.physics = physics
        self.jiggles = jiggles
        self._embedding, self._T, self._keep = embedding, T, keep
        self._positions: dict[int, np.ndarray] = {}
        self._short: set[int] = set()  # frames whose volume solve ran into its cap (``notes``)

    def positions(self, frame: int) -> np.ndarray:
        """Physics-skinned tet positions (n, 3) at an integer ``frame``."""
        x = self._positions.get(frame)
        if x is None:
            try:
                x = self.physics.positions(self.rig(frame), None if self.obstacles is None else self.obstacles(frame))
            except ArithmeticError as exc:  # the solve's iterations found no answer: a shape far from any
                raise SimulationError(
                    f"the physics skin found no shape at frame {frame} ({exc}): the flesh is far too soft "
                    "for the pose or its own weight; raise Young's Modulus or Pin Depth, or turn Gravity off"
                ) from exc
            if self.physics.skin.last_stop == "cap":
                self._short.add(frame)
            remember_near(self._positions, frame, x)  # a step needs two frames, a bake one more
        return x

    def sample(self, frame: int) -> np.ndarray:
        return self.positions(frame)

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> SimState:
        return self.simulator.initial_state(x_rig=sample, x_rig_prev=before)

    def step(
        self, state: SimState, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[SimState, StepReport]:
        obstacles = None if self.obstacles is None else self.obstacles(frame)
        return self.simulator.step(
            state, x_rig=sample, frame=frame, stiffness_scale=stiffness_scale, damping=damping, obstacles=obstacles
        )

    def skin_correction(self, frame: int) -> np.ndarray:
        c = self.physics.correction(self.rig(frame), self.positions(frame))
        return render_correction(self._embedding, self._T, c, self._keep)

    def forget_after(self, frame: int) -> None:
        self._positions = {f: x for f, x in self._positions.items() if f <= frame}
        self._short = {f for f in self._short if f <= frame}

    def notes(self) -> list[tuple[str, list[int]]]:
        """The frames whose volume solve ran into its cap: their answer depends on it (a material too
        soft for the pose or its own weight), which a bake says rather than hides."""
        if not self._short:
            return []
        cap = self.physics.volume_steps
        return [
            (
                f"the physics skin stopped short of converging at frames {{frames}} (its volume solve ran into "
                f"its cap of {cap} steps): the flesh is too soft for the pose or its own weight; raise Young's "
                "Modulus or Pin Depth, or turn Gravity off",
                sorted(self._short),
            )
        ]
