"""Putting a finished bake in place of the previous one: completely or not at all.

Commit is a transaction.  It builds the new bake beside the old one, each
step recorded with its inverse (the cache modifier re-pointed, the old shape
keys renamed aside and their action unassigned, the new keys and action
made), and swaps the new point cache in last, by an atomic rename over the
old file.  An exception of any type before that rename undoes every step:
modifiers, shape keys, actions, files and the object's properties are as
they were.  After it only clean-up remains (the old keys, action and file:
``outputs.drop_old_bake``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ..core.errors import SkinmodesError
from ..core.io.pc2 import PC2Writer
from ..props import settings
from ..registry import KEEP_REPLACED, REPLACED
from .deletion import deletion_refused, record_line
from .disk import disk_error
from .outputs import OldBake, set_aside_shape_keys, set_cache_modifier, write_shape_keys
from .travel import TravelKeys, action_name, put_travel_keys
from .undo import Undo, set_all

# The object's properties a commit writes (and restores if it fails).
BAKE_STATUS = (
    "bake_kind",
    "bake_file",
    "bake_start",
    "bake_end",
    "bake_key",
    "bake_action",
    "bake_warning",
    "bake_files",
)


@dataclass
class NewBake:
    """What a finished bake puts in place: its output ("PC2" or "SHAPE_KEYS"), frames, the key of its
    inputs and its first warning; a point cache's writer and paths, or the shape keys' offsets per frame
    (k, 3) each.  ``keep_previous``: a test bake, which never deletes the file the saved .blend plays."""

    output: str
    start: int
    end: int
    key: str
    warning: str
    writer: PC2Writer | None = None
    rel_path: str = ""
    abs_path: Path = Path()
    offsets: dict[int, np.ndarray] = field(default_factory=dict)
    keep_previous: bool = False
    travel: TravelKeys | None = None  # the gait's travel keys (bake/travel.py), or None: none on the object


def put_in_place(obj: bpy.types.Object, new: NewBake, old: OldBake, undo: Undo) -> list[str]:
    """Replace ``old`` by ``new`` on ``obj``, every step recorded in ``undo``; the swap of the point
    cache last.  Returns the files written (the point cache's path, or none for shape keys).

    The caller runs ``undo`` if this raises; after it returns only clean-up remains.
    """
    s = settings(obj)
    status = {name: getattr(s, name) for name in BAKE_STATUS}
    undo.add(lambda: set_all(s, status))
    # Decided before the status (and its record of files) changes.
    old.refused = deletion_refused(obj, old.file) if old.file else ""
    if old.file and new.keep_previous:
        old.refused = "this is a test bake and the saved .blend plays it"
    if new.writer is not None:
        set_cache_modifier(obj, new.rel_path, new.start, undo)
        action = ""
    else:
        set_aside_shape_keys(obj, old, undo)
        action = write_shape_keys(obj, new.offsets, undo)
    old.travel_action = put_travel_keys(obj, new.travel, action_name(obj), undo)
    s.bake_kind = new.output
    s.bake_file = new.rel_path if new.writer is not None else ""
    s.bake_files = record_line(new.rel_path, new.abs_path) if new.writer is not None else ""
    s.bake_action = action
    s.bake_start, s.bake_end = new.start, new.end
    s.bake_key = new.key
    s.bake_warning = new.warning
    if new.writer is not None:
        keep_replaced(new.abs_path, undo)
        # The swap, last: an atomic rename over the old file of the same name.
        return [str(new.writer.commit())]
    return []


def keep_replaced(target: Path, undo: Undo) -> None:
    """While the command line will save the .blend after this bake (``registry.KEEP_REPLACED``), keep the
    content of the point cache ``target`` that the swap is about to replace: a hard link beside it (no
    space needed on a full disk), else a copy; a new file is recorded with no copy (it goes if the save
    fails).  Recorded in ``registry.REPLACED`` for the command line to
    put back if the .blend cannot be saved, or to drop once it reads back whole; removed again by ``undo``
    if the bake fails before the swap."""
    if not KEEP_REPLACED:
        return
    if not target.exists():
        # A new name: nothing to keep, but the file goes if the save fails (nothing would play it).
        REPLACED.append(("", str(target)))
        undo.add(lambda: REPLACED.remove(("", str(target))))
        return
    kept = target.with_name(f"{target.name}.{os.getpid()}.replaced")
    try:
        os.link(target, kept)
    except OSError:
        shutil.copyfile(target, kept)
    undo.add(lambda: kept.unlink(missing_ok=True))
    REPLACED.append((str(kept), str(target)))
    undo.add(lambda: REPLACED.remove((str(kept), str(target))))


def commit_error(exc: Exception, target: str, failed: list[str]) -> SkinmodesError:
    if isinstance(exc, OSError):
        err: SkinmodesError = disk_error(exc, target)
    elif isinstance(exc, SkinmodesError):
        err = exc
    else:
        err = SkinmodesError(f"bake failed while writing it ({type(exc).__name__}: {exc}); nothing was changed")
    if failed:  # should not happen; if it does, say so rather than claim a clean scene
        return type(err)(f"{err} (but restoring the previous bake failed: {failed[0]})")
    return err
