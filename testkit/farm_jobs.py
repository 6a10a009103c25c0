"""Farm jobs on one machine: small saved shots, and a stand-in for ``blender`` that OpenJD tasks can run.

``openjd run`` runs a bundle's tasks as ``<Blender> -b --command skinmodes ARGS``; with the bpy module
there is no Blender binary, so :func:`fake_blender` writes an executable that runs the same
``cli.main`` with the extension installed in a profile (``BLENDER_USER_RESOURCES``), as Blender
does at start-up.  Used by the farm tests and ``tools/farm_bench.py``.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from testkit.build_extension import ADDON_MODULE

ROOT = Path(__file__).resolve().parent.parent

# What `blender -b --command skinmodes ARGS` does: the installed extension is enabled, then its command runs.
COMMAND = f"""
import importlib, sys, bpy
from testkit.blender_process import leave
bpy.ops.preferences.addon_enable(module="{ADDON_MODULE}")
leave(importlib.import_module("{ADDON_MODULE}.cli").main(sys.argv[1:]))
"""


def build_shot(path: Path, parts: list[tuple[str, int, float]], frames: tuple[int, int], **settings: int) -> None:
    """Save a .blend at ``path`` holding one creature per (name, detail, hop), with these skinmodes settings."""
    import bpy

    from testkit.creature import build_creature

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    for name, detail, hop in parts:
        obj, _arm = build_creature(detail=detail, frames=frames, name=name, hop=hop)
        for key, value in settings.items():
            setattr(obj.skinmodes, key, value)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def fake_blender(path: Path, profile: Path) -> Path:
    """Write an executable at ``path`` standing in for ``blender``: ``-b --command skinmodes ARGS`` runs the
    command with the bpy module and the extension installed in ``profile``; anything else exits 2."""
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2 $3" != "-b --command skinmodes" ]; then echo "fake blender: $*" >&2; exit 2; fi\n'
        "shift 3\n"
        f"cd '{ROOT}'\n"
        f"BLENDER_USER_RESOURCES='{profile}' OPENBLAS_NUM_THREADS=1 "
        f"exec '{sys.executable}' -c '{COMMAND}' \"$@\"\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
