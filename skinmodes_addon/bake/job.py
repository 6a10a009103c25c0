"""Baking secondary motion: a point cache (.pc2 + Mesh Cache modifier) or shape keys.

A bake is a :class:`BakeJob`: a generator that advances one frame per step,
so the modal operator can show progress and honour Esc, while the CLI, the
Python API and tests run it to the end.  Until :meth:`BakeJob.commit`,
nothing in the scene or on disk changes except a temporary file next to the
destination: cancelling or failing leaves the scene and the disk exactly as
they were (frame restored, old bake untouched).

Commit is a transaction.  It builds the new bake beside the old one, each
step recorded with its inverse (the cache modifier re-pointed, the old shape
keys renamed aside and their action unassigned, the new keys and action
made), and swaps the new point cache in last, by an atomic rename over the
old file.  An exception of any type before that rename undoes every step:
modifiers, shape keys, actions, files and the object's properties are as
they were.  After it only clean-up remains (the old keys, action and file).

One pass over the frame range, one ``frame_set`` per frame: it samples the
rig, reads what the Armature modifier outputs (skinmodes' own outputs and
every modifier after the Armature modifier muted), steps the simulation and
streams that plus the offsets out.  The cache plays back right after the
Armature modifier, so the modifiers after it act on the jiggled mesh (see
character.py for the modifier stack).

Files.  One point cache per object and .blend: its name is the object's name
made safe plus a short hash of its full name, library and .blend
(:func:`cache_stem`), in the folder the settings name
(:func:`session.cache_folder`).  The object records the files the add-on
wrote for it and from which .blend (``bake_files``); Clear Bake deletes
nothing else.  A superseded file that the .blend as saved on disk may still
play is deleted only once that .blend is saved without it (:data:`PENDING`).
Temporary files of killed bakes of the object are removed by its next bake.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import time
import unicodedata
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import bpy
import numpy as np

from .character import (
    armature_output,
    check_object,
    different_topology_error,
    evaluated_coordinates,
    fcurves_of,
    place_after_armature,
    renumbering_modifiers,
)
from .core.errors import CacheError, RigError, SkinmodesError
from .core.io.atomic import partial_in_use, remove_stale_partials
from .core.io.pc2 import PC2Writer, check_writable
from .core.model.rig import normalize_weights
from .core.pipeline import check_frame_range
from .props import scene_of, settings
from .session import (
    CACHE_MODIFIER,
    SHAPE_KEY_PREFIX,
    STOP_REQUESTS,
    Session,
    build_session,
    busy,
    cache_folder,
    current_session,
    drop_session,
    outputs_muted,
    report_progress,
    sample_range,
)

OUTPUTS = ("PC2", "SHAPE_KEYS")


# Hex digits of the identity hash in file names: 40 bits, so two objects' names
# meet by chance about once in a trillion pairs.
STEM_HASH = 10
# Characters of the readable part of a file name (Blender names have up to 63 bytes).
STEM_NAME = 40
# Old shape keys are renamed to this prefix while a new shape-key bake is put in place.
ASIDE_PREFIX = SHAPE_KEY_PREFIX + "replaced."
# Bytes of a PC2 file's header (core.io.pc2).
PC2_HEADER = 32
# Temporary files of the shared caches (core.io.atomic naming), and the age at which nobody writes them any more.
SHARED_PARTIAL = re.compile(r"\.(?:model|tets)-[0-9a-f]{16}\.npz\.[0-9a-f]{12}\.partial")
ABANDONED_AGE = 3600.0
# Set on the shape keys (the Key) when a bake added their Basis: only then does removing the bake remove it.
BASIS_MARK = "skinmodes_made_basis"
# The object's properties a session build writes (restored if the bake that built it fails).
SESSION_STATUS = frozenset(
    (
        "stat_tets",
        "stat_vertices",
        "stat_modes",
        "stat_clusters",
        "stat_seconds",
        "stat_mesher",
        "stat_notes",
        "stat_size",
        "stat_physical_hz",
        "modes_key",
    )
)
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


class Interrupted(KeyboardInterrupt):
    """A signal (SIGINT, SIGTERM) asked the bake to stop; see :data:`STOP_REQUESTS`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def safe_name(name: str) -> str:
    """``name`` as a portable file-name part: ASCII letters, digits and ``_.-``.

    Accents are dropped (``Körper`` → ``Korper``), anything else becomes
    ``_``; never empty, never hidden, never a path.  Not unique on its own
    (``Body L`` and ``Body_L`` agree): :func:`cache_stem` adds the identity.
    """
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_name).strip("._-")[:STEM_NAME].strip("._-") or "object"


def object_identity(obj: bpy.types.Object) -> str:
    """What tells one object from every other: its full name (with its library's) and the library's file."""
    library = obj.library.filepath if obj.library is not None else ""
    return f"{obj.name_full}\n{library}"


