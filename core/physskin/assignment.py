"""Tets -> bones and pinned vertices -> bones (Song et al., §3).

Bones are rest-pose segments: ``heads`` and ``tails`` (b, 3).  Each tet joins the
rotation cluster of the bone segment nearest to its barycentre; vertices close to
a segment are pinned to that bone and follow its handle transform applied to
their own rest position (x_p = H x̂_p, Song et al., §3, Fig. 2: snapping pins to
the handle would distort the rest pose).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from ..geometry.tetmesh import boundary_faces
from ..model.rigid import RIGID_WEIGHT

# A vertex is pinned only where the rig says it follows one bone: its heaviest
# weight is at least this share of the most that bone has anywhere.  Pinning a
# blended vertex to one bone's transform fights the other bone across the joint:
# on a cylinder twisted 180° at 2.7k vertices, pins by depth alone meet at the
# joint and give -2.7 % volume with 26 inverted tets; with this rule, -1.3 % and
# none (tests/core/physskin/test_rig.py).  Relative to the bone's own maximum so
# that a bone whose weights are blended everywhere (a smooth-weighted spine)
# still pins its most firmly bound flesh.
PIN_WEIGHT = 0.95


def segment_distances(P: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Distances (m, b) from points P (m, 3) to the segments heads[b] -> tails[b] (b, 3)."""
    P = np.asarray(P, dtype=np.float64)
    a = np.asarray(heads, dtype=np.float64)[None, :, :]
    d = np.asarray(tails, dtype=np.float64)[None, :, :] - a
    length2 = np.maximum((d * d).sum(axis=2), 1e-300)
    s = np.clip(((P[:, None, :] - a) * d).sum(axis=2) / length2, 0.0, 1.0)
    return np.linalg.norm(P[:, None, :] - (a + s[:, :, None] * d), axis=2)


