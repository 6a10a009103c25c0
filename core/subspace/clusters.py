"""Tet clusters for the hyper-reduced solver (Benchekroun et al. 2023, §6, eq. 27).

Features are the skinning weights averaged onto tets, each column scaled by
its eigenvalue to the power -2 (low-frequency modes dominate).  Volume-
weighted k-means++ groups tets that deform alike; each cluster is then split
into face-connected parts (one rotation per cluster must not span two limbs),
parts are merged into face-adjacent neighbours until at most r remain and no
sliver is left, and the largest clusters are bisected until exactly r remain.

Determinism is bit for bit: one seeded generator, and only elementwise
ufuncs, ``bincount``, ``cumsum`` and row sums, never BLAS, whose summation
order can change with the thread count or the CPU.  Ties go to the lowest
index; labels are numbered by first tet.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ..errors import SubspaceError
from ..geometry.tetmesh import face_adjacency

# Eigenvalues below this fraction of the largest are (numerically) zero: the
# constant mode of an unconstrained problem.  Its tet average is constant and
# carries no clustering information, so it gets zero weight instead of 1/0.
ZERO_EIGENVALUE_RTOL = 1e-9

# Clusters below this fraction of the mean cluster volume are merged into a neighbour.
MIN_CLUSTER_FRACTION = 0.25

# Lloyd iterations stop when no label changes, or after this many.  On 5k-30k
# tet meshes with r = 100 the weighted error after 10 iterations was within
# 2.5 % of its converged value (40 iterations), at a quarter of the time; the
# labels are only a starting point for the connectivity repair anyway.
KMEANS_ITERATIONS = 10

# Significant bits kept of each tet's relative volume: far more than clustering
# needs, far fewer than the 53 in which a rescaled mesh differs by round-off.
VOLUME_BITS = 20

# Features are kept on a grid of 2^-FEATURE_BITS of the largest one (see scale_free_features).
FEATURE_BITS = 20

# k-means++ seeding skips a point for a new centre c when |c - a|^2 >= this
# times |x - a|^2 (a: the point's nearest centre so far).  4 is the triangle
# inequality's bound; the excess is a margin far above the relative round-off
# of squared distances (about 1e-15), so a skipped point would not have moved.
PRUNE_FACTOR = 4.0 * (1.0 + 1e-9)

# Tets per block when screening distances to all centres: bounds the (block, k)
# temporaries to a few MB, which keeps them in cache.
SCREEN_BLOCK = 2048


def scale_free_volumes(volumes: np.ndarray, bits: int = VOLUME_BITS) -> np.ndarray:
    """Volumes (t,) relative to their mean, each rounded to ``bits`` significant bits.

    The same mesh modelled at x0.01 or x100 has volumes that differ from the
    x1 ones in the last bits, so ties between equal tets (a lattice is full
    of them) would break differently and the labels change with the scale.
    Rounded, they are identical; and sums of a few thousand of them are
    exact, hence independent of summation order.
    """
    mantissa, exponent = np.frexp(volumes / volumes.mean())
    return np.ldexp(np.round(mantissa * 2.0**bits) / 2.0**bits, exponent)


def scale_free_features(features: np.ndarray, bits: int = FEATURE_BITS) -> np.ndarray:
    """Features (t, m) divided by their largest magnitude, rounded to multiples of 2^-bits.

    A rescaled mesh gives features that differ in the last bits, and on
    regular meshes many tets are exactly equidistant from two centres: the
    round-off would pick the side.  Rounded, the inputs are bit-identical,
    so is everything computed from them.  2^-20 of the largest feature is
    far below anything that separates clusters.
    """
    scale = np.abs(features).max(initial=0.0)
    if not scale > 0.0:
        return np.zeros_like(features, dtype=np.float64)
    return np.round(features / scale * 2.0**bits) / 2.0**bits


def tet_features(weights: np.ndarray, T: np.ndarray, eigenvalues: np.ndarray) -> np.ndarray:
    """Per-tet clustering features (t, m): mean of W over each tet's vertices, times lam^-2."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    scale = np.zeros_like(lam)
    nz = lam > ZERO_EIGENVALUE_RTOL * max(lam.max(), 0.0)
    scale[nz] = lam[nz] ** -2.0
    return weights[T].mean(axis=1) * scale


