"""The tet-mesh cache: a tetrahedralisation reused for an identical surface and resolution, and healed.

The cache heals: a damaged file (empty, truncated, not an archive, arrays
missing or inconsistent) is reported in one line, deleted and recomputed,
never trusted and never fatal.  Temporary files that killed runs left for
this same cache file are removed first.  A cache that cannot be written (a
full disk, a read-only folder) costs the reuse, not the result.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..geometry.tetrahedralize import TetResult, tetrahedralize
from .atomic import remove_stale_partials, save_npz_atomic
from .cache_names import legacy_tet_temporary, tet_cache_file
from .model_cache import input_hash


def tet_key(rest: np.ndarray, faces: np.ndarray, target_tets: int, method: str, loose_parts: str) -> str:
    """The hash of everything that shapes a tetrahedralisation: surface (k, 3), (f, 3) and the mesher's settings."""
    return input_hash("skinmodes-tets-2", rest, faces, target_tets, method, loose_parts)


def _load(path: Path, key: str, log: list[str]) -> TetResult | None:
    """The cached result at ``path`` if it is sound and written for ``key``; else None (a damaged file is deleted)."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                raise ValueError("written for other inputs")
            return TetResult.from_saved(data)
    except Exception as exc:  # whatever the damage, the file must not block the character
        log.append(f"tet cache {path.name} is damaged ({type(exc).__name__}); deleted it, recomputing")
        try:
            path.unlink()
        except OSError:
            pass  # cannot delete it (read-only folder): the fresh result below overwrites it if it can
    return None


def cached_tet_mesh(
    rest: np.ndarray,
    faces: np.ndarray,
    target_tets: int,
    method: str,
    loose_parts: str,
    cache_dir: Path | None,
    log: list[str],
) -> TetResult:
    """Tetrahedralise the surface rest (k, 3), faces (f, 3), reusing a cached result (see the module doc).

    cache_dir: the cache folder (None: no cache); log: receives one line per problem with the cache.
    """
    key = tet_key(rest, faces, target_tets, method, loose_parts)
    path = None if cache_dir is None else tet_cache_file(cache_dir, key)
    if path is not None:
        # "tets-*.tmp.npz": what numpy wrote for earlier versions' temporary name.
        remove_stale_partials(path, time.time(), legacy=[legacy_tet_temporary(key)])
        cached = _load(path, key, log)
        if cached is not None:
            return cached
    res = tetrahedralize(rest, faces, target_tets=target_tets, method=method, loose_parts=loose_parts)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_npz_atomic(path, {"key": np.str_(key), **res.to_arrays()})
        except OSError as exc:
            log.append(f"could not cache the tet mesh in {path.parent} ({exc.strerror or exc}); recomputed next time")
    return res