def assign_tets(X: np.ndarray, T: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Bone index (t,) of every tet: the segment nearest to its barycentre.  X (n, 3), T (t, 4)."""
    return np.argmin(segment_distances(X[T].mean(axis=1), heads, tails), axis=1)


def pin_vertices(X: np.ndarray, heads: np.ndarray, tails: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Pinned vertex indices (p,) and their bones (p,): vertices within ``radius`` of a segment.

    Every bone pins at least its nearest vertex, so each handle drives the solve
    and the pinned system stays positive definite.
    """
    D = segment_distances(X, heads, tails)
    bone = np.argmin(D, axis=1)
    near = D[np.arange(len(X)), bone] <= radius
    for b in range(D.shape[1]):  # loop over bones, not tets: b is small
        if not (near & (bone == b)).any():
            v = int(np.argmin(D[:, b]))
            near[v], bone[v] = True, b
    idx = np.flatnonzero(near)
    return idx, bone[idx]


def surface_depth(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Distance (n,) from every vertex to the nearest boundary vertex of the tet mesh (X (n, 3), T (t, 4))."""
    surface = np.unique(boundary_faces(T))
    return cKDTree(X[surface]).query(X)[0]


def choose_pins(
    X: np.ndarray,
    T: np.ndarray,
    weights: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    depth: float,
    rigid: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Pinned vertices (p,) and their bones (p,) for a skinned tet mesh.

    X (n, 3), T (t, 4), weights (n, b) with rows summing to 1, heads and tails (b, 3)
    (NaN rows: a bone without a segment, such as the column of vertices bound to no
    bone, which follow the object).  A vertex is pinned to its heaviest bone when
    lies in the inner ``depth`` share of the flesh around that bone's segment,
    d_bone <= depth * (d_bone + d_surface), and it is bound to that bone alone
    (its weight at least :data:`PIN_WEIGHT` of the bone's largest).  A vertex bound
    to its bone alone (weight at least :data:`RIGID_WEIGHT`) is pinned wherever it
    lies when ``rigid`` (the Pin Rigidly Bound setting): rigidly bound parts stay rigid.
    Without it such a vertex is pinned by depth alone, so a soft region bound to one
    bone (a belly, a cheek) is solved: it can bulge and respond to forces.  The rule is
    scale-free (a character imported at 100x pins the same vertices), pins a thick
    thigh and a thin finger alike, and leaves the skin and the joints, where the
    weights blend, to the solve.  Vertices of a segment-less bone are pinned by
    the weight rule alone.  Every bone that is some vertex's
    heaviest gets at least one pin, and so does every connected piece of the mesh
    (its most firmly bound vertex), so the pinned system is positive definite.
    """
    X = np.asarray(X, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    n = len(W)
    bone = np.argmax(W, axis=1)
    has_segment = np.isfinite(heads).all(axis=1) & np.isfinite(tails).all(axis=1)
    d_bone = np.full(n, np.inf)
    on_segment = has_segment[bone]
    if on_segment.any():
        seg = np.flatnonzero(has_segment)
        D = segment_distances(X[on_segment], heads[seg], tails[seg])  # (m, s)
        column = np.searchsorted(seg, bone[on_segment])
        d_bone[on_segment] = D[np.arange(len(column)), column]
    d_surface = surface_depth(X, T)
    heaviest = W[np.arange(n), bone]
    top = np.zeros(W.shape[1])
    np.maximum.at(top, bone, heaviest)
    alone = heaviest >= PIN_WEIGHT * top[bone]
    # A vertex bound to one bone alone (its heaviest weight at least RIGID_WEIGHT) is pinned
    # wherever it lies, skin included: the rig says it moves rigidly with that bone, and
    # the physics skin then acts only where the weights blend.  Without this rule the
    # mesher's glue between parts that nearly touch (RobotExpressive's head and lower
    # arm) carries the arm's 90° swings into the rigidly bound head through the ARAP
    # energy: the head's skin left its bone by 6.7 % of the body diagonal (render
    # vertices, over the walk); with it, the largest correction is 1.2 %, at a blended
    # joint.  CesiumMan's bent elbow is unchanged to 0.01 % (volume kept).
    pinned = alone & (~on_segment | (d_bone <= depth * (d_bone + d_surface)))
    if rigid:
        pinned |= heaviest >= RIGID_WEIGHT
    # A bone whose flesh got no pin (a bone outside the mesh, a thin part): its closest
    # vertex among those bound to it alone.
    for k in np.setdiff1d(np.unique(bone), np.unique(bone[pinned])):  # loop over bones, not vertices
        mine = np.flatnonzero((bone == k) & alone)
        pinned[mine[np.argmin(d_bone[mine])]] = True
    adjacency = _adjacency(T, n)
    pieces, label = connected_components(adjacency, directed=False)
    unpinned = np.setdiff1d(np.arange(pieces), np.unique(label[pinned]))
    for piece in unpinned:  # loop over loose pieces, a handful
        mine = np.flatnonzero(label == piece)
        pinned[mine[np.argmax(W[mine, bone[mine]])]] = True
    idx = np.flatnonzero(pinned)
    return idx, bone[idx]


def _adjacency(T: np.ndarray, n: int) -> sp.csr_matrix:
    """Vertex adjacency (n x n, sparse) of a tet mesh's edges."""
    i = np.repeat(T, 4, axis=1).ravel()
    j = np.tile(T, (1, 4)).ravel()
    return sp.csr_matrix((np.ones(len(i)), (i, j)), shape=(n, n))


def bone_tet_weights(X: np.ndarray, T: np.ndarray, heads: np.ndarray, tails: np.ndarray, blend: float) -> np.ndarray:
    """Tet weights (t, b) from the bone segments alone: the seed's nearest-segment clusters, blended at their
    boundaries.  X (n, 3), T (t, 4), heads and tails (b, 3) (NaN rows: a bone without a segment, weight 0).

    w_b = max(0, 1 - (d_b - d_min) / h)^2 normalised, d_b the distance from the tet's barycentre to
    segment b and h = ``blend`` times the nearest bone's length: a tet more than h nearer one segment
    than any other has that bone alone (the seed's piecewise-constant rotation), and across a cluster
    boundary the rotation turns over about 2 h instead of jumping.  The jump is what inflates or
    collapses a twisted joint (Song et al. §5): on the 2,673-vertex limb twisted 165° with a 90°
    bend, one-bone clusters give -15.4 % volume and 164 inverted tets; blend 0.1, 0.3, 0.5: -3.7,
    -3.4, -3.3 % and none (twisted alone: -3.9 % and 2 inverted; blended -2.2, -1.5, -1.1 %,
    none).  Measured 2026-11-26; ``test_rig.py`` checks both.
    """
    has = np.isfinite(heads).all(axis=1) & np.isfinite(tails).all(axis=1)
    seg = np.flatnonzero(has)
    D = segment_distances(X[T].mean(axis=1), heads[seg], tails[seg])  # (t, s)
    near = np.argmin(D, axis=1)
    h = blend * np.linalg.norm(tails[seg] - heads[seg], axis=1)[near]  # (t,)
    gap = (D - D[np.arange(len(D)), near][:, None]) / np.maximum(h, 1e-300)[:, None]  # (t, s), 0 at the nearest
    w = np.maximum(1.0 - gap, 0.0) ** 2  # compact: a tet h nearer one segment than all others has it alone
    W = np.zeros((len(T), len(heads)))
    W[:, seg] = w / w.sum(axis=1, keepdims=True)
    return W


def skeleton_pins(
    X: np.ndarray, T: np.ndarray, heads: np.ndarray, tails: np.ndarray, depth: float
) -> tuple[np.ndarray, np.ndarray]:
    """The seed's minimal pins along the skeleton (§3, §4 "minimal pinning"): vertices (p,) and their bones (p,).

    A vertex is pinned to its nearest segment when it lies in the inner ``depth`` share of the flesh
    around it, d <= depth (d + d_surface): on a mesh whose vertices lie on the bones, the line of
    vertices along each bone.  Every bone with a segment pins at least its nearest vertex, and every
    connected piece its vertex nearest a bone, so the (soft) pinned system is positive definite.
    X (n, 3), T (t, 4), heads and tails (b, 3) (NaN rows: bones without a segment pin nothing).
    """
    X = np.asarray(X, dtype=np.float64)
    has = np.isfinite(heads).all(axis=1) & np.isfinite(tails).all(axis=1)
    seg = np.flatnonzero(has)
    if len(seg) == 0:
        raise ValueError("a physics skin from bones only needs at least one bone with a segment")
    D = segment_distances(X, heads[seg], tails[seg])  # (n, s)
    near = np.argmin(D, axis=1)
    d = D[np.arange(len(X)), near]
    pinned = d <= depth * (d + surface_depth(X, T))
    pinned[np.argmin(D, axis=0)] = True  # each bone's nearest vertex
    pieces, label = connected_components(_adjacency(T, len(X)), directed=False)
    for piece in np.setdiff1d(np.arange(pieces), np.unique(label[pinned])):  # loop over loose pieces, a handful
        mine = np.flatnonzero(label == piece)
        pinned[mine[np.argmin(d[mine])]] = True
    idx = np.flatnonzero(pinned)
    # each bone's nearest vertex is pinned to that bone even where another segment is as near
    bone = near.copy()
    bone[np.argmin(D, axis=0)] = np.arange(len(seg))
    return idx, seg[bone[idx]]