def blend_identity(folder: Path) -> str:
    """The open .blend as seen from ``folder``: its path relative to it ("" while unsaved).

    Relative, so moving a project (the .blend and ``//`` caches together)
    keeps it; two .blend files, in one folder or in two that share an
    absolute cache folder, never agree.
    """
    if not bpy.data.filepath:
        return ""
    blend = os.path.abspath(bpy.data.filepath)
    try:
        relative = os.path.relpath(blend, folder)
    except ValueError:  # another drive (Windows)
        relative = blend
    return os.path.normcase(relative).replace(os.sep, "/")


def cache_stem(obj: bpy.types.Object, salt: int = 0) -> str:
    """The stem of the object's file names: its name made safe, a dash, a short hash of its identity.

    The identity is the object's (:func:`object_identity`) and the .blend's
    (:func:`blend_identity`), so shots in one folder holding the same
    character never share a file; ``salt`` > 0 gives the other names
    :func:`pc2_path` falls back to when another object plays this one.
    """
    folder = cache_folder(settings(obj)) if bpy.data.filepath else Path()
    identity = f"{object_identity(obj)}\n{blend_identity(folder)}" + (f"\n{salt}" if salt else "")
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:STEM_HASH]
    return f"{safe_name(obj.name)}-{digest}"


def blend_relative(path: Path) -> str:
    """``path`` as Blender stores file paths: relative to the .blend (``//``) where it can be."""
    try:
        return bpy.path.relpath(str(path))
    except ValueError:  # another drive (Windows): only the absolute path reaches it
        return str(path)


def pc2_path(obj: bpy.types.Object, keep_own: bool = False) -> tuple[str, Path]:
    """The point cache's path as the modifier stores it (``//``-relative) and its absolute path.

    Always ``<cache folder>/<cache_stem>.pc2``: the name holds no separator,
    so the file never leaves the folder the settings name.  A name another
    object of this file plays (a renamed object's old name, now taken by a
    new one) is skipped for the next salted one; ``keep_own`` skips the
    object's own file too (a test bake that must leave the saved one alone).
    """
    if not bpy.data.filepath:
        raise SkinmodesError("save the .blend first: the point cache is written next to it (File > Save)")
    folder = cache_folder(settings(obj))
    for salt in range(1000):
        path = folder / f"{cache_stem(obj, salt)}.pc2"
        if not _user_of(obj, _normalised(str(path)), include_self=keep_own):
            break
    return blend_relative(path), path


def _resolved(stored: str, obj: bpy.types.Object | None = None) -> str:
    """A stored (``//`` or absolute) path as a comparable absolute path."""
    library = obj.library if obj is not None else None
    return os.path.normcase(os.path.normpath(bpy.path.abspath(stored, library=library)))


def _normalised(path: str) -> str:
    return os.path.normcase(os.path.normpath(path))


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
    return _user_of(obj, _resolved(stored, obj))


def _user_of(obj: bpy.types.Object, target: str, include_self: bool = False) -> str:
    """The name of an object (other than ``obj``, unless ``include_self``) that plays or claims ``target``."""
    for other in bpy.data.objects:
        if (other == obj and not include_self) or other.type != "MESH":
            continue
        caches = [cast(bpy.types.MeshCacheModifier, m) for m in other.modifiers if m.type == "MESH_CACHE"]
        paths = [m.filepath for m in caches if m.filepath]
        paths.append(settings(other).bake_file)
        if any(p and _resolved(p, other) == target for p in paths):
            return other.name
    return ""


def deletion_refused(obj: bpy.types.Object, stored: str) -> str:
    """Why skinmodes must not delete the file ``stored`` for ``obj``, or "" if it may.

    It may only if it recorded writing that file for this object, the file
    is a point cache, and no other object uses it (a duplicate of the
    object carries the same record and path until it is baked itself).
    """
    target = _resolved(stored, obj)
    writers = [blend for r, blend in _records(obj) if _resolved(r, obj) == target]
    if not writers:
        return "skinmodes did not write it for this object"
    if Path(bpy.path.abspath(stored)).suffix.lower() != ".pc2":
        return "it is not a point cache"
    if writers[0] is None:
        return (
            "it was baked before cache names told .blend files apart, so another .blend in that folder "
            "may play it; delete it by hand once none does"
        )
    if writers[0] != blend_identity(Path(target).parent):
        return f"{Path(writers[0]).name} wrote it and may still play it"
    other = _other_user(obj, stored)
    return f"'{other}' uses it too" if other else ""


# A superseded point cache (a rebake under a new name, Clear Bake) that the .blend as saved on disk
# may still play is not deleted at once: it waits here, per .blend (its path), until that .blend is
# saved with no object playing it (:func:`flush_pending`, from the save handler).  A .blend closed or
# reloaded without saving keeps the file: a leftover is better than a saved shot that renders rig-only.
PENDING: dict[str, list[str]] = {}
# Per .blend (its path): the files its saved version plays, as read at its last load or save.  A .blend
# not seen loaded or saved (the add-on enabled later) counts as playing everything.
SAVED_PLAYS: dict[str, set[str]] = {}
# While set, a save leaves the pending files to its caller (the command line verifies the save first).
HOLD_PENDING: list[bool] = []


