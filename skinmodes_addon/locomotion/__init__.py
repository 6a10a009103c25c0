"""Locomotion for a mesh without an armature (issue 26): Find Gait, the gait the object keeps, its panel,
and the ``skinmodes gait`` command.  The gait plays through the session's frame loop like the jiggle
(``core.pipeline.locomotion_drive``), so the preview and the bake need nothing of their own."""

from __future__ import annotations

import bpy

from . import operators, panel
from .job import GAIT_JOBS

CLASSES = (*operators.CLASSES, *panel.CLASSES)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for job in list(GAIT_JOBS.values()):
        job.cancel()  # a running search's result is not wanted by an add-on that is going away
    GAIT_JOBS.clear()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
