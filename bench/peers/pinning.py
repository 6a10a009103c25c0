"""One BLAS/OpenMP thread in every benchmark process, however the bench is launched.

Imported by the bench's main process and by every paired worker (ours, in the
main environment; fast-cody and simkit, in the bench-only one) before they
time anything.  Two layers, because either alone can miss:

* the environment variables, which OpenBLAS, MKL and OpenMP read when they
  load (so they must be set before numpy is imported, and for every child
  process: :func:`pinned_env`);
* the running OpenBLAS libraries themselves, found in this process's memory
  map and set to one thread through their own ``openblas_set_num_threads``
  (what threadpoolctl does; it is not installed in the main environment).

:func:`pin_threads` does both and reports what it found, so the report can
say how every side was pinned.  Standard library only: the workers run in
two environments.
"""

from __future__ import annotations

import ctypes
import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def pinned_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this environment) with every thread variable set to 1."""
    env = dict(os.environ if base is None else base)
    env.update({k: "1" for k in THREAD_VARIABLES})
    return env


def _loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS libraries mapped into this process (numpy's and scipy's may differ)."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "openblas" in line.lower() and line.rstrip().endswith(".so")}
    except OSError:
        return []
    return sorted(paths)


def pin_threads() -> dict[str, object]:
    """Set one thread everywhere this process can; return what each library now uses.

    Returns {"env": {variable: value}, "openblas": {library file: threads}}.
    Call after numpy/scipy are imported so that their OpenBLAS copies are loaded.
    """
    os.environ.update({k: "1" for k in THREAD_VARIABLES})
    try:  # scipy loads its own OpenBLAS lazily: load it now, so that it is pinned too
        import scipy.linalg._fblas  # noqa: F401
    except ImportError:
        pass
    found: dict[str, int | str] = {}
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            found[os.path.basename(path)] = f"not loadable: {exc}"
            continue
        # numpy's and scipy's wheels rename OpenBLAS's symbols (a scipy_ prefix, a 64_ suffix for ILP64).
        for name in ("openblas", "scipy_openblas"):
            for suffix in ("", "64_"):
                setter = getattr(lib, f"{name}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{name}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    setter(ctypes.c_int(1))
                    found[os.path.basename(path)] = int(getter())
                    break
            if os.path.basename(path) in found:
                break
        else:
            found[os.path.basename(path)] = "no thread control found"
    return {"env": {k: os.environ[k] for k in THREAD_VARIABLES}, "openblas": found}
