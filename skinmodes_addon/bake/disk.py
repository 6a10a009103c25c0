"""The disk a point cache goes to: refusing a bake that cannot fit, and a failed write said in one line."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from ..core.errors import CacheError

# Bytes of a PC2 file's header (core.io.pc2).
PC2_HEADER = 32


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
