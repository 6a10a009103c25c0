"""A small Python API for technical directors and pipelines.

    from bl_ext.user_default.skinmodes import api
    api.configure(obj, modes=24, youngs_modulus=5e3)
    summary = api.bake(obj, frames=(1, 120), output="PC2")
    api.clear_bake(obj)

Every function raises :class:`SkinmodesError` (one-line message) on bad input
and leaves the scene unchanged when it does.
"""

from __future__ import annotations

from typing import Any

import bpy

from .bake import BakeJob
from .bake import clear_bake as _clear_bake
from .core.errors import SkinmodesError
from .props import scene_of
from .props import settings as _settings
from .session import build_session

SETTABLE = {
    "modes",
    "clusters",
    "target_tets",
    "tet_method",
    "loose_parts",
    "material_preset",
    "youngs_modulus",
    "poisson_ratio",
    "density",
    "stiffness_group",
    "density_group",
    "leak_mode",
    "leak_group",
    "substeps",
    "iterations",
    "damping",
    "output",
    "cache_dir",
}


def settings(obj: bpy.types.Object) -> Any:
    """The object's settings (a PropertyGroup saved with the .blend)."""
    return _settings(obj)


def configure(obj: bpy.types.Object, **values: Any) -> None:
    """Set several settings at once; unknown names raise before anything changes."""
    unknown = sorted(set(values) - SETTABLE)
    if unknown:
        raise SkinmodesError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(SETTABLE))}")
    s = _settings(obj)
    for name, value in values.items():
        if isinstance(value, str) and name in ("tet_method", "loose_parts", "material_preset", "leak_mode", "output"):
            value = value.upper()
        setattr(s, name, value)


def compute_modes(obj: bpy.types.Object, scene: bpy.types.Scene | None = None) -> dict[str, float]:
    """Tetrahedralise and compute the modes (or load them from the cache); returns the statistics."""
    session = build_session(obj, scene or scene_of(bpy.context))
    return dict(session.prepared.stats)


def bake(obj: bpy.types.Object, frames: tuple[int, int] | None = None, output: str | None = None) -> dict[str, Any]:
    """Bake ``obj``; returns a summary (frames, seconds, files, output)."""
    job = BakeJob(bpy.context, obj, output=output, frames=frames).run()
    return {
        "object": obj.name,
        "output": job.output.lower(),
        "frames": [job.start, job.end],
        "frames_baked": job.frames_done,
        "seconds": round(job.seconds, 3),
        "files": job.files,
        "messages": job.messages,
    }


def clear_bake(obj: bpy.types.Object) -> None:
    _clear_bake(obj)