def _blend_key() -> str:
    return _normalised(os.path.abspath(bpy.data.filepath)) if bpy.data.filepath else ""


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
        played.update(_resolved(p, o) for p in paths if p)
    SAVED_PLAYS[key] = played


def retire_file(obj: bpy.types.Object, stored: str) -> bool:
    """Delete the superseded point cache ``stored`` of ``obj`` (already cleared by :func:`deletion_refused`),
    or, while the saved .blend may still play it, leave it for :func:`flush_pending`; True if left.

    Raises OSError if the deletion fails.
    """
    target = _resolved(stored, obj)
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
    """Delete the temporary files of shared (tet and model) caches in ``folder`` that no live writer
    holds and that are older than ``older_than``: a killed run's, for a key no bake will ask for again.

    Those caches are named by their contents, so any bake may clean them; a
    point cache's temporary files are left to their own object's next bake.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not SHARED_PARTIAL.fullmatch(entry.name):
            continue
        try:
            old = entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < older_than
            if old and not partial_in_use(Path(entry.path)):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # gone meanwhile, or not ours to delete: leave it
    return removed


def rig_follows_mesh(obj: bpy.types.Object, armature: str) -> str:
    """A constraint of the armature (or of one of its bones) that targets ``obj``, as "bone 'X': 'Copy Location'";
    "" if none does.  Such a rig depends on the mesh the simulation deforms."""
    arm = bpy.data.objects.get(armature)
    if arm is None:
        return ""
    owners = [("the armature", arm.constraints)]
    owners += [(f"bone '{pb.name}'", pb.constraints) for pb in (arm.pose.bones if arm.pose is not None else [])]
    for owner, constraints in owners:
        for c in constraints:
            if getattr(c, "target", None) == obj and not c.mute:
                return f"{owner}: '{c.name}'"
    return ""


def check_room(folder: Path, frames: int, vertices: int) -> None:
    """Refuse, before any work, a point cache that cannot fit on the cache folder's disk (one line).

    The size is a lower bound (the mesh's own vertices; modifiers above the
    Armature modifier may add some), so only a bake that surely cannot fit
    is refused: a range of a million frames fills a disk in minutes.
    """
    need = PC2_HEADER + frames * vertices * 12
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    try:
        free = shutil.disk_usage(existing).free if existing is not None else None
    except OSError:
        free = None  # cannot tell: the write itself reports a full disk
    if free is not None and need > free:
        raise CacheError(
            f"the point cache of {frames:,} frames needs {_size(need)} but the disk of {folder} has {_size(free)} "
            f"free ({os.strerror(errno.ENOSPC)}); the previous bake is unchanged: free some disk space, "
            "bake fewer frames or choose another cache folder"
        )


def _size(n: int) -> str:
    """A byte count for people: 85 KB, 3.2 GB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def disk_error(exc: OSError, what: str) -> CacheError:
    """A failed write or rename as one line: what, why, what to do, and that the old bake stands."""
    name = Path(exc.filename).name if isinstance(exc.filename, str) else what
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        advice = "free some disk space or choose another cache folder"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        advice = "choose a writable cache folder (or save the .blend somewhere writable)"
    else:
        advice = "check the cache folder"
    return CacheError(f"could not write {name} ({exc.strerror or exc}); the previous bake is unchanged: {advice}")


def inverse_skinning_matrices(session: Session, frame: int) -> np.ndarray:
    """Per render vertex, the inverse of the Armature modifier's linear map at ``frame``: (k, 3, 3).

    Shape keys act before the Armature modifier, so an object-space offset u
    at frame f is stored as ``(sum_b w_b L_b)^-1 u`` in the key; LBS then
    maps it back exactly (Preserve Volume is not linear, see the README).
    """
    b = session.binding
    P = session.rig[frame].reshape(-1, 3, 4)[:, :, :3]  # world linear parts acting on the rest frame
    G = b.rest_map[:3, :3]
    to_local = session.to_local[frame]
    # Object-space linear map of bone j: to_local @ P_j @ G (rest coords -> sim -> world -> object).
    Lb = to_local[None] @ P @ G[None]
    W = normalize_weights(session.character.bone_weights)
    L = np.einsum("kb,bij->kij", W, Lb)
    try:
        inv = np.linalg.inv(L)
    except np.linalg.LinAlgError:
        inv = np.full_like(L, np.nan)  # reported below, with the vertices it concerns
    bad = ~np.isfinite(inv).all(axis=(1, 2))
    if bad.any():
        raise RigError(
            f"frame {frame}: the rig squashes {int(np.count_nonzero(bad))} vertices of the mesh flat "
            "(a bone scaled to 0?); shape keys cannot store their motion there: "
            "fix the bone's scale at that frame or bake a Point Cache"
        )
    return inv


