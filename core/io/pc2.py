"""PC2 point caches: the format Blender's Mesh Cache modifier plays back natively.

Layout (little-endian): a 32-byte header

    char[12] 'POINTCACHE2\\0'; int32 version (1); int32 points;
    float32 start frame; float32 sample rate (frames per sample); int32 samples

followed by samples * points * 3 float32 positions.  Blender's Mesh Cache
modifier in Frame mode reads sample ``scene_frame * frame_scale - frame_start``
(clamped to the file's range), so the add-on sets frame_start to the first
baked frame and frame_scale to 1.

Files are written through :class:`core.atomic.AtomicFile`: a temporary file
in the destination folder, created with the process umask (a render farm's
other users can read it), renamed into place once complete.  A failed or
cancelled write never leaves a partial cache, and an existing cache is only
replaced once the new one is complete.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..errors import CacheError
from .atomic import AtomicFile, lock_partial

MAGIC = b"POINTCACHE2\0"
_HEADER = struct.Struct("<12siiffi")


def header_bytes(points: int, start: float, samples: int, rate: float = 1.0) -> bytes:
    return _HEADER.pack(MAGIC, 1, int(points), float(start), float(rate), int(samples))


def check_writable(folder: str | os.PathLike[str], create: bool = True) -> Path:
    """Prove ``folder`` is (or can be made) writable; raise a one-line CacheError if not.

    create: leave the folder created.  With False, the disk is left as it was:
    a missing folder (and missing parents) is created for the proof and
    removed again, so a request refused later leaves no empty folder behind.
    The proof writes for real (a probe file), because permission bits, ACLs,
    read-only mounts and Windows all disagree with ``os.access``.
    """
    folder = Path(folder)
    made: list[Path] = []
    try:
        missing = folder
        while not missing.exists() and missing.parent != missing:
            made.append(missing)
            missing = missing.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".skinmodes-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise CacheError(f"cannot write to {folder} ({exc.strerror or exc}); choose a writable cache folder") from exc
    finally:
        if not create:
            for path in made:  # deepest first
                try:
                    path.rmdir()
                except OSError:
                    break  # not created by us after all, or someone wrote into it meanwhile: keep it
    return folder


class PC2Writer:
    """Streams frames into a temporary file; ``commit`` renames it into place.

    Use as a context manager, or call :meth:`abort` when a bake is cancelled
    (the bake holds a writer across frames): leaving without ``commit``
    deletes the temporary file and leaves any existing cache at ``path``
    untouched.  ``abort`` after ``commit`` does nothing.
    """

    def __init__(self, path: str | os.PathLike[str], points: int, start: float, samples: int) -> None:
        self.path = Path(path)
        self.points, self.samples = int(points), int(samples)
        check_writable(self.path.parent)
        self._out = AtomicFile(self.path, "wb")
        self.tmp = self._out.tmp
        self.start = float(start)
        try:
            lock_partial(self._out.file.fileno())  # "being written": a later run must not take it for stale
            self._out.file.write(header_bytes(points, start, samples))
        except BaseException:
            self._out.abort()
            raise
        self.written = 0

    def write(self, positions: np.ndarray) -> None:
        """Append one sample: positions (points, 3)."""
        pos = np.asarray(positions, dtype="<f4")
        if pos.shape != (self.points, 3):
            raise CacheError(f"a PC2 sample needs shape ({self.points}, 3), got {pos.shape}")
        if self.written >= self.samples:
            raise CacheError("more samples written than the PC2 header declares")
        self._out.file.write(pos.tobytes())
        self.written += 1

    def commit(self) -> Path:
        if self.written != self.samples:
            raise CacheError(f"PC2 file incomplete: {self.written} of {self.samples} samples written")
        self._out.file.flush()
        self.verify()
        return self._out.commit()

    def verify(self) -> None:
        """Read the temporary file's header and size back (before it replaces anything): what Blender
        will play must say what was written."""
        size = _HEADER.size + self.samples * self.points * 12
        with open(self.tmp, "rb") as fh:
            found = fh.read(_HEADER.size)
            actual = os.fstat(fh.fileno()).st_size
        fields = _HEADER.unpack(found) if len(found) == _HEADER.size else ()
        good = fields == _HEADER.unpack(_HEADER.pack(MAGIC, 1, self.points, self.start, 1.0, self.samples))
        if not good or actual != size:
            raise CacheError(
                f"{self.path.name} reads back wrong after writing (header {'ok' if good else 'differs'}, "
                f"{actual} of {size} bytes); the previous bake is unchanged: check the disk of the cache folder"
            )

    def abort(self) -> None:
        self._out.abort()

    def __enter__(self) -> PC2Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


def write_pc2(
    path: str | os.PathLike[str], frames: Iterable[np.ndarray], points: int, start: float, samples: int
) -> Path:
    """Write all samples (each (points, 3)) atomically; returns the final path."""
    with PC2Writer(path, points, start, samples) as w:
        for f in frames:
            w.write(f)
        return w.commit()


def read_pc2(path: str | os.PathLike[str]) -> tuple[np.ndarray, float, float]:
    """Read a PC2 file: (samples, points, 3) float32 positions, start frame, sample rate."""
    data = Path(path).read_bytes()
    if len(data) < _HEADER.size:
        raise CacheError(f"{Path(path).name} is too short to be a PC2 file")
    magic, _version, points, start, rate, samples = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CacheError(f"{Path(path).name} is not a PC2 file")
    expected = _HEADER.size + samples * points * 12
    if len(data) != expected or points < 0 or samples < 0:
        raise CacheError(f"{Path(path).name} is truncated or corrupt ({len(data)} bytes, expected {expected})")
    arr = np.frombuffer(data, dtype="<f4", offset=_HEADER.size).reshape(samples, points, 3)
    return arr, float(start), float(rate)
