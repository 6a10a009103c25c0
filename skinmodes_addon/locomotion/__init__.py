"""Locomotion for a mesh without an armature (issue 26): Find Gait, the gait the object keeps, its panel,
and the ``skinmodes gait`` command.  The gait plays through the session's frame loop like the jiggle
(``core.pipeline.locomotion_drive``), so the preview and the bake need nothing of their own."""

from __future__ import annotations

import bpy

from . import operators, panel
from .job import GAIT_JOBS

CLASSES = (*operators.CLASSES, *panel.CLASSES)


def cancel_searches() -> None:
    """Cancel every running Find Gait: its result has nowhere to go."""
    for job in list(GAIT_JOBS.values()):
        job.cancel()
    GAIT_JOBS.clear()


@bpy.app.handlers.persistent
def _before_load(_filepath: str = "") -> None:
    # Another file replaces this one's objects: a search left running would end minutes later with "the
    # object was deleted" (issue 39).  Compute Modes is cancelled on load alike (registry.forget_objects).
    cancel_searches()


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.app.handlers.load_pre.append(_before_load)


def unregister() -> None:
    if _before_load in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(_before_load)
    cancel_searches()  # a running search's result is not wanted by an add-on that is going away
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
