"""A small Python API for technical directors and pipelines.

    import skinmodes_api as api
    api.configure(obj, modes=24, wobble_hz=4.0, damping_ratio=0.3)
    summary = api.bake(obj, frames=(1, 120), output="PC2")
    api.clear_bake(obj)

``skinmodes_api`` is this module under a name that does not depend on the
repository the extension was installed from (its real name is
``bl_ext.<repository>.skinmodes.api``); it exists while the add-on is enabled.

Every function raises :class:`SkinmodesError` (one-line message) on bad input
and leaves the scene unchanged when it does.
"""

from __future__ import annotations

from typing import Any

import bpy

from .bake import BakeJob
from .bake import clear_bake as _clear_bake
from .core.errors import SkinmodesError
from .core.settings import names as setting_names
from .core.settings import validate_all
from .props import scene_of
from .props import settings as _settings
from .session import build_session

# Every user setting of core/settings.py (the stage "ui" preset included).
SETTABLE = frozenset(setting_names())

__all__ = ["SETTABLE", "SkinmodesError", "bake", "clear_bake", "compute_modes", "configure", "settings"]


def settings(obj: bpy.types.Object) -> Any:
    """The object's settings (a PropertyGroup saved with the .blend)."""
    return _settings(obj)


def configure(obj: bpy.types.Object, **values: Any) -> None:
    """Set several settings at once.

    Every value is checked first (names, types, ranges: one line naming the
    setting and its range); nothing changes unless all are valid.  The
    preset is applied first, so explicit values given with it win.
    """
    checked = validate_all(values)
    s = _settings(obj)
    for name in sorted(checked, key=lambda n: n != "material_preset"):
        setattr(s, name, checked[name])


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
        "warnings": job.warnings,
        "max_offset_percent": round(100.0 * job.max_offset, 3),
    }


def clear_bake(obj: bpy.types.Object) -> None:
    """Remove the object's bake (modifier, shape keys and the files skinmodes wrote for it)."""
    _clear_bake(obj)
