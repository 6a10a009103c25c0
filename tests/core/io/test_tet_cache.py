"""The tet-mesh cache (core/io/tet_cache.py): reused for the same inputs, healed when damaged."""

import numpy as np
import pytest

from core.io.cache_names import tet_cache_file
from core.io.tet_cache import cached_tet_mesh, tet_key
from tests.core.surfaces import uv_sphere

V, F = uv_sphere(12, 0.5, (0, 0, 0))
ARGS = (V, F, 800, "lattice", "join")


def test_the_second_call_reads_the_cache(tmp_path):
    log = []
    first = cached_tet_mesh(*ARGS, tmp_path, log)
    path = tet_cache_file(tmp_path, tet_key(*ARGS))
    assert path.exists() and log == []
    again = cached_tet_mesh(*ARGS, tmp_path, log)
    assert np.array_equal(first.X, again.X) and np.array_equal(first.T, again.T) and log == []
    assert tet_key(V, F, 900, "lattice", "join") != tet_key(*ARGS)  # another resolution, another file


@pytest.mark.parametrize("damage", [b"", b"not an archive", None])
def test_a_damaged_cache_is_said_deleted_and_recomputed(tmp_path, damage):
    """Empty, garbage, or an archive written for other inputs: one line, recomputed, never fatal."""
    first = cached_tet_mesh(*ARGS, tmp_path, [])
    path = tet_cache_file(tmp_path, tet_key(*ARGS))
    if damage is None:  # a sound archive for other inputs under this name
        other = tet_cache_file(tmp_path, tet_key(V, F, 900, "lattice", "join"))
        cached_tet_mesh(V, F, 900, "lattice", "join", tmp_path, [])
        other.replace(path)
    else:
        path.write_bytes(damage)
    log = []
    healed = cached_tet_mesh(*ARGS, tmp_path, log)
    assert len(log) == 1 and log[0].startswith(f"tet cache {path.name} is damaged") and "recomputing" in log[0]
    assert np.array_equal(healed.T, first.T)
    assert cached_tet_mesh(*ARGS, tmp_path, log) is not None and len(log) == 1  # rewritten sound


def test_without_a_folder_nothing_is_cached(tmp_path):
    log = []
    cached_tet_mesh(*ARGS, None, log)
    assert log == [] and not list(tmp_path.iterdir())
