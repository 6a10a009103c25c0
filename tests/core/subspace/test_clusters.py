"""Clusters (core/clusters.py).

Every check here is exact (integer labels and counts, bitwise-equal arrays):
the clustering promises an exact count and bit-for-bit determinism.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh, face_adjacency
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.subspace import clusters
from core.subspace.clusters import (
    bisect_connected,
    cluster_matrix,
    merge_small_clusters,
    skinning_clusters,
    split_connected,
    tet_features,
)
from core.subspace.skinning_modes import skinning_eigenmodes
from core.validation.scenes import bar_scene

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=3, bones=3)
    mat = Material.uniform(s.mesh.t, 2e4, 0.0, 1000.0)
    masses = lumped_mass(s.mesh, mat.density)
    modes = skinning_eigenmodes(s.mesh, mat, masses, s.rig, default_leak_field(s.mesh), 8)
    return s, modes


def three_parts() -> TetMesh:
    """Three separate boxes of different sizes and resolutions (an island mesh, like loose character parts)."""
    parts = [
        box_tet_mesh((6, 3, 3), (2.0, 1.0, 1.0)),
        box_tet_mesh((2, 2, 2), (0.5, 0.5, 0.5), (3.0, 0.0, 0.0)),
        box_tet_mesh((3, 4, 2), (1.0, 1.2, 0.6), (0.0, 3.0, 0.0)),
    ]
    X = np.vstack([p[0] for p in parts])
    offsets = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
    return TetMesh.from_arrays(X, np.vstack([p[1] + o for p, o in zip(parts, offsets)]))


def smooth_modes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smooth stand-in skinning weights (n, 4) and eigenvalues (4,), for meshes without a rig."""
    Xn = (X - X.mean(axis=0)) / np.ptp(X, axis=0).max()
    W = np.c_[Xn[:, 0], Xn[:, 1], Xn[:, 2], Xn[:, 0] * Xn[:, 1]]
    return W, np.array([1.0, 1.5, 2.0, 3.0])


def components_per_label(labels, T):
    a, b = face_adjacency(T)
    same = labels[a] == labels[b]
    g = sp.coo_matrix((np.ones(same.sum()), (a[same], b[same])), shape=(len(T), len(T)))
    _, comp = connected_components(g, directed=False)
    return np.array([len(np.unique(comp[labels == c])) for c in range(labels.max() + 1)])


def assert_clusters(labels, T, count):
    """Exactly ``count`` dense labels, every cluster one face-connected set."""
    assert labels.shape == (len(T),)
    assert np.array_equal(np.unique(labels), np.arange(count))
    assert np.all(components_per_label(labels, T) == 1)


@pytest.mark.parametrize("r", [1, 7, 40, 100, 250])
def test_bar_gets_exactly_the_requested_count_all_connected(setup, r):
    s, modes = setup
    labels = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, r)
    assert_clusters(labels, s.mesh.T, r)


@pytest.mark.parametrize("r", [3, 5, 20, 61])
def test_a_mesh_of_loose_parts_gets_exactly_the_requested_count(r):
    mesh = three_parts()
    W, lam = smooth_modes(mesh.X)
    labels = skinning_clusters(W, lam, mesh.T, mesh.volumes, r)
    assert_clusters(labels, mesh.T, r)


def test_fewer_clusters_than_loose_parts_gives_one_cluster_per_part():
    mesh = three_parts()
    W, lam = smooth_modes(mesh.X)
    labels = skinning_clusters(W, lam, mesh.T, mesh.volumes, 2)
    assert_clusters(labels, mesh.T, 3)  # a cluster cannot span two parts, so 3 is the fewest possible


def test_more_clusters_than_tets_gives_every_tet_its_own():
    X, T = box_tet_mesh((2, 1, 1))
    mesh = TetMesh.from_arrays(X, T)
    W, lam = smooth_modes(mesh.X)
    for r in (mesh.t, mesh.t + 5):
        assert np.array_equal(skinning_clusters(W, lam, mesh.T, mesh.volumes, r), np.arange(mesh.t))