class BakeJob:
    """Bake ``obj`` over its frame range; iterate :meth:`steps`, then :meth:`commit` (or :meth:`cancel`)."""

    def __init__(
        self,
        context: bpy.types.Context,
        obj: bpy.types.Object,
        output: str | None = None,
        frames: tuple[int, int] | None = None,
        keep_previous: bool = False,
    ) -> None:
        self.scene = scene_of(context)
        # A test bake (the command line's --no-save): never overwrite or delete the file the saved .blend plays.
        self.keep_previous = keep_previous
        self.obj = obj
        s = settings(obj)
        self.output = (output or s.output).upper()
        if self.output not in OUTPUTS:
            raise SkinmodesError(f"unknown output '{output}'; use pc2 or shapekeys")
        self.start, self.end = check_frame_range(*(frames if frames is not None else s.frame_range(self.scene)))
        self.messages: list[str] = []
        self.warnings: list[str] = []  # the simulation's guard: implausible motion, said in one line each
        self.max_offset = 0.0  # largest secondary offset, as a share of the character's size
        self.frames_done = 0
        self.seconds = 0.0
        self.files: list[str] = []
        self._writer: PC2Writer | None = None
        self._offsets: dict[int, np.ndarray] = {}
        self._original_frame = self.scene.frame_current
        self._started = time.time()  # temporary files older than this are a killed run's leftovers
        self._frame = self.start  # the frame being baked, for messages
        self._solving = False  # inside the simulation's step (its failures are not the rig's)
        self._stats: dict[str, object] = {}
        self._closed = False
        self._gen: Generator[float, None, None] | None = None
        # Refuse impossible requests before any heavy work.
        check_object(obj)
        if self.output == "PC2":
            self.rel_path, self.abs_path = pc2_path(obj, keep_own=keep_previous)
            # Proved, not created: a bake refused later (a rig problem) leaves no empty folder;
            # PC2Writer creates it once the bake writes.
            check_writable(self.abs_path.parent, create=False)
            check_room(self.abs_path.parent, self.total, len(obj.data.vertices))
        else:
            if obj.data.library is not None or obj.data.override_library is not None:
                raise SkinmodesError(
                    f"the mesh of '{obj.name}' comes from a library and cannot take new shape keys; "
                    "bake a Point Cache instead"
                )
            twins = [o.name for o in bpy.data.objects if o.data == obj.data and o != obj]
            if twins:
                shown = ", ".join(f"'{n}'" for n in twins[:3]) + (
                    f" and {len(twins) - 3} more" if len(twins) > 3 else ""
                )
                raise SkinmodesError(
                    f"the mesh of '{obj.name}' is shared with {shown} (a linked duplicate): shape keys would move "
                    "them too; make it single-user (Object > Relations > Make Single User > Object & Data) "
                    "or bake a Point Cache"
                )
            keys = obj.data.shape_keys
            ad = keys.animation_data if keys is not None else None
            if ad is not None and ad.action is not None and ad.action.name != s.bake_action:
                raise SkinmodesError(
                    f"the shape keys of '{obj.name}' are animated by action '{ad.action.name}'; "
                    "skinmodes will not touch your keyframes: use Point Cache output instead"
                )
            refuse_shape_keys_for_stack(obj)

    @property
    def total(self) -> int:
        return self.end - self.start + 1

    def steps(self) -> Generator[float, None, None]:
        """Advance one frame per step; yields the fraction done (the generator is kept for :meth:`cancel`)."""
        s = settings(self.obj)
        # Building a session rewrites the modes' statistics; a bake that fails puts them back too.
        self._stats = {name: getattr(s, name) for name in s.bl_rna.properties.keys() if name in SESSION_STATUS}
        self._gen = self._steps()
        return self._gen

    def _steps(self) -> Generator[float, None, None]:
        """The frames, with any failure turned into one line (cancelling keeps the disk and scene)."""
        try:
            yield from self._frames()
        except SkinmodesError:
            raise
        except OSError as exc:
            raise disk_error(exc, self._target()) from exc
        except np.linalg.LinAlgError as exc:
            if self._solving:  # the simulation's own algebra, not the rig's
                raise SkinmodesError(
                    f"frame {self._frame}: the simulation's solver failed ({exc}); nothing was changed: "
                    "raise Sub-steps or lower the stiffness, or Compute Modes again"
                ) from exc
            raise RigError(
                f"frame {self._frame}: the rig cannot be inverted there ({exc}); "
                "a bone or object scaled to 0? fix the rig at that frame"
            ) from exc
        except Exception as exc:
            raise SkinmodesError(
                f"bake failed at frame {self._frame} ({type(exc).__name__}: {exc}); nothing was changed"
            ) from exc

    def _target(self) -> str:
        return self.abs_path.name if self.output == "PC2" else f"the caches of '{self.obj.name}'"

    def _frames(self) -> Generator[float, None, None]:
        t0 = time.perf_counter()
        self._clean_leftovers()
        if not bpy.data.filepath:
            self.messages.append(
                f"this .blend is not saved: its caches are in {cache_folder(settings(self.obj))} for this session "
                "only; save the .blend first for farm use"
            )
        frames = (self.start, self.end)
        session = current_session(self.obj, self.scene, frames)
        if session is not None and session.object_name != self.obj.name:
            drop_session(self.obj)  # renamed since: the session finds its object by the old name
            session = None
        if session is None:
            session = build_session(self.obj, self.scene, log=self.messages.append, frames=frames)
        self.session = session
        self._clean_leftovers(model_key=session.prepared.key)
        follows = rig_follows_mesh(self.obj, session.binding.armature)
        if follows:
            self.messages.append(
                f"the rig follows '{self.obj.name}' itself ({follows}): it reads the mesh skinmodes moves, so the "
                "preview and the bake differ; make the constraint target another object (an empty) instead"
            )
        outside = [int(p.frame) for p in settings(self.obj).poses if not self.start <= p.frame <= self.end]
        if outside:
            shown = ", ".join(map(str, outside[:5])) + (" …" if len(outside) > 5 else "")
            self.messages.append(
                f"training pose(s) at frame {shown} lie outside the baked frames {self.start}-{self.end}: "
                "they still shape the modes; remove them in the Pose-Space panel if that is not meant"
            )
        k = len(session.character.rest)
        if self.output == "PC2":
            self._writer = PC2Writer(self.abs_path, k, float(self.start), self.total)
        # The start state needs the rig's velocity (its first two frames) and the pre-roll's frames.
        sample_range(
            session,
            self.scene,
            [f for f in range(session.first, self.start + 2) if f <= self.end and f not in session.rig],
        )
        session.ensure_simulation()  # build the solver (and fail, if it must) before the first frame
        depsgraph = bpy.context.evaluated_depsgraph_get()
        buf = np.empty(3 * k, dtype=np.float32)
        # The modifiers after the Armature modifier are muted: the evaluated mesh is its output, the
        # mesh the simulation deforms; on playback they act on it with the offsets added.
        with busy(), outputs_muted(self.obj), armature_output(self.obj):
            for f in range(self.start, self.end + 1):
                if STOP_REQUESTS:
                    raise Interrupted(STOP_REQUESTS[0])
                self._frame = f
                self.scene.frame_set(f)
                session.record(f, depsgraph)
                self._solving = True
                offsets = session.offsets_local(f)
                self._solving = False
                if self._writer is not None:
                    rig = evaluated_coordinates(self.obj, depsgraph, buf)
                    if len(rig) != k:
                        raise different_topology_error(self.obj, f, len(rig), k)
                    self._writer.write(rig + offsets)
                else:
                    # Shape keys act before the armature: store the rest-space offset, computed
                    # now so a rig that cannot be inverted fails here, before anything is written.
                    delta = np.einsum("kij,kj->ki", inverse_skinning_matrices(session, f), offsets)
                    self._offsets[f] = delta.astype(np.float32)
                self.frames_done += 1
                self.seconds = time.perf_counter() - t0
                if (10 * self.frames_done) // self.total != (10 * (self.frames_done - 1)) // self.total:
                    report_progress("baking frames", self.frames_done / self.total)  # every tenth
                yield self.frames_done / self.total
        self.warnings = list(session.ensure_simulation().warnings)
        self.max_offset = session.ensure_simulation().max_offset

    def _clean_leftovers(self, model_key: str | None = None) -> None:
        """Delete temporary files that killed runs left for this object (never a live run's, see core.io.pc2)."""
        targets: list[Path] = []
        if model_key is not None:
            # The reduced model's cache file, named as core.pipeline.prepare_character names it.
            targets.append(cache_folder(settings(self.obj)) / f"model-{model_key[:16]}.npz")
        elif self.output == "PC2":
            targets.append(self.abs_path)
        elif bpy.data.filepath:
            targets.append(pc2_path(self.obj)[1])
        removed = [p for target in targets for p in remove_stale_partials(target, self._started)]
        if removed:
            self.messages.append(
                f"removed {len(removed)} temporary file(s) that an interrupted bake of '{self.obj.name}' left in "
                f"{removed[0].parent}"
            )
        if model_key is not None:
            abandoned = remove_abandoned_partials(cache_folder(settings(self.obj)), time.time() - ABANDONED_AGE)
            if abandoned:
                self.messages.append(
                    f"removed {len(abandoned)} temporary file(s) of caches no longer in use from {abandoned[0].parent}"
                )

    def run(self) -> BakeJob:
        """Run every step and commit; cancels cleanly on any error."""
        try:
            for _ in self.steps():
                pass
            if STOP_REQUESTS:  # the last chance to stop before the bake replaces anything
                raise Interrupted(STOP_REQUESTS[0])
        except BaseException:
            self.cancel()
            raise
        self.commit()
        return self

    def _restore_frame(self) -> None:
        with busy():
            self.scene.frame_set(self._original_frame)

    def cancel(self) -> None:
        """Leave the scene and the disk as before the bake."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._gen is not None:
                self._gen.close()  # leaves the muted-outputs block: every toggle is restored
        finally:
            try:
                self._abandon()
            finally:
                self._restore_frame()

    def _abandon(self) -> None:
        """Drop what was built aside (the temporary file, the offsets) and restore the statistics."""
        self._offsets.clear()
        try:
            if self._writer is not None:
                self._writer.abort()  # no-op after a successful commit
        finally:
            s = settings(self.obj)
            changed = {name: value for name, value in self._stats.items() if getattr(s, name) != value}
            _set_all(s, changed)
            if changed:
                drop_session(self.obj)  # its statistics are gone: the next use rebuilds it (from the caches)

    def commit(self) -> None:
        """Replace any previous bake with this one, completely or not at all (see the module notes).

        Raises a one-line :class:`SkinmodesError` (or the interrupting
        exception itself: KeyboardInterrupt, SystemExit) after undoing every
        change when anything fails before the new file is renamed into place.
        """
        if self._closed:
            raise SkinmodesError("this bake was cancelled")
        if self.frames_done != self.total:
            self.cancel()
            raise SkinmodesError(f"the bake stopped after {self.frames_done} of {self.total} frames; bake again")
        self._closed = True
        obj, s = self.obj, settings(self.obj)
        old = _OldBake.of(obj)
        undo = _Undo()
        try:
            with busy():
                status = {name: getattr(s, name) for name in BAKE_STATUS}
                undo.add(lambda: _set_all(s, status))
                # Decided before the status (and its record of files) changes.
                old.refused = deletion_refused(obj, old.file) if old.file else ""
                if old.file and self.keep_previous:
                    old.refused = "this is a test bake and the saved .blend plays it"
                if self._writer is not None:
                    set_cache_modifier(obj, self.rel_path, self.start, undo)
                    action = ""
                else:
                    set_aside_shape_keys(obj, old, undo)
                    action = write_shape_keys(obj, self._offsets, undo)
                s.bake_kind = self.output
                s.bake_file = self.rel_path if self._writer is not None else ""
                s.bake_files = record_line(self.rel_path, self.abs_path) if self._writer is not None else ""
                s.bake_action = action
                s.bake_start, s.bake_end = self.start, self.end
                s.bake_key = self.session.key
                s.bake_warning = self.warnings[0] if self.warnings else ""
                if self._writer is not None:
                    # The swap, last: an atomic rename over the old file of the same name.
                    self.files = [str(self._writer.commit())]
        except BaseException as exc:
            failed = undo.run()
            try:
                self._abandon()
            finally:
                self._restore_frame()
            if not isinstance(exc, Exception):
                raise  # an interrupt stays an interrupt; the scene and disk are restored
            raise _commit_error(exc, self._target(), failed) from exc
        # Point of no return: the new bake is in place; what is left is clean-up.
        self.messages.extend(drop_old_bake(obj, old, self.output))
        self._offsets.clear()
        self._restore_frame()


class _Undo:
    """The steps a commit has taken, each as its inverse; undone newest first if the commit fails."""

    def __init__(self) -> None:
        self._inverses: list[Callable[[], object]] = []

    def add(self, inverse: Callable[[], object]) -> None:
        self._inverses.append(inverse)

    def run(self) -> list[str]:
        """Undo every step, each even if another fails; returns one note per step that failed."""
        failed = []
        while self._inverses:
            inverse = self._inverses.pop()
            try:
                inverse()
            except BaseException as exc:  # keep going: a half-restored scene is the worst outcome
                failed.append(f"{type(exc).__name__}: {exc}")
        return failed


def _commit_error(exc: Exception, target: str, failed: list[str]) -> SkinmodesError:
    if isinstance(exc, OSError):
        err: SkinmodesError = disk_error(exc, target)
    elif isinstance(exc, SkinmodesError):
        err = exc
    else:
        err = SkinmodesError(f"bake failed while writing it ({type(exc).__name__}: {exc}); nothing was changed")
    if failed:  # should not happen; if it does, say so rather than claim a clean scene
        return type(err)(f"{err} (but restoring the previous bake failed: {failed[0]})")
    return err


def _set_all(target: object, values: dict[str, object]) -> None:
    for name, value in values.items():
        setattr(target, name, value)


def _remove_shape_keys(obj: bpy.types.Object, names: Iterable[str]) -> None:
    keys = obj.data.shape_keys
    for name in names:
        obj.shape_key_remove(keys.key_blocks[name])


@dataclass
class _OldBake:
    """The previous bake of an object, as found when a commit starts."""

    kind: str
    file: str
    action: str
    refused: str = ""  # why its file must not be deleted (see deletion_refused), decided before the commit

    @classmethod
    def of(cls, obj: bpy.types.Object) -> _OldBake:
        s = settings(obj)
        return cls(kind=s.bake_kind, file=s.bake_file if s.bake_kind == "PC2" else "", action=s.bake_action)


CACHE_SETTINGS = (
    "cache_format",
    "filepath",
    "time_mode",
    "play_mode",
    "deform_mode",
    "interpolation",
    "frame_start",
    "frame_scale",
    "use_pin_to_last",
)


def _configure_cache_modifier(mod: bpy.types.MeshCacheModifier, rel_path: str, start: int) -> None:
    mod.cache_format = "PC2"
    mod.filepath = rel_path
    mod.time_mode = "FRAME"
    mod.play_mode = "SCENE"
    mod.deform_mode = "OVERWRITE"
    mod.interpolation = "LINEAR"
    mod.frame_start = float(start)
    mod.frame_scale = 1.0


def add_cache_modifier(obj: bpy.types.Object, rel_path: str, start: int) -> bpy.types.Modifier:
    """A Mesh Cache modifier playing the .pc2 back, right after the Armature modifier.

    The file holds the Armature modifier's output plus the offsets, so it
    replaces exactly that; the modifiers after it act on the jiggled mesh.
    """
    mod = cast(bpy.types.MeshCacheModifier, obj.modifiers.new(CACHE_MODIFIER, "MESH_CACHE"))
    _configure_cache_modifier(mod, rel_path, start)
    place_after_armature(obj, mod)
    return mod


def set_cache_modifier(obj: bpy.types.Object, rel_path: str, start: int, undo: _Undo) -> None:
    """Point the object's cache modifier at ``rel_path`` (re-using the old one, or adding one), after the Armature."""
    mod = obj.modifiers.get(CACHE_MODIFIER)
    if mod is None or mod.type != "MESH_CACHE":
        new = add_cache_modifier(obj, rel_path, start)
        undo.add(lambda: obj.modifiers.remove(new))
        return
    saved = {name: getattr(mod, name) for name in CACHE_SETTINGS if hasattr(mod, name)}
    undo.add(lambda: _set_all(mod, saved))
    _configure_cache_modifier(cast(bpy.types.MeshCacheModifier, mod), rel_path, start)
    name = mod.name
    index = place_after_armature(obj, mod)  # an old bake's modifier sat last (pinned)
    undo.add(lambda: obj.modifiers.move(obj.modifiers.find(name), index))


