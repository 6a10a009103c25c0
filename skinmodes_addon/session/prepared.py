"""A bake that never prepares (``--prepared-only``, a farm's Bake task): the prepared model must be cached.

The expensive part of preparing a character, its tet mesh and its reduced
model, is cached in two files named by content hashes of the character
(:mod:`core.io.cache_names`).  A Bake task of a farm job runs after the
job's Prepare task wrote them; if either is missing or stale, it refuses in
one line before any work instead of preparing again on every node.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..core.errors import SkinmodesError
from ..core.io.cache_names import model_cache_file, tet_cache_file
from ..core.io.model_cache import FORMAT_VERSION
from ..core.io.tet_cache import tet_key
from ..core.pipeline import character_key
from .request import SessionRequest

# What a refusal ends with: the farm's fix, and the promise that nothing changed.
ADVICE = "run the job's Prepare step (skinmodes prepare) for it first; nothing was changed"


class NotPrepared(SkinmodesError):
    """The prepared model a ``--prepared-only`` bake needs is missing or stale (one line)."""


def prepared_files(request: SessionRequest) -> tuple[Path, Path]:
    """(tet mesh file, reduced model file) that preparing ``request`` reads from or writes to its cache."""
    if request.cache is None:
        raise NotPrepared(f"'{request.object_name}': {request.cache_note}; {ADVICE}")
    inp, sub = request.character, request.subspace
    tets = tet_cache_file(request.cache, tet_key(inp.rest, inp.faces, sub.target_tets, sub.tet_method, sub.loose_parts))
    return tets, model_cache_file(request.cache, character_key(inp, sub, request.material))


def check_prepared(request: SessionRequest) -> dict[Path, tuple[int, int]]:
    """Refuse (:class:`NotPrepared`) unless both cache files exist and the model has this format.

    Returns each file's (size, modification time in ns), for :func:`check_unchanged`.
    A model named by this character's key but built for other inputs is
    found only while loading it; :func:`check_unchanged` catches that case.
    """
    tets, model = prepared_files(request)
    where = f"'{request.object_name}' in {model.parent}"
    for path, what in ((model, "prepared model"), (tets, "tet mesh")):
        if not path.is_file():
            raise NotPrepared(
                f"no {what} for {where} ({path.name} is missing: never prepared, or prepared before its mesh, "
                f"weights or settings changed); {ADVICE}"
            )
    try:
        with np.load(model, allow_pickle=False) as data:
            version = int(data["format_version"])
    except Exception as exc:  # any damage: the model cannot be used as it is
        raise NotPrepared(
            f"the prepared model for {where} ({model.name}) is unreadable ({type(exc).__name__}); {ADVICE}"
        ) from exc
    if version != FORMAT_VERSION:
        raise NotPrepared(
            f"the prepared model for {where} ({model.name}) is stale: format {version}, this skinmodes reads "
            f"{FORMAT_VERSION}; {ADVICE}"
        )
    return {path: _stamp(path) for path in (tets, model)}


def check_unchanged(request: SessionRequest, stamps: dict[Path, tuple[int, int]]) -> None:
    """Refuse if loading rewrote a cache file: the cached model was built for other inputs (another
    skinmodes version on the node that prepared it) and was recomputed here."""
    for path, stamp in stamps.items():
        if not path.is_file() or _stamp(path) != stamp:
            raise NotPrepared(
                f"the prepared model for '{request.object_name}' in {path.parent} ({path.name}) was built for other "
                "inputs (another skinmodes version?) and had to be prepared again on this node; "
                "run the job's Prepare step with the same skinmodes as its bakes"
            )


def _stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns
