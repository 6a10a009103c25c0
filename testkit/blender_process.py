"""A process that imports the bpy module: its throw-away Blender profile, and how it leaves.

bpy reads BLENDER_USER_RESOURCES when it is first imported, so a command that
must not touch the user's Blender configuration points it at a temporary
folder first (:func:`throwaway_profile`).  The bpy module can crash while the
interpreter tears it down (seen with bpy 4.2 after an extension was installed:
SIGSEGV after a clean run), so such a process leaves with :func:`leave`
once its work is written.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn


@contextmanager
def throwaway_profile(prefix: str) -> Iterator[Path]:
    """Point BLENDER_USER_RESOURCES at a new temporary folder named ``prefix…``; remove it afterwards."""
    profile = tempfile.mkdtemp(prefix=prefix)
    os.environ["BLENDER_USER_RESOURCES"] = profile
    try:
        yield Path(profile)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def leave(code: int) -> NoReturn:
    """End the process with exit status ``code`` now, skipping the interpreter's (and bpy's) teardown.

    Output is flushed first.  Blender's own clean-up, skipped with the rest,
    would remove its session temp folder: that is done here.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    bpy = sys.modules.get("bpy")
    if bpy is not None:
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    os._exit(code)


def run_and_leave(main: Callable[[list[str]], int], prefix: str) -> NoReturn:
    """A command's ``__main__``: ``main(sys.argv[1:])`` in a throw-away profile, then :func:`leave` with its status."""
    with throwaway_profile(prefix):
        code = main(sys.argv[1:])
    leave(code)