def refuse_shape_keys_for_stack(obj: bpy.types.Object) -> None:
    """Shape keys hold one offset per vertex of the mesh itself: refuse a stack that gives the Armature
    modifier other vertices (a Mirror above it), before any work."""
    renumbering = renumbering_modifiers(obj)
    if renumbering:
        names = ", ".join(f"'{m.name}'" for m in renumbering)
        raise SkinmodesError(
            f"shape keys cannot hold the motion of '{obj.name}': the modifiers above its Armature modifier ({names}) "
            "give it other vertices than the mesh's own; bake a Point Cache instead"
        )


def baked_key_names(keys: bpy.types.Key, prefix: str) -> list[str]:
    """The shape keys a bake made: ``prefix`` and a frame number (a user's own "skinmodes.smile" is not one)."""
    pattern = re.compile(re.escape(prefix) + r"-?\d+")
    return [kb.name for kb in keys.key_blocks if pattern.fullmatch(kb.name)]


def set_aside_shape_keys(obj: bpy.types.Object, old: _OldBake, undo: _Undo) -> None:
    """Make room for new shape keys: rename the old bake's aside and unassign its action (both undoable).

    Renaming while the old action is assigned keeps its F-curves pointing
    at the keys (Blender renames the paths); undoing reassigns it first.
    """
    index = obj.active_shape_key_index
    undo.add(lambda: setattr(obj, "active_shape_key_index", index))
    keys = obj.data.shape_keys
    if keys is None:
        return
    ours = baked_key_names(keys, SHAPE_KEY_PREFIX)
    for name in ours:
        aside = ASIDE_PREFIX + name[len(SHAPE_KEY_PREFIX) :]
        keys.key_blocks[name].name = aside
        undo.add(lambda name=name, aside=aside: setattr(keys.key_blocks[aside], "name", name))
    ad = keys.animation_data
    if ad is not None and ad.action is not None and old.action and ad.action.name == old.action:
        action, slot = ad.action, getattr(ad, "action_slot", None)

        def reassign() -> None:
            ad.action = action
            if slot is not None:
                ad.action_slot = slot

        ad.action = None
        undo.add(reassign)


