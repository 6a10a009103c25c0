"""Flamenco: the job type file (``skinmodes_bake.js``) and the job that runs a farm bake there (no bpy).

Flamenco 3 compiles a job into tasks with a JavaScript job type in its
Manager's ``scripts/`` folder.  ``skinmodes_bake.js`` is ours: its tasks run
exactly the OpenJD bundle's commands (Prepare per character, Bake per shot ×
object after it, Report).  :func:`flamenco_job` is the body of Flamenco's
``POST /api/v3/jobs`` for the same shots; ``skinmodes farm`` writes it as
``flamenco_job.json`` beside ``template.yaml``.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from .template import BakeTask

# Flamenco names a job type after its file, "_" -> "-".
JOB_TYPE_FILE = Path(__file__).with_name("skinmodes_bake.js")
JOB_TYPE = JOB_TYPE_FILE.stem.replace("_", "-")
# The Manager's variable for the workers' Blender: the job's Blender when the farm command was left at its default.
MANAGER_BLENDER = "{blender}"


def flamenco_job(
    tasks: list[BakeTask], cache_dir: str, blender: str = "blender", frames: tuple[int, int] | None = None
) -> dict[str, object]:
    """The job for Flamenco's ``POST /api/v3/jobs`` (a ``SubmittedJob``): type skinmodes-bake, its settings.

    cache_dir: absolute, as the workers see it.  blender "blender" (the farm
    command's default) becomes ``{blender}``, which the Manager replaces per
    worker.
    """
    rows = [{"shot": t.shot, "object": t.object, "character": t.character} for t in tasks]
    shots = len({t.shot for t in tasks})
    return {
        "name": f"skinmodes: {shots} shots, {len({t.character for t in tasks})} characters, {len(tasks)} bakes",
        "type": JOB_TYPE,
        "priority": 50,
        "submitter_platform": platform.system().lower(),
        "settings": {
            "blender": MANAGER_BLENDER if blender == "blender" else blender,
            "cache_dir": cache_dir,
            "frames": f"{frames[0]}..{frames[1]}" if frames is not None else "",
            "tasks": json.dumps(rows),
        },
        "metadata": {"project": "skinmodes"},
    }
