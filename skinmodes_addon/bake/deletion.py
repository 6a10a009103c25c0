"""What skinmodes may delete, and when: its own records of the files it wrote, and nothing else.

The object records the files the add-on wrote for it and from which .blend
(``bake_files``); Clear Bake deletes nothing else.  A superseded file that
the .blend as saved on disk may still play is deleted only once that .blend
is saved without it (``registry.PENDING``, flushed by the save handler
registered here).  Temporary files of killed bakes of the object are
removed by its next bake; those of the shared caches by any bake, once
abandoned (:func:`remove_abandoned_partials`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import cast

import bpy

from ..core.io.atomic import partial_in_use
from ..props import settings
from ..registry import HOLD_PENDING, PENDING, SAVED_PLAYS
from .naming import UNSAVED, blend_identity, cache_stem, normalised, resolved, unsaved_identity, user_of

# Temporary files of the shared caches (core.io.atomic naming), and the age at which nobody writes them any more.
SHARED_PARTIAL = re.compile(r"\.(?:model|tets)-[0-9a-f]{16}\.npz\.[0-9a-f]{12}\.partial")
# A point cache's temporary file, named by bake/naming.py (a safe name, a dash, 10 hex digits).
PC2_PARTIAL = re.compile(r"\.[A-Za-z0-9_.-]+-[0-9a-f]{10}\.pc2\.[0-9a-f]{12}\.partial")
ABANDONED_AGE = 3600.0


def record_line(stored: str, path: Path) -> str:
    """A line of ``bake_files``: the file as stored, a tab, the .blend that wrote it (:func:`blend_identity`)."""
    return f"{stored}\t{blend_identity(path.parent)}"


def _records(obj: bpy.types.Object) -> list[tuple[str, str | None]]:
    """(file as stored, the .blend that wrote it, or None for a record older than that) per line."""
    out: list[tuple[str, str | None]] = []
    for line in settings(obj).bake_files.splitlines():
        stored, tab, blend = line.rpartition("\t") if "\t" in line else (line, "", "")
        if stored.strip():
            out.append((stored, blend if tab else None))
    return out


def recorded_files(obj: bpy.types.Object) -> list[str]:
    """The files skinmodes wrote for ``obj`` (as stored: ``//``-relative where possible)."""
    return [stored for stored, _blend in _records(obj)]


def _other_user(obj: bpy.types.Object, stored: str) -> str:
    """The name of another object that plays back or claims the file ``stored``, or ""."""
    return user_of(obj, resolved(stored, obj))


def deletion_refused(obj: bpy.types.Object, stored: str) -> str:
    """Why skinmodes must not delete the file ``stored`` for ``obj``, or "" if it may.

    It may only if it recorded writing that file for this object, the file
    is a point cache, and no other object uses it (a duplicate of the
    object carries the same record and path until it is baked itself).
    """
    target = resolved(stored, obj)
    writers = [blend for r, blend in _records(obj) if resolved(r, obj) == target]
    if not writers:
        return "skinmodes did not write it for this object"
    if Path(bpy.path.abspath(stored)).suffix.lower() != ".pc2":
        return "it is not a point cache"
    if writers[0] is None:
        return (
            "it was baked before cache names told .blend files apart, so another .blend in that folder "
            "may play it; delete it by hand once none does"
        )
    # This .blend's own: written from where it is now, or by this session before the file was first saved.
    if writers[0] not in (blend_identity(Path(target).parent), unsaved_identity()):
        if writers[0].startswith(UNSAVED):
            return "an unsaved file of another session wrote it and may still play it; delete it by hand once none does"
        return f"{Path(writers[0]).name} wrote it and may still play it"
    other = _other_user(obj, stored)
    return f"'{other}' uses it too" if other else ""


def _blend_key() -> str:
    return normalised(os.path.abspath(bpy.data.filepath)) if bpy.data.filepath else ""


def note_saved_state() -> None:
    """Record which files the .blend, as just loaded or saved, plays (its Mesh Cache modifiers, its bakes)."""
    key = _blend_key()
    if not key:
        return
    played: set[str] = set()
    for o in bpy.data.objects:
        if o.type != "MESH":
            continue
        caches = [cast(bpy.types.MeshCacheModifier, m) for m in o.modifiers if m.type == "MESH_CACHE"]
        paths = [m.filepath for m in caches if m.filepath]
        paths.append(settings(o).bake_file)
        played.update(resolved(p, o) for p in paths if p)
    SAVED_PLAYS[key] = played


def retire_file(obj: bpy.types.Object, stored: str) -> bool:
    """Delete the superseded point cache ``stored`` of ``obj`` (already cleared by :func:`deletion_refused`),
    or, while the saved .blend may still play it, leave it for :func:`flush_pending`; True if left.

    Raises OSError if the deletion fails.
    """
    target = resolved(stored, obj)
    key = _blend_key()
    plays = SAVED_PLAYS.get(key)
    if key and (plays is None or target in plays):
        if target not in PENDING.setdefault(key, []):
            PENDING[key].append(target)
        return True
    Path(target).unlink(missing_ok=True)
    return False


def flush_pending() -> list[str]:
    """After a save of the open .blend: delete its pending files that no object in it plays.

    Returns one line per file that could not be deleted.
    """
    note_saved_state()
    key = _blend_key()
    notes: list[str] = []
    for target in PENDING.pop(key, []):
        if target in SAVED_PLAYS.get(key, ()):
            continue  # played again (an undo, a rename back): not superseded any more
        try:
            Path(target).unlink(missing_ok=True)
        except OSError as exc:
            notes.append(f"could not delete the previous point cache {target} ({exc.strerror}); remove it by hand")
    return notes


@bpy.app.handlers.persistent
def _after_save(*_args: object) -> None:
    if not HOLD_PENDING:
        for note in flush_pending():
            print(f"skinmodes: {note}")


@bpy.app.handlers.persistent
def _after_load(*_args: object) -> None:
    PENDING.clear()  # the saved .blend is what is open now: its files are not superseded
    note_saved_state()


def register() -> None:
    bpy.app.handlers.save_post.append(_after_save)
    bpy.app.handlers.load_post.append(_after_load)


def unregister() -> None:
    for handlers, handler in ((bpy.app.handlers.save_post, _after_save), (bpy.app.handlers.load_post, _after_load)):
        if handler in handlers:
            handlers.remove(handler)


def remove_abandoned_partials(folder: Path, older_than: float) -> list[Path]:
    """Delete the temporary files of caches in ``folder`` (tet, model and point caches, by this add-on's
    naming) that no live writer holds and that are older than ``older_than``: a killed run's, which no bake
    may ever finish (a tet or model cache's key no bake asks for again, a renamed or deleted object's point
    cache).  An object's own next bake removes its point cache's at once (:func:`core.io.atomic.stale_partials`);
    this catches the ones no object will come back for.  A live writer keeps its file locked and fresh
    (it writes frame by frame), so an hour's age and no lock is a dead one, whichever shot it was for.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not (SHARED_PARTIAL.fullmatch(entry.name) or PC2_PARTIAL.fullmatch(entry.name)):
            continue
        try:
            old = entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < older_than
            if old and not partial_in_use(Path(entry.path)):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # gone meanwhile, or not ours to delete: leave it
    return removed


# Salted names (bake/naming.pc2_path) an object's test bakes may have taken: a few at most in practice.
TEST_BAKE_SALTS = 16


def remove_test_bakes(obj: bpy.types.Object, written: Path) -> list[str]:
    """Delete the point caches that test bakes of ``obj`` left (``--no-save``, ``keep_previous_file``): the
    object's own other names (:func:`naming.cache_stem` with a salt) that no object of this file plays or
    claims; one line per file removed.  Called when a bake that will be saved has put ``written`` in place.

    Those names hold this object's and this .blend's identity, so no other object or shot writes them; a
    test bake's file is never saved into the .blend, so once the object has a saved bake nothing plays it.
    """
    folder, said = written.parent, []
    for salt in range(1, TEST_BAKE_SALTS):
        path = folder / f"{cache_stem(obj, salt)}.pc2"
        if path == written or not path.is_file() or user_of(obj, normalised(str(path)), include_self=True):
            continue
        try:
            path.unlink()
        except OSError as exc:
            said.append(f"could not remove {path.name}, left by a test bake ({exc.strerror or exc}); delete it by hand")
            continue
        said.append(f"removed {path.name}, a test bake's point cache that nothing plays")
    return said
