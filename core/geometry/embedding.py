"""Embedding render-mesh vertices in the simulation tet mesh.

Each render vertex gets one tet and its four barycentric coordinates in it.
A point inside the mesh gets the tet that contains it; its coordinates are
its affine coordinates there, so the embedding reproduces the rest pose
exactly and any affine motion of the tet mesh exactly.  A point outside the
mesh is never extrapolated (a fin 8 tets outside would get weights of -8 and
amplify every motion): it is projected onto the nearest tet, whose
coordinates of that nearest point are all in [0, 1], and flagged.  So every
weight is within [-EMBED_TOL, 1 + EMBED_TOL].  The meshers put every surface
vertex inside; ``projected`` counts what was not.  The render mesh's
resolution never reaches the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .surface import closest_points_on_triangles

# epsilon: coordinates in [-EMBED_TOL, 1 + EMBED_TOL] count as inside (a point
# on a shared face, in round-off); anything else is projected.
EMBED_TOL = 1e-6
CANDIDATES = 24
# Point-tet pairs per barycentric evaluation (about 0.5 KB of temporaries each): memory stays bounded
# whatever the render mesh's size.
CHUNK_PAIRS = 1 << 17
# Points not found among the nearest CANDIDATES tets (by centroid) are looked
# for among this many before they are called outside.
MORE_CANDIDATES = 128


@dataclass(frozen=True)
class Embedding:
    """tet (k,) holding tet; bary (k, 4) coordinates in it, each within [-EMBED_TOL, 1 + EMBED_TOL].

    outside: (k,) True where the point lay outside the mesh and was
    projected onto its nearest tet; distance: (k,) how far it was moved
    (0 for points inside).
    """

    tet: np.ndarray
    bary: np.ndarray
    outside: np.ndarray
    distance: np.ndarray

    @property
    def projected(self) -> int:
        """How many points lay outside the mesh and were projected onto it."""
        return int(self.outside.sum())


def barycentric(X: np.ndarray, T: np.ndarray, tets: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Affine coordinates (k, 4) of points P (k, 3) in tets ``tets`` (k,) of mesh (X, T).

    Cramer's rule with edge vectors from corner 0.  A flat tet (zero volume)
    gives -inf coordinates: no point is inside it.
    """
    V = X[T[tets]]  # (k, 4, 3)
    b, c, d, p = V[:, 1] - V[:, 0], V[:, 2] - V[:, 0], V[:, 3] - V[:, 0], P - V[:, 0]
    cd = np.cross(c, d)
    det = np.einsum("ij,ij->i", b, cd)
    num = np.stack(
        [
            np.einsum("ij,ij->i", p, cd),
            np.einsum("ij,ij->i", b, np.cross(p, d)),
            np.einsum("ij,ij->i", b, np.cross(c, p)),
        ],
        axis=1,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = num / det[:, None]
        out = np.concatenate([1.0 - lam.sum(axis=1, keepdims=True), lam], axis=1)
    out[det == 0] = -np.inf
    return out


def point_chunks(points: int, per_point: int) -> list[tuple[int, int]]:
    """[a, b) ranges covering ``points`` points, each holding about CHUNK_PAIRS point-tet pairs when every point
    is tried against ``per_point`` tets: the chunks a pairwise barycentric evaluation runs in."""
    per = max(1, CHUNK_PAIRS // max(per_point, 1))
    return [(a, min(points, a + per)) for a in range(0, points, per)]


def _best_candidates(
    X: np.ndarray, T: np.ndarray, centroids: cKDTree, P: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Among the k tets nearest each point P (p, 3) by centroid: the one it is least outside of.

    Returns candidates (p, k), best tet (p,) and its coordinates (p, 4).  The coordinates are evaluated
    :data:`CHUNK_PAIRS` point-tet pairs at a time (an 80k-vertex render mesh's 2M pairs at once took 0.7 GB
    of temporaries; issue 41).
    """
    k = int(min(k, len(T)))
    _, cand = centroids.query(P, k=k)
    cand = cand.reshape(len(P), k)
    tet = np.empty(len(P), dtype=cand.dtype)
    bary = np.empty((len(P), 4))
    for a, b in point_chunks(len(P), k):  # chunks of points, not a loop over them
        chunk = barycentric(X, T, cand[a:b].ravel(), np.repeat(P[a:b], k, axis=0)).reshape(b - a, k, 4)
        # The largest smallest coordinate: inside if >= 0, else the tet the point is least outside of.
        best = np.argmax(chunk.min(axis=2), axis=1)
        rows = np.arange(b - a)
        tet[a:b], bary[a:b] = cand[a:b][rows, best], chunk[rows, best]
    return cand, tet, bary


def _inside(bary: np.ndarray) -> np.ndarray:
    """(p,) True where every coordinate of bary (p, 4) is within [-EMBED_TOL, 1 + EMBED_TOL]."""
    return (bary.min(axis=1) >= -EMBED_TOL) & (bary.max(axis=1) <= 1.0 + EMBED_TOL)


def nearest_tet_points(X: np.ndarray, T: np.ndarray, cand: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, ...]:
    """For each point P (p, 3), the nearest of its candidate tets cand (p, k): (tet (p,), bary (p, 4), distance (p,)).

    The nearest point of a tet a point lies outside of is on one of its four
    faces; its coordinates are clipped at 0 and renormalised (round-off).
    """
    p, k = cand.shape
    faces = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])
    corners = X[T[cand]]  # (p, k, 4, 3)
    tri = corners[:, :, faces]  # (p, k, 4, 3, 3)
    Q = np.broadcast_to(P[:, None, None, :], (p, k, 4, 3)).reshape(-1, 3)
    t = tri.reshape(-1, 3, 3)
    w = closest_points_on_triangles(Q, t[:, 0], t[:, 1], t[:, 2])
    pts = np.einsum("ij,ijk->ik", w, t)
    d = np.linalg.norm(pts - Q, axis=1).reshape(p, k * 4)
    best = np.argmin(d, axis=1)
    rows = np.arange(p)
    kk, ff = best // 4, best % 4
    bary = np.zeros((p, 4))
    bary[rows[:, None], faces[ff]] = w.reshape(p, k * 4, 3)[rows, best]
    bary = np.clip(bary, 0.0, None)
    bary /= bary.sum(axis=1, keepdims=True)
    return cand[rows, kk], bary, d[rows, best]


def embed_points(X: np.ndarray, T: np.ndarray, P: np.ndarray, candidates: int = CANDIDATES) -> Embedding:
    """Embed points P (k, 3) in tet mesh (X (n, 3), T (t, 4)): the holding tet, else the nearest one."""
    X = np.asarray(X, dtype=np.float64)
    T = np.asarray(T, dtype=np.int64)
    P = np.asarray(P, dtype=np.float64)
    centroids = cKDTree(X[T].mean(axis=1))
    cand, tet, bary = _best_candidates(X, T, centroids, P, candidates)
    inside = _inside(bary)
    distance = np.zeros(len(P))
    if not inside.all():
        # A long or flat tet's centroid can be far from points inside it: look wider first.
        miss = np.flatnonzero(~inside)
        _, t2, b2 = _best_candidates(X, T, centroids, P[miss], MORE_CANDIDATES)
        tet[miss], bary[miss] = t2, b2
        inside[miss] = _inside(b2)
    outside = ~inside
    if outside.any():
        out = np.flatnonzero(outside)
        tet[out], bary[out], distance[out] = nearest_tet_points(X, T, cand[out], P[out])
    return Embedding(tet=tet, bary=bary, outside=outside, distance=distance)


def interpolate(embedding: Embedding, T: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-vertex values (n, ...) interpolated at the embedded points: (k, ...)."""
    vals = np.asarray(values)[T[embedding.tet]]  # (k, 4, ...)
    return np.einsum("kj,kj...->k...", embedding.bary, vals)


def apply(embedding: Embedding, T: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Positions (k, 3) of the embedded points when the tet mesh moves to x (n, 3)."""
    return interpolate(embedding, T, x)


def embedded_positions(embedding: Embedding, X: np.ndarray, T: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Where each point is evaluated (k, 3): P (k, 3) itself inside the mesh (X (n, 3), T (t, 4)), its
    projection onto the mesh outside.

    A reconstruction must use these, not P: the modes are affine in the rest
    position (``T_b [X; 1]``), so evaluating them at a far point's own
    position extrapolates them along its whole distance from the mesh, even
    with convex barycentric weights (2 m beyond a tail's tip: 0.145 m of
    jiggle where the flesh it hangs on moves 0.09 m).
    """
    out = np.array(P, dtype=np.float64)
    far = np.flatnonzero(embedding.outside)
    if len(far):
        corners = np.asarray(X, dtype=np.float64)[np.asarray(T)[embedding.tet[far]]]  # (f, 4, 3)
        out[far] = np.einsum("kj,kji->ki", embedding.bary[far], corners)
    return out
