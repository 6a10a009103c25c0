"""Baking secondary motion: the job, its transaction, its outputs, file naming and the deletion policy.

The names below are the room's front door for scripts, tests and the
bench; the add-on's own modules import from the module that holds each.
"""

from __future__ import annotations

from .deletion import deletion_refused, flush_pending, recorded_files
from .job import OUTPUTS, BakeJob
from .naming import cache_stem, pc2_path, safe_name
from .outputs import clear_bake
from .transaction import BAKE_STATUS

__all__ = [
    "BAKE_STATUS",
    "OUTPUTS",
    "BakeJob",
    "cache_stem",
    "clear_bake",
    "deletion_refused",
    "flush_pending",
    "pc2_path",
    "recorded_files",
    "safe_name",
]