def squared_distances(points: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """||points_i - centre||^2: points (t, m), centre (m,) -> (t,), elementwise (no BLAS)."""
    d = points - centre
    return (d * d).sum(axis=1)


def _scores_exact(points: np.ndarray, centres: np.ndarray, half_norm: np.ndarray) -> np.ndarray:
    """|c|^2 / 2 - x . c for every point and centre: (s, m), (k, m), (k,) -> (s, k), in a fixed order.

    One elementwise pass per feature, in feature order, never BLAS: these
    scores are the reference every label is defined by (ties: lowest index).
    """
    d = np.empty((len(points), len(centres)))
    d[:] = half_norm
    e = np.empty_like(d)
    for j in range(points.shape[1]):
        np.multiply(points[:, j, None], centres[:, j], out=e)
        d -= e
    return d


def nearest_centre(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre for every point: points (t, m), centres (k, m) -> (t,).

    Minimises s = |c|^2 / 2 - x . c, which orders centres as |x - c|^2 does
    (|x|^2 is the same for all).  The labels are those of
    :func:`_scores_exact` (fixed order, ties to the lower index), but that
    costs t k m elementwise operations; a matrix product is ten times
    faster and its summation order depends on the BLAS and its threads.  So
    the product only *screens*: both it and the reference are within
    ``delta = gamma_(m+2) (max |c|^2 / 2 + |x| max |c|)`` of the exact s,
    gamma_n = n u / (1 - n u) (Higham, *Accuracy and Stability of Numerical
    Algorithms*, §3.1: any summation order, fused or not), hence within
    2 delta of each other.  Where the screened winner leads the runner-up by
    more than 4 delta (8 delta here: the margin and the gap are rounded
    too), the reference has the same winner; the other points (near-ties,
    which a regular mesh has plenty of) are scored by the reference itself.
    The labels are bit-identical to the reference's whatever the BLAS.
    """
    t, m = points.shape
    k = len(centres)
    half_norm = 0.5 * (centres * centres).sum(axis=1)
    if k == 1:
        return np.zeros(t, dtype=np.int64)
    u = 0.5 * np.finfo(np.float64).eps  # unit roundoff
    gamma = (m + 2) * u / (1.0 - (m + 2) * u)
    c_max = float(np.sqrt(2.0 * half_norm.max()))
    x_norm = np.sqrt((points * points).sum(axis=1))
    margin = 8.0 * gamma * (half_norm.max() + x_norm * c_max) + np.finfo(np.float64).tiny
    nearest = np.empty(t, dtype=np.int64)
    ct = np.ascontiguousarray(centres.T)  # (m, k)
    for s in range(0, t, SCREEN_BLOCK):  # blocks of points bound the (block, k) temporaries
        block = points[s : s + SCREEN_BLOCK]
        rows = np.arange(len(block))
        score = half_norm - block @ ct
        best = score.argmin(axis=1)
        lead = score[rows, best]
        score[rows, best] = np.inf
        unsure = score.min(axis=1) - lead <= margin[s : s + len(block)]
        if unsure.any():
            best[unsure] = _scores_exact(block[unsure], centres, half_norm).argmin(axis=1)
        nearest[s : s + len(block)] = best
    return nearest


def weighted_means(
    points: np.ndarray, labels: np.ndarray, weights: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean of each label's points: (k, m) means and (k,) total weights (0 for empty labels)."""
    total = np.bincount(labels, weights=weights, minlength=k)
    sums = np.stack([np.bincount(labels, weights=weights * p, minlength=k) for p in points.T], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / total[:, None], total


def kmeans_pp_centres(points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding, weighted: indices (k',) of k' <= k distinct points.

    points: (t, m); weights: (t,).  Each new centre is drawn with probability
    proportional to weight times squared distance to the nearest chosen
    centre (Arthur & Vassilvitskii 2007).  Every point keeps that distance
    and which centre gives it, and only the new centre updates them: O(t)
    per centre, plus O(m) per point the new centre may have come nearer to.
    By the triangle inequality a point x nearest to centre a cannot come
    nearer to the new centre c when |c - a| >= 2 |x - a| (Elkan 2003); those
    points are skipped (with a relative margin far above round-off, so the
    distances kept are bit-identical to measuring every point).  Stops early
    when every remaining point coincides with a centre.
    """
    cum = np.cumsum(weights)
    chosen = [min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(points) - 1)]
    d2 = squared_distances(points, points[chosen[0]])
    owner = np.zeros(len(points), dtype=np.int64)  # index into ``chosen`` of each point's nearest centre
    for c in range(1, k):  # one iteration per centre
        cum = np.cumsum(weights * d2)
        if not cum[-1] > 0.0:
            break
        i = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(points) - 1)
        chosen.append(i)
        between = squared_distances(points[chosen[:-1]], points[i])  # (c,) from every earlier centre
        near = np.flatnonzero(between[owner] < PRUNE_FACTOR * d2)
        closer = squared_distances(points[near], points[i])
        moved = closer < d2[near]
        d2[near[moved]] = closer[moved]
        owner[near[moved]] = c
    return np.asarray(chosen, dtype=np.int64)


def kmeans_labels(features: np.ndarray, k: int, weights: np.ndarray | None = None, seed: int = 0) -> np.ndarray:
    """Weighted k-means++ / Lloyd labels (t,) in [0, k'), k' <= k, bit-for-bit deterministic for a seed.

    features: (t, m); weights: (t,) positive (tet volumes), default ones.
    Features are divided by their largest magnitude first so that lam^-2
    scaling cannot overflow the squared distances.  Empty clusters keep
    their centre and are dropped at the end; labels are dense.
    """
    t = len(features)
    k = int(min(k, t))
    w = np.ones(t) if weights is None else np.asarray(weights, dtype=np.float64)
    if k <= 1:
        return np.zeros(t, dtype=np.int64)
    scale = np.abs(features).max(initial=0.0)
    data = features / scale if scale > 0 else np.asarray(features, dtype=np.float64)
    centres = data[kmeans_pp_centres(data, w, k, np.random.default_rng(seed))]
    labels = nearest_centre(data, centres)
    for _ in range(KMEANS_ITERATIONS):
        means, total = weighted_means(data, labels, w, len(centres))
        centres = np.where(total[:, None] > 0, means, centres)
        new = nearest_centre(data, centres)
        if np.array_equal(new, labels):
            break
        labels = new
    return _dense(labels)


def _components(labels: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Components (t,) of the face graph (pairs a, b) restricted to tets with equal labels."""
    t = len(labels)
    same = labels[a] == labels[b]
    graph = sp.coo_matrix((np.ones(int(same.sum())), (a[same], b[same])), shape=(t, t))
    return connected_components(graph, directed=False)[1]


def split_connected(labels: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Relabel (t,) so each cluster is one face-connected set of tets.

    Two tets stay together when they share a face and a label; the new
    labels are the connected components of that graph, ordered by first tet.
    """
    a, b = face_adjacency(T)
    return _dense(_components(labels, a, b))


def _dense(labels: np.ndarray) -> np.ndarray:
    """Renumber labels densely, by first appearance (independent of any internal order)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inverse.ravel()]


def merge_small_clusters(
    labels: np.ndarray, T: np.ndarray, volumes: np.ndarray, min_volume: float, max_count: int | None = None
) -> np.ndarray:
    """Merge clusters into face-adjacent neighbours: at most ``max_count`` left, none below ``min_volume``.

    labels: (t,) with face-connected clusters -> (t,) dense.  Clusters are
    ranked by (volume, label).  Each round, the clusters that must go (every
    one below ``min_volume``, and the smallest ones while more than
    ``max_count`` remain) merge into the higher-ranked neighbour they share
    most faces with.  Picks always point up the ranking, so they form a
    forest and each pick removes exactly one cluster: the count never
    overshoots.  A union of face-adjacent connected sets is connected, so
    every cluster stays connected.  A cluster with no neighbour (a whole
    loose part of the mesh) cannot merge, so more than ``max_count`` remain
    when the mesh has more parts than that.  Rounds repeat until nothing
    must go; each round is vectorised over clusters and face pairs.
    """
    a, b = face_adjacency(T)
    labels = _dense(labels)
    limit = len(T) if max_count is None else int(max_count)
    while True:
        c = int(labels.max()) + 1
        vol = np.bincount(labels, weights=volumes, minlength=c)
        rank = np.empty(c, dtype=np.int64)
        rank[np.lexsort((np.arange(c), vol))] = np.arange(c)
        la, lb = labels[a], labels[b]
        cross = la != lb
        src = np.concatenate([la[cross], lb[cross]])
        dst = np.concatenate([lb[cross], la[cross]])
        up = rank[dst] > rank[src]
        src, dst = src[up], dst[up]
        can = np.zeros(c, dtype=bool)
        can[src] = True
        by_size = np.argsort(rank)
        go = can & (vol < min_volume)
        go[by_size[can[by_size]][: max(c - limit, 0)]] = True
        if not go.any():
            return labels
        keep = go[src]
        pair, shared = np.unique(src[keep] * c + dst[keep], return_counts=True)
        ps, pd = pair // c, pair % c
        best = np.lexsort((rank[pd], shared, ps))  # per source, the last entry is its pick
        last = np.ones(len(best), dtype=bool)
        last[:-1] = ps[best][1:] != ps[best][:-1]
        parent = np.arange(c)
        parent[ps[best][last]] = pd[best][last]
        while True:  # pointer jumping to the forest roots: O(log depth) vectorised passes
            root = parent[parent]
            if np.array_equal(root, parent):
                break
            parent = root
        labels = _dense(parent[labels])


def bisect_connected(
    features: np.ndarray, volumes: np.ndarray, a: np.ndarray, b: np.ndarray, iterations: int = 10
) -> np.ndarray:
    """Split one face-connected cluster of s >= 2 tets into two face-connected parts.

    features: (s, m); volumes: (s,); a, b: (p,) local face pairs.  Returns
    (s,) bool, True for the second part; both parts are non-empty.

    A volume-weighted 2-means in feature space proposes the cut (seeded by
    the feature extremes, so no randomness).  When the features cannot tell
    the tets apart (a rigid region), the cut is a breadth-first half from a
    peripheral tet instead.  Either proposal is then made connected: keep the
    heaviest connected piece P of the proposal, take the heaviest connected
    piece of the rest as the second part, and give P every other piece of
    the rest.  Each of those pieces touches P (pieces of the rest never
    touch one another), so both parts are connected.
    """
    s = len(features)
    side = _two_means(features, volumes, iterations)
    if side is None:
        side = _breadth_first_half(volumes, a, b)
    comp = _components(side.astype(np.int64), a, b)
    heavy = int(np.argmax(np.bincount(comp, weights=volumes)))
    rest = comp != heavy  # non-empty: the proposal has two non-empty sides
    rest_comp = _components(rest.astype(np.int64), a, b)
    rest_vol = np.bincount(rest_comp[rest], weights=volumes[rest], minlength=s)  # zero for P's own piece
    return rest_comp == int(np.argmax(rest_vol))


def _two_means(features: np.ndarray, volumes: np.ndarray, iterations: int) -> np.ndarray | None:
    """Volume-weighted 2-means labels (s,) bool, or None when all features coincide."""
    mean = (features * volumes[:, None]).sum(axis=0) / volumes.sum()
    i = int(np.argmax(squared_distances(features, mean)))
    d = squared_distances(features, features[i])
    j = int(np.argmax(d))
    if not d[j] > 0.0:
        return None
    c0, c1 = features[i], features[j]
    side = squared_distances(features, c1) < squared_distances(features, c0)
    for _ in range(iterations):
        c0 = (features[~side] * volumes[~side, None]).sum(axis=0) / volumes[~side].sum()
        c1 = (features[side] * volumes[side, None]).sum(axis=0) / volumes[side].sum()
        new = squared_distances(features, c1) < squared_distances(features, c0)
        if new.all() or not new.any() or np.array_equal(new, side):
            break
        side = new
    return side


def _breadth_first_half(volumes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(s,) bool: the first tets, in breadth-first order from a peripheral tet, holding half the volume."""
    s = len(volumes)
    graph = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(s, s)).tocsr()
    far = int(breadth_first_order(graph, 0, directed=False, return_predecessors=False)[-1])
    order = breadth_first_order(graph, far, directed=False, return_predecessors=False)
    count = int(np.searchsorted(np.cumsum(volumes[order]), 0.5 * volumes.sum()))
    side = np.zeros(s, dtype=bool)
    side[order[: min(max(count, 1), s - 1)]] = True
    return side


def split_largest_clusters(
    labels: np.ndarray, T: np.ndarray, volumes: np.ndarray, features: np.ndarray, count: int
) -> np.ndarray:
    """Bisect the largest cluster (by volume, of two or more tets) until ``count`` clusters remain.

    labels: (t,) dense, face-connected clusters; features: (t, m).  Returns
    (t,) dense.  One loop iteration per added cluster, each vectorised over
    the tets and face pairs (O(t + p)).
    """
    a, b = face_adjacency(T)
    labels = _dense(labels).copy()
    c = int(labels.max()) + 1
    vol = list(np.bincount(labels, weights=volumes, minlength=c))
    size = list(np.bincount(labels, minlength=c))
    while c < min(count, len(T)):  # one iteration per added cluster
        splittable = np.flatnonzero(np.asarray(size) >= 2)
        target = int(splittable[np.argmax(np.asarray(vol)[splittable])])
        members = np.flatnonzero(labels == target)
        local = np.full(len(T), -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        inside = (labels[a] == target) & (labels[b] == target)
        second = bisect_connected(features[members], volumes[members], local[a[inside]], local[b[inside]])
        labels[members[second]] = c
        moved = float(volumes[members[second]].sum())
        vol[target] -= moved
        vol.append(moved)
        size[target] -= int(second.sum())
        size.append(int(second.sum()))
        c += 1
    return _dense(labels)


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


def skinning_clusters(
    weights: np.ndarray, eigenvalues: np.ndarray, T: np.ndarray, volumes: np.ndarray, r: int, seed: int = 0
) -> np.ndarray:
    """Exactly r face-connected cluster labels (t,) in [0, r), deterministic for a seed.

    weights: (n, m) skinning modes; eigenvalues: (m,); T: (t, 4); volumes: (t,).
    k-means++ on the weighted tet features (k = r), split into face-connected
    parts, merged down to at most r (slivers below a quarter of the mean
    cluster volume included), then the largest clusters bisected back up to
    r.  Two exceptions: r >= t gives every tet its own cluster, and a mesh
    with more loose parts than r gets one cluster per part (a cluster cannot
    span two parts).  Volumes and features enter only through
    :func:`scale_free_volumes` and :func:`scale_free_features`, so the same
    character at any modelling scale gets the same labels.
    """
    if r < 1:
        raise SubspaceError("ask for at least one cluster")
    t = len(T)
    if r >= t:
        return np.arange(t)  # every tet its own cluster: no hyper-reduction error
    vol = scale_free_volumes(np.asarray(volumes, dtype=np.float64))
    feats = scale_free_features(tet_features(weights, T, eigenvalues))
    labels = split_connected(kmeans_labels(feats, r, vol, seed), T)
    labels = merge_small_clusters(labels, T, vol, MIN_CLUSTER_FRACTION * vol.sum() / r, max_count=r)
    return split_largest_clusters(labels, T, vol, feats, r)
