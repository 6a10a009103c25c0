"""The file names of the subspace caches in a cache folder: one place for the bake, the session and core.

A cache file is named by the first 16 hex digits of the SHA-256 key of its
inputs (the full key is stored inside and checked on load).
"""

from __future__ import annotations

import re
from pathlib import Path

# Hex digits of the key in a file name: 64 bits, enough to keep distinct inputs apart in one folder.
NAME_DIGITS = 16
# The names :func:`model_cache_file` and :func:`tet_cache_file` give.
SUBSPACE_CACHE = re.compile(rf"(?:model|tets)-[0-9a-f]{{{NAME_DIGITS}}}\.npz")


def model_cache_file(folder: str | Path, key: str) -> Path:
    """The reduced model's cache file for a character key (:func:`core.pipeline.prepare.character_key`)."""
    return Path(folder) / f"model-{key[:NAME_DIGITS]}.npz"


def tet_cache_file(folder: str | Path, key: str) -> Path:
    """The tet mesh's cache file for a tet key (:func:`core.io.tet_cache.tet_key`)."""
    return Path(folder) / f"tets-{key[:NAME_DIGITS]}.npz"


def subspace_cache_files(folder: str | Path) -> set[Path]:
    """The tet and model cache files in ``folder`` (by their names; an unreadable folder has none)."""
    try:
        return {p for p in Path(folder).iterdir() if SUBSPACE_CACHE.fullmatch(p.name)}
    except OSError:
        return set()


def legacy_tet_temporary(key: str) -> str:
    """The temporary name numpy wrote for a tet cache before the atomic writer (still cleaned up)."""
    return f"tets-{key[:NAME_DIGITS]}.tmp.npz"
