"""The obstacles of a shot over time: the ground and collider meshes read per frame, at any sub-step.

The add-on reads each collider's evaluated mesh and world matrix at every
integer frame (bpy belongs to the main thread); the solver steps between
frames, so a collider's vertices are interpolated linearly between the two
frames around a step (exact for a collider that moves uniformly; a rotating
one is approximated by its chords, as the rig's samples are).  Outside the
frames read, a collider holds its first or last shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SimulationError
from .colliders import Ground, MeshCollider


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class ColliderTrack:
    """One collider over the shot: name, faces F (f, 3), frames (t,) ascending, vertices V (t, v, 3) in the
    simulation's space (metres, world axes)."""

    name: str
    F: np.ndarray
    frames: np.ndarray
    V: np.ndarray

    def __post_init__(self) -> None:
        if self.V.ndim != 3 or self.V.shape[0] != len(self.frames) or len(self.frames) == 0:
            raise SimulationError(f"collider '{self.name}': one set of vertices per frame read is needed")
        if not np.isfinite(self.V).all():
            raise SimulationError(f"collider '{self.name}' has NaN or infinite vertices; check its transform")

    def at(self, frame: float) -> MeshCollider:
        """The collider at a (fractional) frame."""
        f = self.frames
        i = int(np.clip(np.searchsorted(f, frame, side="right") - 1, 0, len(f) - 1))
        if i == len(f) - 1 or frame <= f[0]:
            return MeshCollider(self.V[i], self.F)
        s = (frame - f[i]) / (f[i + 1] - f[i])
        return MeshCollider((1.0 - s) * self.V[i] + s * self.V[i + 1], self.F)


@dataclass(frozen=True, eq=False)
class Obstacles:
    """What the surface can touch: an optional ground and colliders over time."""

    ground: Ground | None = None
    colliders: tuple[ColliderTrack, ...] = ()

    def __bool__(self) -> bool:
        return self.ground is not None or bool(self.colliders)

    def at(self, frame: float) -> list[Ground | MeshCollider]:
        """The obstacles at a (fractional) frame."""
        out: list[Ground | MeshCollider] = [] if self.ground is None else [self.ground]
        return out + [c.at(frame) for c in self.colliders]
