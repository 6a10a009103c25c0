"""Clusters (core/clusters.py)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from core.clusters import cluster_matrix, merge_small_clusters, skinning_clusters, split_connected, tet_features
from core.fem import lumped_mass
from core.leak import default_leak_field
from core.materials import Material
from core.scenes import bar_scene
from core.subspace import skinning_eigenmodes
from core.tetmesh import face_adjacency


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=3, bones=3)
    mat = Material.uniform(s.mesh.t, 2e4, 0.0, 1000.0)
    masses = lumped_mass(s.mesh, mat.density)
    modes = skinning_eigenmodes(s.mesh, mat, masses, s.rig, default_leak_field(s.mesh), 8)
    return s, modes


def components_per_label(labels, T):
    a, b = face_adjacency(T)
    same = labels[a] == labels[b]
    g = sp.coo_matrix((np.ones(same.sum()), (a[same], b[same])), shape=(len(T), len(T)))
    _, comp = connected_components(g, directed=False)
    return np.array([len(np.unique(comp[labels == c])) for c in range(labels.max() + 1)])


def test_every_cluster_is_connected_and_count_is_near_the_request(setup):
    s, modes = setup
    labels = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 40)
    assert np.all(components_per_label(labels, s.mesh.T) == 1)
    assert 20 <= labels.max() + 1 <= 80
    assert np.array_equal(np.unique(labels), np.arange(labels.max() + 1))


def test_same_seed_same_labels(setup):
    s, modes = setup
    a = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 30, seed=7)
    b = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 30, seed=7)
    assert np.array_equal(a, b)


def test_split_and_merge_keep_clusters_connected(setup):
    s, _ = setup
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 5, s.mesh.t)  # scattered labels: many components each
    split = split_connected(noisy, s.mesh.T)
    assert np.all(components_per_label(split, s.mesh.T) == 1)
    merged = merge_small_clusters(split, s.mesh.T, s.mesh.volumes, s.mesh.volumes.sum() / 20)
    assert np.all(components_per_label(merged, s.mesh.T) == 1)
    assert merged.max() < split.max()
    vol = np.bincount(merged, weights=s.mesh.volumes)
    assert vol.min() >= s.mesh.volumes.sum() / 20 or merged.max() == 0


def test_grouping_matrix_is_a_volume_average(setup):
    s, modes = setup
    labels = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 20)
    G = cluster_matrix(labels, s.mesh.volumes)
    assert np.allclose(np.asarray(G.sum(axis=1)).ravel(), 1.0)
    # eq. 27: G[c, e] = V_e / sum_{e' in c} V_e'
    e = 5
    c = labels[e]
    assert G[c, e] == pytest.approx(s.mesh.volumes[e] / s.mesh.volumes[labels == c].sum())


def test_zero_eigenvalue_gets_zero_feature_weight(setup):
    s, modes = setup
    f = tet_features(modes.weights[:, :3], s.mesh.T, np.array([0.0, 1.0, 2.0]))
    assert np.all(f[:, 0] == 0.0) and np.isfinite(f).all()