def test_indistinguishable_features_still_give_the_count():
    """All-zero weights: k-means finds one cluster, and bisection by breadth-first halves supplies the rest."""
    mesh = three_parts()
    labels = skinning_clusters(np.zeros((mesh.n, 3)), np.ones(3), mesh.T, mesh.volumes, 30)
    assert_clusters(labels, mesh.T, 30)


def test_same_inputs_same_labels_bit_for_bit(setup):
    s, modes = setup
    a = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 30, seed=7)
    b = skinning_clusters(modes.weights.copy(), modes.eigenvalues.copy(), s.mesh.T.copy(), s.mesh.volumes.copy(), 30, 7)
    assert np.array_equal(a, b)
    other = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 30, seed=8)
    assert_clusters(other, s.mesh.T, 30)  # another seed: other labels, the same promises


@pytest.mark.parametrize("scale", [0.01, 3.7, 100.0])
def test_a_rescaled_mesh_gets_the_same_labels(scale):
    """The same parts at another modelling scale: volumes and features differ only by round-off, labels not at all.

    A regular mesh is full of exact ties (equal tets, tets equidistant from two
    centres); without rounding the inputs, round-off breaks them differently.
    """
    base = three_parts()
    W, lam = smooth_modes(base.X)
    scaled = TetMesh.from_arrays(base.X * scale, base.T)
    Ws, _ = smooth_modes(scaled.X)
    for r in (61, 100):
        expected = skinning_clusters(W, lam, base.T, base.volumes, r)
        assert np.array_equal(skinning_clusters(Ws, lam / scale**2, scaled.T, scaled.volumes, r), expected)


_CHILD = """
import hashlib
from core.subspace.clusters import skinning_clusters
from tests.core.subspace.test_clusters import smooth_modes, three_parts
mesh = three_parts()
W, lam = smooth_modes(mesh.X)
print(hashlib.sha256(skinning_clusters(W, lam, mesh.T, mesh.volumes, 40).tobytes()).hexdigest())
"""


