"""Fixtures of the safety suite.

The add-on lane's own fixtures (real Blender, the extension installed as
Blender installs it, a fresh scene per test, the small creature) are
imported, not copied; :func:`shot` adds a saved .blend with its caches next
to it.
"""

import os
import subprocess
import sys

import pytest

from tests.addon.conftest import addon, bpy_scene, creature, dev_zip, fresh_scene  # noqa: F401
from tests.safety import faults

# What Blender does for ``blender -b FILE --command skinmodes ...``: the extension, installed in the
# profile, is enabled at start-up; then its command runs.  (python -m tools.skinmodes_cli --install prints
# the install's own status line on stdout first.)
COMMAND = """
import importlib, sys, bpy
from testkit.blender_process import leave
bpy.ops.preferences.addon_enable(module="bl_ext.user_default.skinmodes")
leave(importlib.import_module("bl_ext.user_default.skinmodes.cli").main(sys.argv[1:]))
"""


@pytest.fixture
def shot(creature, tmp_path):  # noqa: F811 - the imported fixture, requested by name
    """The creature saved as ``tmp_path/shot/shot.blend``, caches in ``//skinmodes_cache/`` beside it."""
    import bpy

    obj, arm, scene = creature
    obj.skinmodes.cache_dir = "//skinmodes_cache/"
    folder = tmp_path / "shot"
    folder.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / "shot.blend"))
    return obj, arm, scene, folder


@pytest.fixture
def installed(dev_zip, shot, tmp_path):  # noqa: F811 - the imported fixture, requested by name
    """The saved shot (its object's name and folder), the extension installed into ``tmp_path/profile``."""
    obj, _arm, _scene, folder = shot
    proc = faults.start_cli(
        dev_zip, tmp_path / "profile", "clear", "--blend", str(folder / "shot.blend"), "--object", obj.name
    )
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return obj.name, folder


def run_command(tmp_path, *args, env=None, tool=False):
    """The command in its own process, with the profile :func:`installed` made (``tool``: through
    ``python -m tools.skinmodes_cli`` instead, which takes ``--install``)."""
    full = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "profile"), OPENBLAS_NUM_THREADS="1", **(env or {}))
    entry = ["-m", "tools.skinmodes_cli"] if tool else ["-c", COMMAND]
    return subprocess.run(
        [sys.executable, *entry, *args], capture_output=True, text=True, env=full, timeout=600, cwd=faults.ROOT
    )
