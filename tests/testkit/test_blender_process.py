"""A process with bpy: its throw-away profile, and leaving without teardown (testkit/blender_process.py)."""

import os
import subprocess
import sys
from pathlib import Path

from testkit.blender_process import throwaway_profile

ROOT = Path(__file__).resolve().parents[2]


def test_the_throwaway_profile_is_named_in_the_environment_and_removed_after():
    before = os.environ.get("BLENDER_USER_RESOURCES")
    try:
        with throwaway_profile("skinmodes-test-profile-") as profile:
            assert profile.is_dir() and os.environ["BLENDER_USER_RESOURCES"] == str(profile)
            assert profile.name.startswith("skinmodes-test-profile-")
        assert not profile.exists()
    finally:
        if before is not None:
            os.environ["BLENDER_USER_RESOURCES"] = before


_CHILD = """
import atexit, sys
from testkit.blender_process import run_and_leave
atexit.register(print, "teardown ran")  # leave() skips the interpreter's teardown
def main(argv):
    print("working", *argv, end="")  # unflushed: leave() flushes it
    return 3
run_and_leave(main, "skinmodes-test-leave-")
"""


def test_leave_keeps_the_exit_status_and_the_output_and_skips_teardown():
    out = subprocess.run([sys.executable, "-c", _CHILD, "a", "b"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 3, out.stderr
    assert out.stdout == "working a b"