def test_labels_do_not_depend_on_thread_count_or_hash_seed():
    """Fresh interpreters with 1 and 2 BLAS/OpenMP threads and different hash seeds agree with this one."""
    import hashlib

    mesh = three_parts()
    W, lam = smooth_modes(mesh.X)
    here = hashlib.sha256(skinning_clusters(W, lam, mesh.T, mesh.volumes, 40).tobytes()).hexdigest()
    for threads, hash_seed in (("1", "1"), ("2", "2")):
        env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, PYTHONHASHSEED=hash_seed)
        out = subprocess.run(
            [sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == here


def test_bisection_of_a_striped_cluster_gives_two_connected_parts():
    """Features alternating along a bar make 2-means propose scattered stripes; both parts must still be connected."""
    X, T = box_tet_mesh((12, 2, 2), (6.0, 1.0, 1.0))
    mesh = TetMesh.from_arrays(X, T)
    centre_x = X[T].mean(axis=1)[:, 0]
    features = np.sign(np.sin(np.pi * centre_x))[:, None]
    a, b = face_adjacency(mesh.T)
    second = bisect_connected(features, mesh.volumes, a, b)
    assert second.any() and not second.all()
    assert_clusters(second.astype(np.int64), mesh.T, 2)


def test_merge_respects_the_count_and_keeps_clusters_connected(setup):
    s, _ = setup
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 5, s.mesh.t)  # scattered labels: many components each
    split = split_connected(noisy, s.mesh.T)
    assert_clusters(split, s.mesh.T, split.max() + 1)
    merged = merge_small_clusters(split, s.mesh.T, s.mesh.volumes, s.mesh.volumes.sum() / 20)
    assert_clusters(merged, s.mesh.T, merged.max() + 1)
    assert merged.max() < split.max()
    vol = np.bincount(merged, weights=s.mesh.volumes)
    assert vol.min() >= s.mesh.volumes.sum() / 20 or merged.max() == 0
    capped = merge_small_clusters(split, s.mesh.T, s.mesh.volumes, 0.0, max_count=17)
    assert_clusters(capped, s.mesh.T, 17)  # picks form a forest: the count lands exactly, no overshoot


def test_grouping_matrix_is_a_volume_average(setup):
    s, modes = setup
    labels = skinning_clusters(modes.weights, modes.eigenvalues, s.mesh.T, s.mesh.volumes, 20)
    G = cluster_matrix(labels, s.mesh.volumes)
    assert np.allclose(np.asarray(G.sum(axis=1)).ravel(), 1.0)  # round-off of a few additions
    # eq. 27: G[c, e] = V_e / sum_{e' in c} V_e'
    e = 5
    c = labels[e]
    assert G[c, e] == pytest.approx(s.mesh.volumes[e] / s.mesh.volumes[labels == c].sum())


def test_zero_eigenvalue_gets_zero_feature_weight(setup):
    s, modes = setup
    f = tet_features(modes.weights[:, :3], s.mesh.T, np.array([0.0, 1.0, 2.0]))
    assert np.all(f[:, 0] == 0.0) and np.isfinite(f).all()


def _grid_points(rng: np.random.Generator, t: int, m: int) -> np.ndarray:
    """Points (t, m) on a coarse grid of 1/8: full of exact ties between centres, like features on a lattice."""
    return np.round(rng.uniform(-1.0, 1.0, (t, m)) * 8.0) / 8.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_screened_nearest_centre_is_the_fixed_order_argmin_bit_for_bit(seed):
    """The matrix-product screen only decides where it cannot differ from the elementwise reference.

    Centres drawn from the points themselves and from a 1/8 grid give many exact
    ties (which must go to the lower index, as the reference breaks them) and
    near-ties at round-off level; every label must equal the reference's.
    """
    rng = np.random.default_rng(seed)
    points = _grid_points(rng, 5000, 7)
    centres = np.vstack([points[rng.choice(len(points), 40, replace=False)], _grid_points(rng, 40, 7)])
    centres[41] = centres[3]  # a duplicate centre: the tie goes to index 3
    centres[42] = centres[5] * (1.0 + 2.0**-52)  # a near-duplicate, one ulp away
    half_norm = 0.5 * (centres * centres).sum(axis=1)
    reference = clusters._scores_exact(points, centres, half_norm).argmin(axis=1)
    assert np.array_equal(clusters.nearest_centre(points, centres), reference)


def _unpruned_kmeans_pp(points, weights, k, rng):
    """k-means++ seeding measuring every point against every new centre (the definition)."""
    cum = np.cumsum(weights)
    chosen = [min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(points) - 1)]
    d2 = clusters.squared_distances(points, points[chosen[0]])
    for _ in range(1, k):
        cum = np.cumsum(weights * d2)
        if not cum[-1] > 0.0:
            break
        i = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(points) - 1)
        chosen.append(i)
        np.minimum(d2, clusters.squared_distances(points, points[i]), out=d2)
    return np.asarray(chosen)


@pytest.mark.parametrize("seed", [0, 1])
def test_pruned_kmeans_pp_seeding_picks_the_same_centres(seed):
    """Skipping points the triangle inequality rules out changes no distance, hence no draw (exact equality)."""
    rng = np.random.default_rng(seed)
    points = _grid_points(rng, 4000, 5)
    weights = rng.uniform(0.5, 2.0, len(points))
    expected = _unpruned_kmeans_pp(points, weights, 60, np.random.default_rng(seed))
    got = clusters.kmeans_pp_centres(points, weights, 60, np.random.default_rng(seed))
    assert np.array_equal(got, expected)
