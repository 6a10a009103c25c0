"""The gait an object keeps (a custom property, saved with the .blend) and the settings Find Gait searches with.

The gait is JSON text (:class:`core.locomotion.stored.StoredGait`) in the object's
``skinmodes_gait`` property (:data:`session.request.GAIT_PROPERTY`): plain data, so it
survives a save, a library override and an undo, and the session plays it through the
same frame loop as the jiggle (``core.pipeline.locomotion_drive``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import bpy
import numpy as np

from ..core.errors import SkinmodesError
from ..core.locomotion.stored import GaitSettings, StoredGait
from ..props import settings
from ..session.request import GAIT_PROPERTY, SessionRequest, stored_gait_text

# The Direction setting's items: an axis of the object's own space.
AXES = {"POS_X": (1.0, 0.0, 0.0), "NEG_X": (-1.0, 0.0, 0.0), "POS_Y": (0.0, 1.0, 0.0), "NEG_Y": (0.0, -1.0, 0.0)}


def read_gait(obj: bpy.types.Object) -> StoredGait | None:
    """The object's stored gait, or None; one line (SkinmodesError) when its text is not a gait."""
    text = stored_gait_text(obj)
    return StoredGait.from_json(text) if text else None


def write_gait(obj: bpy.types.Object, gait: StoredGait | None) -> None:
    """Store ``gait`` on the object (None removes it)."""
    if gait is None:
        cast(Any, obj).pop(GAIT_PROPERTY, None)
        return
    obj[GAIT_PROPERTY] = gait.to_json()


def mesh_direction(axis: str, rest_map: np.ndarray, name: str) -> tuple[float, float, float]:
    """The unit travel direction (3,) in the simulated mesh's frame of an object axis id (``AXES``).

    rest_map (4, 4): the object's rest map (``RigBinding.rest_map``: unit x its world rotation and scale at
    the rest frame), so the axis turns with the object; the ground plane is the world's (Z up), so the axis
    is flattened onto it, and one standing straight up is refused in one line.
    """
    d = np.asarray(rest_map, dtype=np.float64)[:3, :3] @ np.asarray(AXES[axis])
    d[2] = 0.0
    norm = float(np.linalg.norm(d))
    if norm < 1e-6 * max(float(np.abs(rest_map[:3, :3]).max()), 1e-300):
        raise SkinmodesError(
            f"the {axis.replace('POS_', '+').replace('NEG_', '-')} axis of '{name}' points straight up or down, "
            "so a gait along it cannot travel on the ground; pick another Direction or rotate the object"
        )
    return (float(d[0] / norm), float(d[1] / norm), 0.0)


def gait_settings(obj: bpy.types.Object, request: SessionRequest) -> GaitSettings:
    """What Find Gait searches with: the object's Locomotion settings, its solver step (1 / (fps sub-steps):
    the step the frame loop plays the gait at) and the direction in its mesh's frame."""
    s = settings(obj)
    lo, hi = float(s.gait_period_min), float(s.gait_period_max)
    if lo > hi:
        raise SkinmodesError(
            f"the Shortest Period ({lo:g} s) of '{obj.name}' is longer than its Longest Period ({hi:g} s); swap them"
        )
    return replace(
        GaitSettings(),
        direction=mesh_direction(str(s.gait_direction), request.binding.rest_map, obj.name),
        period_min=lo,
        period_max=hi,
        actuation_modes=int(s.gait_modes),
        generations=int(s.gait_generations),
        seed=int(s.gait_seed),
        coarse_tets=int(s.gait_search_tets),
        dt=1.0 / (request.solver.fps * request.solver.substeps),
    )


# A gait that travels less than this many body lengths per 10 s is said to barely move (issue 40).
WEAK_GAIT = 0.5


def is_weak(gait: StoredGait) -> bool:
    """Whether the gait, as measured, travels under :data:`WEAK_GAIT` body lengths per 10 s."""
    bl = gait.figures.get("body_lengths_per_10s")
    return bl is not None and not bl >= WEAK_GAIT


def gait_line(gait: StoredGait) -> str:
    """One line about a found gait: its travel and heading (as measured), the search's time; a gait that
    barely moves says so and what to try."""
    f = gait.figures
    bl, deg = f.get("body_lengths_per_10s"), f.get("heading_deg")
    travel = "" if bl is None else f", {bl:.2f} body lengths per 10 s"
    off = "" if deg is None else f", {deg:.0f}° off the direction"
    line = f"gait found{travel}{off}, {gait.seconds:.0f} s ({gait.evaluations} rollouts)"
    if is_weak(gait):
        line += (
            f"; it barely moves (under {WEAK_GAIT:g} body length per 10 s): try more Generations, another Seed "
            "or more Actuation Modes"
        )
    return line
