"""Test configuration shared by every lane.

Blender keeps its user configuration in ~/.config/blender unless
BLENDER_USER_RESOURCES points elsewhere; it must be set before ``bpy`` is
imported anywhere, so it is set here, at collection time, to a temporary
folder that is removed when the session ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

from testkit.blender_process import leave

_USER_RESOURCES = tempfile.mkdtemp(prefix="skinmodes-blender-user-")
os.environ["BLENDER_USER_RESOURCES"] = _USER_RESOURCES


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_USER_RESOURCES, ignore_errors=True)
    if "bpy" in sys.modules:
        # The bpy 4.2 module segfaults while the interpreter tears it down once an
        # extension has been installed (exit status 139 after every test passed).
        # Leave with pytest's own status once everything has been reported.
        atexit.register(leave, int(exitstatus))
