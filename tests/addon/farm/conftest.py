"""Fixtures of the farm tests: three small saved shots, two characters, one of them in two shots."""

import os
import stat
import sys
from pathlib import Path

import pytest

from testkit.build_extension import ADDON_MODULE

ROOT = Path(__file__).resolve().parents[3]

# The shots: file -> (object, detail, hop).  Creature is in s1 and s2 with different animation (hop):
# one character; Blob (coarser) is the second, in s2 and s3.
SHOTS = {
    "s1": [("Creature", 12, 0.25)],
    "s2": [("Creature", 12, 0.4), ("Blob", 10, 0.3)],
    "s3": [("Blob", 10, 0.2)],
}
FRAMES = (1, 8)

# What `blender -b --command skinmodes ARGS` does, with the bpy module: the extension installed in the
# profile (BLENDER_USER_RESOURCES) is enabled, then its command runs.
COMMAND = f"""
import importlib, sys, bpy
from testkit.blender_process import leave
bpy.ops.preferences.addon_enable(module="{ADDON_MODULE}")
leave(importlib.import_module("{ADDON_MODULE}.cli").main(sys.argv[1:]))
"""


def build_shot(path, parts):
    """Save a .blend at ``path`` holding one small creature per (name, detail, hop)."""
    import bpy

    from testkit.creature import build_creature

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    for name, detail, hop in parts:
        obj, _arm = build_creature(detail=detail, frames=FRAMES, name=name, hop=hop)
        s = obj.skinmodes
        s.target_tets, s.modes, s.clusters, s.substeps = 800, 6, 16, 1
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


@pytest.fixture
def shots(addon, tmp_path):
    """tmp_path/shots/s1.blend, s2.blend, s3.blend (see SHOTS); caches in //skinmodes_cache/ by default."""
    folder = tmp_path / "shots"
    folder.mkdir()
    for name, parts in SHOTS.items():
        build_shot(folder / f"{name}.blend", parts)
    return folder


@pytest.fixture
def fake_blender(tmp_path):
    """An executable standing in for ``blender``: ``-b --command skinmodes ARGS`` runs the command with the bpy
    module, the extension enabled from tmp_path/profile (install it there first, e.g. with run_cli)."""
    path = tmp_path / "blender"
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2 $3" != "-b --command skinmodes" ]; then echo "fake blender: $*" >&2; exit 2; fi\n'
        "shift 3\n"
        f"cd '{ROOT}'\n"
        f"BLENDER_USER_RESOURCES='{tmp_path / 'profile'}' OPENBLAS_NUM_THREADS=1 "
        f"exec '{sys.executable}' -c '{COMMAND}' \"$@\"\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    assert os.access(path, os.X_OK)
    return path
