"""The model cache: round trip, farm-readable atomic writes, refusal of bad caches (core/io/model_cache.py)."""

import os

import numpy as np
import pytest

from core.errors import CacheError
from core.io.model_cache import load_model, load_or_build, model_key, save_model
from core.model.materials import Material
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import bar_scene, random_material
from tests.core.io.test_atomic import mode, refuse_rename, umask


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=2, bones=3)
    mat = random_material(s.mesh.t, seed=1)
    model = build_reduced_model(s.mesh, mat, s.rig, m=5, r=12)
    return s, mat, model


def test_cache_round_trip_is_exact(setup, tmp_path):
    s, mat, model = setup
    key = model_key(s.mesh, mat, s.rig, 5, 12, None, 0)
    path = save_model(model, tmp_path / "m.npz", key)
    back = load_model(path, key)
    for name in ("weights", "A_L", "A_M", "C_W", "labels", "A_LR", "C_R", "centre"):
        assert np.array_equal(getattr(back, name), getattr(model, name))
    assert back.scale == model.scale
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_the_model_cache_is_readable_by_a_farm_and_replaced_atomically(setup, tmp_path, monkeypatch):
    """Exact mode bits and bytes: 0644 under umask 022; a failed save keeps the old cache."""
    s, mat, model = setup
    key = model_key(s.mesh, mat, s.rig, 5, 12, None, 0)
    with umask(0o022):
        path = save_model(model, tmp_path / "m.npz", key)
    assert mode(path) == 0o644
    with umask(0o077):
        assert mode(save_model(model, tmp_path / "private.npz", key)) == 0o600
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", refuse_rename)
    with pytest.raises(PermissionError):
        save_model(model, path, "another key")  # os.replace monkeypatched to fail
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "private.npz"]


def test_corrupt_stale_and_foreign_caches_are_refused(setup, tmp_path):
    s, mat, model = setup
    key = model_key(s.mesh, mat, s.rig, 5, 12, None, 0)
    path = save_model(model, tmp_path / "m.npz", key)
    with pytest.raises(CacheError, match="other inputs"):
        load_model(path, model_key(s.mesh, mat, s.rig, 6, 12, None, 0))
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CacheError, match="unreadable"):
        load_model(corrupt, key)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, something=np.arange(3))
    with pytest.raises(CacheError):
        load_model(foreign, key)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, format_version=np.array([object()], dtype=object), key=np.str_(key))
    with pytest.raises(CacheError):
        load_model(pickled, key)


def test_load_or_build_recomputes_and_reports_a_bad_cache(setup, tmp_path):
    s, mat, _ = setup
    path = tmp_path / "model.npz"
    path.write_bytes(b"not a zip file")
    log: list[str] = []
    model = load_or_build(path, s.mesh, mat, s.rig, 4, 10, log=log)
    assert len(log) == 1 and "unreadable" in log[0]
    again = load_or_build(path, s.mesh, mat, s.rig, 4, 10, log=log)
    assert len(log) == 1  # the rebuilt cache is now trusted
    assert np.array_equal(again.weights, model.weights)
    other = Material.uniform(s.mesh.t, 1e5, 0.2, 1000.0)
    load_or_build(path, s.mesh, other, s.rig, 4, 10, log=log)
    assert "other inputs" in log[-1]
