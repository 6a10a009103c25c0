"""A character's simulation session: the request read from Blender, its staleness, the worker job, the session.

The names below are the room's front door for scripts, tests and the
bench; the add-on's own modules import from the module that holds each.
"""

from __future__ import annotations

from .cache_paths import cache_folder, unsaved_folder
from .core_settings import control_curves, controls_of, material_settings, solver_settings, subspace_settings
from .jobs import ModesJob, finish_job, forget_job, running_job, start_job
from .muting import CACHE_MODIFIER, OFFSET_ATTRIBUTE, PREVIEW_MODIFIER, SHAPE_KEY_PREFIX, busy, is_busy, outputs_muted
from .prepare import prepare, uses_arap
from .request import PoseRequest, SessionRequest, read_poses, read_request
from .session import (
    Session,
    build_session,
    clear_sessions,
    current_session,
    drop_session,
    install_session,
    object_by_uid,
    sample_range,
    session_for,
)
from .staleness import Geometry, settings_snapshot

__all__ = [
    "CACHE_MODIFIER",
    "OFFSET_ATTRIBUTE",
    "PREVIEW_MODIFIER",
    "SHAPE_KEY_PREFIX",
    "Geometry",
    "ModesJob",
    "PoseRequest",
    "Session",
    "SessionRequest",
    "build_session",
    "busy",
    "cache_folder",
    "clear_sessions",
    "control_curves",
    "controls_of",
    "current_session",
    "drop_session",
    "finish_job",
    "forget_job",
    "install_session",
    "is_busy",
    "material_settings",
    "object_by_uid",
    "outputs_muted",
    "prepare",
    "read_poses",
    "read_request",
    "running_job",
    "sample_range",
    "session_for",
    "settings_snapshot",
    "solver_settings",
    "start_job",
    "subspace_settings",
    "unsaved_folder",
    "uses_arap",
]