def write_shape_keys(obj: bpy.types.Object, deltas: dict[int, np.ndarray], undo: _Undo) -> str:
    """One shape key per frame, keyed so exactly that frame's key is active; returns the action's name.

    deltas: per frame, the offsets (k, 3) to add to the basis (see
    :func:`inverse_skinning_matrices`).  Everything made is recorded in ``undo``.
    """
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
        cast(bpy.types.Key, obj.data.shape_keys)[BASIS_MARK] = True
        undo.add(lambda: obj.shape_key_remove(obj.data.shape_keys.key_blocks[0]))
    keys = obj.data.shape_keys
    basis = keys.reference_key
    flat = np.empty(3 * len(obj.data.vertices))
    basis.data.foreach_get("co", flat)
    rest = flat.reshape(-1, 3)
    if keys.animation_data is None:
        keys.animation_data_create()
        undo.add(keys.animation_data_clear)
    action = bpy.data.actions.new(f"{SHAPE_KEY_PREFIX}{cache_stem(obj)}")
    undo.add(lambda: bpy.data.actions.remove(action))
    keys.animation_data.action = action
    made: list[str] = []
    undo.add(lambda: _remove_shape_keys(obj, reversed(made)))
    for f in sorted(deltas):
        kb = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{f:05d}", from_mix=False)
        made.append(kb.name)
        kb.relative_key = basis
        kb.data.foreach_set("co", (rest + deltas[f]).astype(np.float32).ravel())
        kb.value = 0.0
        for frame, value in ((f - 1, 0.0), (f, 1.0), (f + 1, 0.0)):
            kb.value = value
            kb.keyframe_insert("value", frame=frame)
    for fc in fcurves_of(action):
        for kp in fc.keyframe_points:
            kp.interpolation = "CONSTANT"
    return action.name


