"""What moves a character's flesh, as the frame loop sees it: the :class:`Drive` protocol and the rig's drive.

A drive owns a solver and its state; :class:`core.pipeline.FrameSimulation`
owns the frames (sub-steps, the cache of states, checkpoints, cuts, the guard
and the solver statistics) and never asks which drive it runs.  What drives
the solver at an integer frame is one array, a *sample* (the rig's LBS
parameters, the physics skin's positions, ...); sub-steps interpolate it
linearly between frames, so a drive is never sampled between frames.

The drives: :class:`RigDrive` (here: the bones' linear blend skinning drives
the reduced model), :class:`core.posespace.drive.PoseSpaceDrive` (the
training poses' blended subspace) and
:class:`core.physskin.drive.PhysicsSkinDrive` (the physics skin's positions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, TypeVar

import numpy as np

from ..contact.colliders import Ground, MeshCollider
from ..contact.surface import ContactSettings, SurfaceContact
from ..subspace.reduced import ReducedModel
from .reconstruct import Reconstructor
from .simulator import SimState, SimulationSettings, Simulator, StepReport


class State(Protocol):
    """A drive's state at one frame: FrameSimulation keeps one per frame and reads its size from z."""

    @property
    def z(self) -> np.ndarray:
        """The secondary motion's reduced coordinates (4m, 3)."""
        ...


S = TypeVar("S", bound=State)


class Drive(Protocol[S]):
    """One way of driving the simulation (see the module doc), over its state type S.

    size: the character's size (m) the guard's shares are of; arap: whether the
    solver's energy is ARAP (the slowest frequency the controls calibrate to
    depends on it); jiggles: whether the secondary motion shows (False: only the
    drive's skin correction does, e.g. the physics skin with Secondary Motion off).
    """

    @property
    def size(self) -> float: ...

    @property
    def arap(self) -> bool: ...

    @property
    def jiggles(self) -> bool: ...

    def sample(self, frame: int) -> np.ndarray:
        """What drives the solver at an integer ``frame`` (any shape; interpolated linearly between frames)."""
        ...

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> S:
        """At rest relative to ``sample``; ``before`` (one sub-step back) sets the initial velocity (None: none)."""
        ...

    def restart(self, state: S, sample: np.ndarray) -> S:
        """At rest on ``sample`` with no velocity (a cut), keeping ``state``'s step count."""
        ...

    def step(
        self, state: S, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[S, StepReport]:
        """One solver step to ``sample`` at time ``frame`` (fractional at sub-steps)."""
        ...

    def probe_displacement(self, state: S, frame: int) -> np.ndarray:
        """Secondary displacement (p, 3) of the guard's probe points in ``state`` at an integer ``frame``."""
        ...

    def displacement(self, state: S, frame: int) -> np.ndarray:
        """Secondary displacement (k, 3) of the render vertices in ``state`` at an integer ``frame``."""
        ...

    def offset(self, state: S, frame: int, displacement: np.ndarray) -> np.ndarray:
        """The part (k, 3) of the render vertices' ``displacement`` (:meth:`displacement`) that is an offset: what
        the guard watches and the summary reports (a gait's travel is motion, not an offset)."""
        ...

    def skin_correction(self, frame: int) -> np.ndarray | None:
        """How the drive's skin differs from linear blend skinning at the render vertices (k, 3), or None."""
        ...

    def forget_after(self, frame: int) -> None:
        """Drop whatever the drive cached for frames after ``frame`` (the rig changed there)."""
        ...

    def notes(self) -> list[tuple[str, list[int]]]:
        """What the drive has to say of the frames it gave so far, as (line, frames) pairs whose line
        holds ``{frames}`` where the frames go (the physics skin stopping short of converging), or []."""
        ...


def remember_near(cache: dict[int, np.ndarray], frame: int, value: np.ndarray) -> None:
    """Store ``value`` for ``frame`` and forget frames more than two away: a few, not one per frame of a long bake."""
    cache[frame] = value
    for old in [g for g in cache if abs(g - frame) > 2]:
        del cache[old]


class RigDrive:
    """The bones drive the reduced model through their LBS parameters p (12 b,) per frame.

    model: the reduced model; settings: the solver's; rig: p at an integer frame;
    reconstructor: the render vertices' reconstruction; probes: indices (p,) of the
    tet vertices the guard watches; obstacles: the ground and colliders at a
    (fractional) frame, pushing the surface out (:mod:`core.contact`; None: no
    contact) with Coulomb ``friction``; self_contact: body parts push each other
    out too (:mod:`core.contact.pairs`).  Contact acts on the secondary motion
    only: where the rig itself pushes the skin into an obstacle, the rig wins.
    """

    jiggles = True

    def __init__(
        self,
        model: ReducedModel,
        settings: SimulationSettings,
        rig: Callable[[int], np.ndarray],
        reconstructor: Reconstructor,
        probes: np.ndarray,
        obstacles: Callable[[float], list[Ground | MeshCollider]] | None = None,
        friction: float = ContactSettings.friction,
        self_contact: bool = False,
    ) -> None:
        contact = None
        if obstacles is not None or self_contact:
            contact = SurfaceContact(model, settings.time_step, ContactSettings(friction, self_contact=self_contact))
        self.simulator = Simulator(model, settings, contact)
        self.obstacles = obstacles
        self.rig = rig
        self.reconstructor = reconstructor
        self._probe_basis = model.basis(model.weights[probes], model.X[probes])

    @property
    def size(self) -> float:
        return self.simulator.size

    @property
    def arap(self) -> bool:
        return self.simulator.arap

    def sample(self, frame: int) -> np.ndarray:
        return self.rig(frame)

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> SimState:
        return self.simulator.initial_state(p=sample, p_prev=before)

    def restart(self, state: SimState, sample: np.ndarray) -> SimState:
        return replace(self.initial_state(sample, None), step=state.step)

    def step(
        self, state: SimState, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[SimState, StepReport]:
        obstacles = None if self.obstacles is None else self.obstacles(frame)
        return self.simulator.step(
            state, p=sample, frame=frame, stiffness_scale=stiffness_scale, damping=damping, obstacles=obstacles
        )

    def probe_displacement(self, state: SimState, frame: int) -> np.ndarray:
        return self._probe_basis @ state.z

    def displacement(self, state: SimState, frame: int) -> np.ndarray:
        return self.reconstructor.displacement(state.z)

    def offset(self, state: SimState, frame: int, displacement: np.ndarray) -> np.ndarray:
        return displacement

    def skin_correction(self, frame: int) -> np.ndarray | None:
        return None

    def forget_after(self, frame: int) -> None:
        pass  # nothing cached: the rig is read as asked

    def notes(self) -> list[tuple[str, list[int]]]:
        return []  # the rig's skin is linear blend skinning: nothing is solved, nothing stops short
