"""The object's settings as the core pipeline's settings, and the animated controls read per frame."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import numpy as np

from ..character import fcurves_of
from ..core.pipeline import MaterialSettings, SolverSettings, SubspaceSettings
from ..core.settings import BY_NAME, SETTINGS, core_values
from ..props import SkinmodesSettings, settings


def subspace_settings(s: SkinmodesSettings) -> SubspaceSettings:
    return SubspaceSettings(**core_values(SubspaceSettings, lambda name: getattr(s, name)))  # type: ignore[arg-type]


def material_settings(s: SkinmodesSettings) -> MaterialSettings:
    """What shapes the modes.  Young's modulus and density do not (the modes
    are the same for any uniform scale of either), so the model is built with
    the reference values and the solver scales them: changing them, or the
    wobble, never recomputes modes."""
    values = core_values(MaterialSettings, lambda name: getattr(s, name))
    return MaterialSettings(poisson_ratio=values["poisson_ratio"])  # type: ignore[arg-type]


def solver_settings(s: SkinmodesSettings, scene: bpy.types.Scene) -> SolverSettings:
    """The simulation's settings.  Animated wobble and damping are read per frame
    (see :func:`controls_of`); here they are 0, so the value Blender shows at the
    current frame does not make the session look stale while scrubbing."""
    fps = scene.render.fps / scene.render.fps_base
    animated = control_curves(s.id_data) is not None
    values = core_values(SolverSettings, lambda name: getattr(s, name))
    if animated:  # read per frame from their F-curves: a keyed value must not make the session stale
        values.update(wobble_hz=0.0, damping_ratio=0.0)
    return SolverSettings(fps=fps, **values)  # type: ignore[arg-type]


ANIMATED = tuple(st.name for st in SETTINGS if st.animatable)


def control_curves(obj: bpy.types.Object) -> dict[str, bpy.types.FCurve] | None:
    """The F-curves animating the wobble or damping of ``obj``, or None when neither is animated."""
    anim = obj.animation_data
    if anim is None or anim.action is None:
        return None
    paths = {f"skinmodes.{name}": name for name in ANIMATED}
    found = {paths[fc.data_path]: fc for fc in fcurves_of(anim.action) if fc.data_path in paths}
    return found or None


def controls_of(obj: bpy.types.Object) -> Callable[[int], tuple[float, float]] | None:
    """(wobble_hz, damping_ratio) per frame for animated controls, else None (the settings' values)."""
    curves = control_curves(obj)
    if curves is None:
        return None
    s = settings(obj)
    static = {name: float(getattr(s, name)) for name in ANIMATED}
    wobble, damping = BY_NAME["wobble_hz"], BY_NAME["damping_ratio"]

    def at(frame: int) -> tuple[float, float]:
        v = {name: (curves[name].evaluate(frame) if name in curves else static[name]) for name in ANIMATED}
        # An F-curve may overshoot the slider's range between keys; keep the solver's inputs valid.
        return (
            min(max(v["wobble_hz"], wobble.minimum or 0.0), wobble.maximum or np.inf),
            min(max(v["damping_ratio"], damping.minimum or 0.0), damping.maximum or np.inf),
        )

    return at