def drop_old_bake(obj: bpy.types.Object, old: _OldBake, output: str) -> list[str]:
    """After the swap: remove what is left of the old bake; returns one line per thing that could not be.

    Nothing here can take the new bake back, so a failure is reported and
    the rest goes on.
    """
    s = settings(obj)
    notes: list[str] = []

    def attempt(what: str, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as exc:
            notes.append(f"could not remove {what} of the previous bake ({type(exc).__name__}: {exc})")

    keys = obj.data.shape_keys
    if output == "SHAPE_KEYS":
        mod = obj.modifiers.get(CACHE_MODIFIER)
        if mod is not None:
            attempt("the cache modifier", lambda: obj.modifiers.remove(mod))
        prefix = ASIDE_PREFIX
    else:
        prefix = SHAPE_KEY_PREFIX
    if keys is not None:
        for name in baked_key_names(keys, prefix):
            attempt(f"shape key {name}", lambda name=name: obj.shape_key_remove(keys.key_blocks[name]))
        ad = keys.animation_data
        if output == "PC2" and ad is not None and ad.action is not None and ad.action.name == old.action:
            attempt("the shape-key action", lambda: setattr(ad, "action", None))
        if output == "PC2" and old.kind == "SHAPE_KEYS" and len(keys.key_blocks) == 1 and keys.get(BASIS_MARK):
            attempt("the Basis shape key", lambda: obj.shape_key_remove(keys.key_blocks[0]))
    if old.action and old.action != s.bake_action:
        action = bpy.data.actions.get(old.action)
        if action is not None and action.users == 0:
            attempt(f"action {old.action}", lambda: bpy.data.actions.remove(action))
    if s.bake_action:  # the new action got a ".001" while the old one held its name
        action = bpy.data.actions.get(s.bake_action)
        wanted = f"{SHAPE_KEY_PREFIX}{cache_stem(obj)}"
        if action is not None and action.name != wanted and bpy.data.actions.get(wanted) is None:
            action.name = wanted
            s.bake_action = action.name
    if old.file and (output != "PC2" or _resolved(old.file, obj) != _resolved(s.bake_file, obj)):
        if old.refused:
            notes.append(f"kept the previous point cache {old.file}: {old.refused}")
        else:
            try:
                if retire_file(obj, old.file):
                    notes.append(
                        f"the previous point cache {old.file} is deleted when the .blend is saved "
                        "(the saved .blend plays it until then)"
                    )
            except OSError as exc:
                notes.append(
                    f"could not delete the previous point cache {old.file} ({exc.strerror}); remove it by hand"
                )
    if s.live_preview:
        s.live_preview = False  # the bake replaces the preview: its modifier and attribute go
    return notes


def clear_bake(obj: bpy.types.Object, delete_file: bool = True) -> list[str]:
    """Remove skinmodes' bake from ``obj``: its modifier, shape keys, action and (optionally) file.

    Only a file this add-on recorded writing for this object, and that no
    other object uses, is deleted (see :func:`deletion_refused`); returns
    one line per file it kept, and why.  The file goes first: if it cannot
    be deleted, nothing else changes.
    """
    s = settings(obj)
    kept: list[str] = []
    if delete_file and s.bake_file:
        refused = deletion_refused(obj, s.bake_file)
        if refused:
            kept.append(f"kept {s.bake_file}: {refused}")
        else:
            try:
                if retire_file(obj, s.bake_file):
                    kept.append(f"kept {s.bake_file} until the .blend is saved: the saved .blend plays it")
            except OSError as exc:
                raise CacheError(f"could not delete {s.bake_file} ({exc.strerror}); remove it by hand") from exc
    mod = obj.modifiers.get(CACHE_MODIFIER)
    if mod is not None:
        obj.modifiers.remove(mod)
    keys = obj.data.shape_keys
    if keys is not None:
        for name in baked_key_names(keys, SHAPE_KEY_PREFIX):
            obj.shape_key_remove(keys.key_blocks[name])
        if (
            s.bake_action
            and keys.animation_data is not None
            and keys.animation_data.action is not None
            and keys.animation_data.action.name == s.bake_action
        ):
            keys.animation_data.action = None
        if len(keys.key_blocks) == 1 and keys.get(BASIS_MARK) and s.bake_kind == "SHAPE_KEYS":
            obj.shape_key_remove(keys.key_blocks[0])  # the Basis the bake added, never the user's own
    if s.bake_action:
        action = bpy.data.actions.get(s.bake_action)
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)
    s.bake_files = "\n".join(
        line
        for line in s.bake_files.splitlines()
        if line.strip() and (not s.bake_file or _resolved(line.split("\t")[0], obj) != _resolved(s.bake_file, obj))
    )
    s.bake_kind = ""
    s.bake_file = ""
    s.bake_action = ""
    s.bake_key = ""
    return kept
