"""Where an object's caches go: the folder its settings name, as an absolute path."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import bpy

from ..props import SkinmodesSettings, default_cache_dir
from ..registry import UNSAVED_FOLDER


def unsaved_folder() -> Path:
    """This process's own folder for the caches of unsaved files: made once, removed when the process ends.

    Never a fixed name in the system temp folder: two users (or two sessions)
    would share, and overwrite, each other's caches there.
    """
    if not UNSAVED_FOLDER:
        path = Path(tempfile.mkdtemp(prefix="skinmodes-unsaved-"))
        atexit.register(shutil.rmtree, path, True)
        UNSAVED_FOLDER.append(path)
    return UNSAVED_FOLDER[0]


def names_fixed_folder(s: SkinmodesSettings) -> bool:
    """Whether the Cache Folder is absolute (or ``~``): a folder that does not depend on the .blend's, so it
    holds an unsaved file's point cache as well as a saved one's."""
    raw = s.cache_dir or default_cache_dir()
    return raw.startswith("~") or (not raw.startswith("//") and os.path.isabs(raw))


def cache_folder(s: SkinmodesSettings) -> Path:
    """The cache folder the setting names, as an absolute path.

    ``//`` and relative paths are relative to the .blend's folder (an unsaved
    file has none: they go to :func:`unsaved_folder`), ``~`` is the home
    folder, absolute paths are taken as they are.  The working directory
    never matters: Blender's own ``bpy.path.abspath`` would resolve
    ``//`` of an unsaved file, and plain relative paths, against it.
    """
    raw = s.cache_dir or default_cache_dir()
    if raw.startswith("~"):
        return Path(os.path.normpath(os.path.expanduser(raw)))
    if names_fixed_folder(s):
        return Path(os.path.normpath(raw))
    base = Path(bpy.data.filepath).parent if bpy.data.filepath else unsaved_folder()
    return Path(os.path.normpath(base / raw.removeprefix("//")))
