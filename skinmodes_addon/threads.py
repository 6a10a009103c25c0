"""How many threads the BLAS libraries under numpy and scipy may use (the Threads preference).

The wheels the extension ships (scipy, wildmeshing) carry no threadpoolctl,
so this does the part of its work that matters here: numpy and scipy each
bundle an OpenBLAS in their own folder (``numpy.libs``, ``scipy/.dylibs``, …),
and every OpenBLAS exports ``*_set_num_threads``.  Opening such a file by
its path hands back the copy already loaded in the process, so the setting
reaches the library numpy and scipy actually call.  A numpy built against
another BLAS (Accelerate, MKL) is not found, and :func:`blas_libraries` says
so rather than pretending.  The count is process-wide: Blender's own threads
(Preferences › System) are not affected.

A count above the cores this process may use is capped at them, when it is
applied: OpenBLAS sizes its buffers for the cores it found at load time, and
more threads than that crash it (SIGSEGV in the next ``eigh``), so a
preference saved on a big desk machine must not crash a smaller farm node.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Where the wheels keep their bundled shared libraries (Linux, macOS, Windows).
LIBRARY_FOLDERS = ("{pkg}.libs", "{pkg}/.dylibs", "{pkg}/.libs")
# OpenBLAS builds prefix and suffix their symbols: scipy's "scipy_openblas", numpy 2's ILP64 "…64_".
PREFIXES = ("scipy_openblas", "openblas")
SUFFIXES = ("64_", "")


@dataclass(frozen=True)
class BlasLibrary:
    """One OpenBLAS loaded (or loadable) in this process: who bundles it, its file, and its thread controls."""

    owner: str
    path: Path
    set_threads: Callable[..., Any]
    get_threads: Callable[..., Any]

    @property
    def threads(self) -> int:
        return int(self.get_threads())


def _controls(lib: ctypes.CDLL) -> tuple[Any, Any] | None:
    """The library's (set, get) thread-count functions, whatever its symbol prefix and suffix."""
    for prefix in PREFIXES:
        for suffix in SUFFIXES:
            setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                return setter, getter
    return None


@functools.cache  # the files a process has loaded do not change while it runs
def blas_libraries(owners: tuple[str, ...] = ("numpy", "scipy")) -> tuple[BlasLibrary, ...]:
    """The OpenBLAS libraries bundled with ``owners`` whose thread count can be set (none, if none is found)."""
    found: list[BlasLibrary] = []
    for owner in owners:
        try:
            base = Path(importlib.import_module(owner).__file__ or "").parent
        except ImportError:
            continue
        for folder in LIBRARY_FOLDERS:
            directory = base.parent / folder.format(pkg=base.name)
            for path in sorted(directory.glob("*openblas*")) if directory.is_dir() else []:
                try:
                    controls = _controls(ctypes.CDLL(str(path)))
                except OSError:  # not a library this platform can open
                    continue
                if controls is not None:
                    found.append(BlasLibrary(owner, path, *controls))
    return tuple(found)


# Each library's thread count before the preference first changed it, so 0 ("their default") puts it back.
_ORIGINAL: dict[Path, int] = {}


def usable_cores() -> int:
    """The cores this process may run on now: its CPU affinity where the system tells, never above the machine's."""
    machine = os.cpu_count() or 1
    try:
        return max(1, min(machine, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):  # no affinity on this system (macOS, Windows)
        return max(1, machine)


def limit_threads(count: int) -> tuple[BlasLibrary, ...]:
    """Let every found OpenBLAS use at most ``count`` threads, capped at :func:`usable_cores`; 0 gives each
    the count it had before.

    Returns the libraries found.
    """
    libraries = blas_libraries()
    for lib in libraries:
        if count > 0:
            _ORIGINAL.setdefault(lib.path, lib.threads)
            lib.set_threads(min(count, usable_cores()))
        elif lib.path in _ORIGINAL:
            lib.set_threads(_ORIGINAL.pop(lib.path))
    return libraries


# The nesting depth of one_blas_thread and the counts it replaced, guarded: a bake's worker
# thread and the preview's handler may both simulate.
_ONE_LOCK = threading.Lock()
_ONE_DEPTH = 0
_ONE_SAVED: dict[Path, int] = {}


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every found OpenBLAS on one thread, then give each its count back.

    The reduced solver's dense work is a few 192 x 192 factorisations and
    products per step: threading them only adds hand-offs, and on a busy
    machine OpenBLAS's waiting threads cost far more than the work (measured
    on the fox's bake, 2 cores with another job running: 200 ms per frame on
    the library's default threads, 9 ms on one).  Preparing a character
    (session.prepare) runs in one too, for the bits rather than the speed:
    OpenBLAS splits sums across its threads, so a model prepared on the
    machine's count differed in the last bits between a desk and a farm node.
    Nested and concurrent blocks share one switch; the last to leave restores
    the counts.
    """
    global _ONE_DEPTH
    with _ONE_LOCK:
        if _ONE_DEPTH == 0:
            for lib in blas_libraries():
                _ONE_SAVED[lib.path] = lib.threads
                lib.set_threads(1)
        _ONE_DEPTH += 1
    try:
        yield
    finally:
        with _ONE_LOCK:
            _ONE_DEPTH -= 1
            if _ONE_DEPTH == 0:
                for lib in blas_libraries():
                    if lib.path in _ONE_SAVED:
                        lib.set_threads(_ONE_SAVED.pop(lib.path))
