"""The reduced model's precomputed products and cache (core/reduced.py)."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

from core.errors import CacheError
from core.fem import deformation_gradient_operator, heterogeneous_laplacian
from core.materials import Material
from core.reduced import (
    build_reduced_model,
    cluster_matrix,
    load_model,
    load_or_build,
    model_key,
    rig_matrix,
    save_model,
)
from core.rig import lbs_jacobian, rig_parameters
from core.scenes import bar_scene, random_material
from tests.core.test_atomic import mode, refuse_rename, umask


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=2, bones=3)
    mat = random_material(s.mesh.t, seed=1)
    model = build_reduced_model(s.mesh, mat, s.rig, m=5, r=12)
    return s, mat, model


def full_operators(s, mat, model):
    """Explicit 3n/9t-sized operators, built independently of the reduced code."""
    mesh = s.mesh
    L = heterogeneous_laplacian(mesh, mat.mu)
    M = sp.diags(np.repeat(model.masses, 3))
    K = deformation_gradient_operator(mesh)
    G = cluster_matrix(model.labels, mat.mu * mesh.volumes)
    G9 = sp.kron(G, sp.identity(9))
    J = lbs_jacobian(mesh.X, s.rig.weights)
    return L, M, G9 @ K, J


def test_products_match_explicit_full_space_operators(setup):
    s, mat, model = setup
    L, M, G9K, J = full_operators(s, mat, model)
    Y = model.basis()
    rng = np.random.default_rng(0)
    Z1, Z2 = rng.standard_normal((2, 4 * model.m, 3))
    u1, u2 = (Y @ Z1).ravel(), (Y @ Z2).ravel()
    scale = lambda a: 1e-11 * max(abs(a), 1.0)  # noqa: E731 - round-off of sums over the mesh
    assert np.sum(Z1 * (model.A_L @ Z2)) == pytest.approx(u1 @ (L @ u2), abs=scale(u1 @ (L @ u2)))
    assert np.sum(Z1 * (model.A_M @ Z2)) == pytest.approx(u1 @ (M @ u2), abs=scale(u1 @ (M @ u2)))
    # Cluster F: rows 3c..3c+2 of C_W Z hold F_c^T; G9 K u holds F_c row-major.
    F_red = (model.C_W @ Z1).reshape(-1, 3, 3).transpose(0, 2, 1)
    F_full = (G9K @ u1).reshape(-1, 3, 3)
    assert np.abs(F_red - F_full).max() < 1e-10 * np.abs(F_full).max()
    p = rig_parameters(rng.standard_normal((3, 3, 4)))
    P = rig_matrix(p)
    xr = J @ p
    assert np.sum(Z1 * (model.A_LR @ P)) == pytest.approx(u1 @ (L @ xr), rel=1e-10)
    assert np.sum(Z1 * (model.A_MR @ P)) == pytest.approx(u1 @ (M @ xr), rel=1e-10)
    F_rig = (model.C_R @ P).reshape(-1, 3, 3).transpose(0, 2, 1)
    assert np.abs(F_rig - (G9K @ xr).reshape(-1, 3, 3)).max() < 1e-10 * np.abs(F_rig).max()


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
