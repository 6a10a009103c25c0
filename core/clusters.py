"""Tet clusters for the hyper-reduced solver (seed 000 §6, eq. 27).

Features are the skinning weights averaged onto tets, each column scaled by
its eigenvalue to the power -2 (low-frequency modes dominate).  k-means++ with
a fixed seed makes the labels deterministic; clusters are then split into
face-connected components so no cluster straddles two limbs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.cluster.vq import kmeans2
from scipy.sparse.csgraph import connected_components

from .errors import SubspaceError
from .tetmesh import face_adjacency

# Eigenvalues below this fraction of the largest are (numerically) zero: the
# constant mode of an unconstrained problem.  Its tet average is constant and
# carries no clustering information, so it gets zero weight instead of 1/0.
ZERO_EIGENVALUE_RTOL = 1e-9


def tet_features(weights: np.ndarray, T: np.ndarray, eigenvalues: np.ndarray) -> np.ndarray:
    """Per-tet clustering features (t, m): mean of W over each tet's vertices, times lam^-2."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    scale = np.zeros_like(lam)
    nz = lam > ZERO_EIGENVALUE_RTOL * max(lam.max(), 0.0)
    scale[nz] = lam[nz] ** -2.0
    return weights[T].mean(axis=1) * scale


def kmeans_labels(features: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """k-means++ labels (t,) in [0, k'), k' <= k, deterministic for a given seed.

    Features are whitened by their overall scale first (kmeans2 is scale-
    sensitive only through its stopping threshold).  Empty clusters are
    dropped and the labels renumbered densely.
    """
    t = len(features)
    k = int(min(k, t))
    if k <= 1:
        return np.zeros(t, dtype=np.int64)
    scale = np.abs(features).max()
    data = features / scale if scale > 0 else features
    rng = np.random.default_rng(seed)
    _, labels = kmeans2(data, k, minit="++", seed=rng, iter=30, missing="warn")
    _, dense = np.unique(labels, return_inverse=True)
    return dense.astype(np.int64)


def split_connected(labels: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Relabel (t,) so each cluster is one face-connected set of tets.

    Two tets stay together when they share a face and a label; the new
    labels are the connected components of that graph, ordered by first tet.
    """
    a, b = face_adjacency(T)
    same = labels[a] == labels[b]
    t = len(T)
    graph = sp.coo_matrix((np.ones(int(same.sum())), (a[same], b[same])), shape=(t, t))
    _, comp = connected_components(graph, directed=False)
    return _dense(comp)


def _dense(labels: np.ndarray) -> np.ndarray:
    """Renumber labels densely, by first appearance (independent of any internal order)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inverse.ravel()]


def merge_small_clusters(
    labels: np.ndarray, T: np.ndarray, volumes: np.ndarray, min_volume: float, max_rounds: int = 32
) -> np.ndarray:
    """Merge every cluster smaller than ``min_volume`` into a face-adjacent neighbour.

    k-means on tet features leaves slivers (often single tets touching their
    cluster only along an edge) that become clusters of their own after the
    connectivity split; they add local-step work without adding detail.
    Each round, every small cluster picks the neighbour it shares most faces
    with (a big one if it has any); the picks form a graph whose connected
    components merge.  Each small cluster makes one pick, so a component
    holds at most one big cluster, and a union of face-adjacent connected
    sets is connected: every cluster stays connected.  labels: (t,) -> (t,) dense.
    """
    a, b = face_adjacency(T)
    labels = _dense(labels)
    for _ in range(max_rounds):
        r = int(labels.max()) + 1
        vol = np.bincount(labels, weights=volumes, minlength=r)
        small = vol < min_volume
        if r == 1 or not small.any():
            break
        la, lb = labels[a], labels[b]
        cross = la != lb
        src = np.concatenate([la[cross], lb[cross]])
        dst = np.concatenate([lb[cross], la[cross]])
        keep = small[src]
        if not keep.any():
            break
        pairs, counts = np.unique(np.stack([src[keep], dst[keep]], axis=1), axis=0, return_counts=True)
        score = counts + np.where(small[pairs[:, 1]], 0, len(T))  # big neighbours first
        pairs = pairs[np.lexsort((-score, pairs[:, 0]))]
        first = np.ones(len(pairs), dtype=bool)
        first[1:] = pairs[1:, 0] != pairs[:-1, 0]
        picks = pairs[first]
        graph = sp.coo_matrix((np.ones(len(picks)), (picks[:, 0], picks[:, 1])), shape=(r, r))
        _, merged = connected_components(graph, directed=False)
        labels = _dense(merged[labels])
    return labels


def cluster_matrix(labels: np.ndarray, weights: np.ndarray) -> sp.csr_matrix:
    """G (r x t): G[c, e] = w_e / sum_{e' in c} w_e' for e in cluster c (eq. 27 with w = volume).

    labels: (t,) dense in [0, r); weights: (t,) positive.  Rows sum to one.
    """
    r = int(labels.max()) + 1
    totals = np.bincount(labels, weights=weights, minlength=r)
    if (totals <= 0).any():
        raise SubspaceError("a cluster has no volume; recompute the modes")
    t = len(labels)
    return sp.csr_matrix((weights / totals[labels], (labels, np.arange(t))), shape=(r, t))


# Clusters below this fraction of the mean cluster volume are merged into a neighbour.
MIN_CLUSTER_FRACTION = 0.25


def skinning_clusters(
    weights: np.ndarray, eigenvalues: np.ndarray, T: np.ndarray, volumes: np.ndarray, r: int, seed: int = 0
) -> np.ndarray:
    """Connected cluster labels (t,) for about r requested clusters.

    k-means++ on the weighted tet features, split into face-connected
    components, slivers merged back into neighbours.  The count can differ
    from r a little: a feature cluster spanning two limbs becomes two.
    """
    if r < 1:
        raise SubspaceError("ask for at least one cluster")
    if r >= len(T):
        return np.arange(len(T))  # every tet its own cluster: no hyper-reduction error
    feats = tet_features(weights, T, eigenvalues)
    labels = split_connected(kmeans_labels(feats, r, seed), T)
    return merge_small_clusters(labels, T, volumes, MIN_CLUSTER_FRACTION * volumes.sum() / r)
