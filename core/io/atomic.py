"""Atomic file writes that honour the process umask.

A file is written under a temporary name in its destination folder and
renamed over the target only once it is complete and on disk: readers see the
old file or the new one, never a partial one, and a failed or cancelled write
leaves the old file byte for byte.

Why not ``tempfile.mkstemp``: it creates files with mode 0600 whatever the
umask, so a cache written on an artist's desk or a farm node is unreadable to
the render user.  The temporary file here is created with ``os.open(...,
0o666)`` and ``O_EXCL``, so the kernel applies the umask (and any default ACL
of the folder) exactly as for a plain ``open``: 0644 under umask 022, 0600
under 077.  Reading the umask is not needed, and not done: ``os.umask`` can
only be read by setting it, which would change it for every thread of the
process (Blender's included) for a moment.

The rules for temporary files live here too: their names
(:func:`partial_pattern`), the lock a live writer holds on its own
(:func:`lock_partial`), and which ones a killed run left behind
(:func:`stale_partials`).  :func:`save_npz_atomic` is the one .npz writer of
every cache.
"""

from __future__ import annotations

import io
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import CacheError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a temporary file's age alone says it is stale
    fcntl = None  # type: ignore[assignment]

# Temporary files are hidden (leading dot) and say what they are, in case a
# crash (power loss, SIGKILL) leaves one behind; a normal failure removes it.
TEMP_SUFFIX = ".partial"
TEMP_TOKEN_BYTES = 6  # random bytes in a temporary name: 12 hex digits

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)  # O_BINARY: no newline mangling on Windows


def _create_temporary(path: Path) -> tuple[int, Path]:
    """Create an empty file beside ``path`` under a fresh name; return its descriptor and path.

    Mode 0o666 is filtered by the umask at creation.  O_EXCL refuses a name
    that exists (a race with another writer, or a planted link): try another.
    """
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(TEMP_TOKEN_BYTES)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise CacheError(f"cannot create a temporary file beside {path.name}; clear stale *{TEMP_SUFFIX} files")


def partial_pattern(path: str | os.PathLike[str]) -> re.Pattern[str]:
    """The names :func:`_create_temporary` gives temporary files of ``path``: ``.{name}.{12 hex}.partial``."""
    hex_digits = 2 * TEMP_TOKEN_BYTES
    return re.compile(rf"\.{re.escape(Path(path).name)}\.[0-9a-f]{{{hex_digits}}}{re.escape(TEMP_SUFFIX)}")


def _sync_folder(folder: Path) -> None:
    """Flush the folder entry of a rename to disk where the platform allows it (POSIX)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems (network, FUSE) refuse fsync on folders; the rename itself is still atomic
    finally:
        os.close(fd)


class AtomicFile:
    """One file written atomically: write to ``.file``, then :meth:`commit` or :meth:`abort`.

    ``commit`` flushes and fsyncs the temporary file, renames it over
    ``path`` (``os.replace``: atomic on POSIX and Windows) and returns
    ``path``.  If anything fails, or :meth:`abort` is called first, the
    temporary file is removed and an existing file at ``path`` is untouched.
    ``abort`` after ``commit`` does nothing, so ``finally: abort()`` is safe.
    For a block of code, use :func:`atomic_file`.
    """

    def __init__(self, path: str | os.PathLike[str], mode: str = "wb") -> None:
        if mode not in ("wb", "w"):
            raise ValueError(f"atomic files are written whole, with mode 'wb' or 'w', not {mode!r}")
        self.path = Path(path)
        fd, self.tmp = _create_temporary(self.path)
        try:
            self.file: IO[Any] = os.fdopen(fd, "wb") if mode == "wb" else os.fdopen(fd, "w", encoding="utf-8")
        except BaseException:
            os.close(fd)
            os.unlink(self.tmp)
            raise
        self.done = False

    def commit(self) -> Path:
        if self.done:
            raise CacheError(f"{self.path.name} was already written or abandoned; write it again")
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            os.replace(self.tmp, self.path)
        except BaseException:
            self.abort()
            raise
        self.done = True
        _sync_folder(self.path.parent)
        return self.path

    def abort(self) -> None:
        if self.done:
            return
        self.done = True
        try:
            self.file.close()
        except OSError:
            pass  # flushing what is being thrown away can fail (a full disk): the file goes anyway
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


@contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Write ``path`` atomically: ``with atomic_file(p) as fh: fh.write(...)``.

    The file appears at ``path`` when the block ends normally; an exception
    of any kind (KeyboardInterrupt included) removes the temporary file,
    leaves any old file untouched, and propagates.
    """
    out = AtomicFile(path, mode)
    try:
        yield out.file
    except BaseException:
        out.abort()
        raise
    out.commit()


def lock_partial(fd: int) -> None:
    """Mark an open temporary file as being written: an advisory lock the kernel drops when the writer dies.

    A run that was killed (SIGKILL, power loss) leaves its temporary file
    unlocked; a live writer in another process keeps its own locked, so
    :func:`stale_partials` never takes a running bake's file for a leftover.
    """
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass  # a filesystem without locks (some network mounts): the age test still guards the file


def partial_in_use(path: Path) -> bool:
    """True if a live writer holds ``path`` locked (see :func:`lock_partial`)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False  # locks unsupported here: nothing can hold one
    finally:
        os.close(fd)  # closing drops the probe's own lock
    return False


def stale_partials(path: str | os.PathLike[str], older_than: float, legacy: Iterable[str] = ()) -> list[Path]:
    """Temporary files that interrupted writers of ``path`` left beside it, oldest first.

    Only this add-on's own naming for exactly that destination (see
    :func:`partial_pattern`, plus the exact file names in ``legacy``), last
    modified before ``older_than`` (seconds since the epoch: the start of
    the current run), and not locked by a live writer.  Nothing else in the
    folder is ever considered.
    """
    path = Path(path)
    pattern, extra = partial_pattern(path), set(legacy)
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    found: list[tuple[float, Path]] = []
    for entry in entries:
        if not (pattern.fullmatch(entry.name) or entry.name in extra):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.is_file(follow_symlinks=False) and st.st_mtime < older_than and not partial_in_use(Path(entry.path)):
            found.append((st.st_mtime, Path(entry.path)))
    return [p for _, p in sorted(found)]


def remove_stale_partials(path: str | os.PathLike[str], older_than: float, legacy: Iterable[str] = ()) -> list[Path]:
    """Delete :func:`stale_partials` of ``path``; returns those removed (one that cannot be is left alone)."""
    removed = []
    for stale in stale_partials(path, older_than, legacy):
        try:
            stale.unlink()
        except OSError:
            continue  # gone meanwhile, or not ours to delete (permissions): leave it
        removed.append(stale)
    return removed


def save_npz_atomic(path: str | os.PathLike[str], arrays: Mapping[str, Any]) -> Path:
    """Write ``arrays`` as an uncompressed .npz at ``path`` atomically, with the process umask; returns ``path``.

    arrays: name -> array-like (no object arrays: readers load with
    ``allow_pickle=False``).  The archive is built whole in memory first, so
    a write that fails half-way (a full disk) never leaves a zip open on a
    removed temporary file; the temporary file is locked while it is written
    (:func:`lock_partial`), so another run never takes it for a leftover.
    The folder must exist.  An OSError propagates, with nothing left behind
    and any old file at ``path`` untouched.
    """
    archive = io.BytesIO()
    np.savez(archive, **arrays)
    with atomic_file(path) as fh:
        lock_partial(fh.fileno())
        fh.write(archive.getbuffer())
    return Path(path)
