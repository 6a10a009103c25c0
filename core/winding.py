"""Generalised winding numbers (Jacobson et al. 2013), exact and hierarchical.

w(q) = sum over triangles of the signed solid angle they subtend at q, over
4 pi.  For a closed, outward-oriented surface it is 1 inside and 0 outside;
for open, non-manifold or self-intersecting surfaces it degrades gracefully
(about 0.5 in the mouth of a hole, 2 where two shells overlap), which is why
inside/outside decisions threshold |w| at 0.5.  A surface with inward normals
gives -1 inside; taking |w| makes flipped parts work too.

The hierarchical evaluation (after Barill et al. 2018) walks a binary tree of
triangle groups; a group far from a query point (distance > ``beta`` times
its radius) contributes through its area-weighted normal (a dipole), a near
one is split, a near leaf is summed exactly.  Cost is about log(f) groups
plus a few leaves per query instead of all triangles.
"""

from __future__ import annotations

import numpy as np

CHUNK = 2_000_000  # (query, triangle) pairs evaluated per numpy call
LEAF = 16
BETA = 3.0


def solid_angles(V: np.ndarray, F: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Sum of the signed solid angles of triangles F at each query point: (q,).

    Van Oosterom & Strackee's formula, vectorised over (query, triangle) pairs
    in chunks to bound memory.
    """
    A, B, C = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    out = np.zeros(len(Q))
    step = max(1, CHUNK // max(len(F), 1))
    for s in range(0, len(Q), step):
        q = Q[s : s + step, None, :]
        a, b, c = A[None] - q, B[None] - q, C[None] - q
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        det = np.einsum("qti,qti->qt", a, np.cross(b, c))
        den = (
            la * lb * lc
            + np.einsum("qti,qti->qt", a, b) * lc
            + np.einsum("qti,qti->qt", b, c) * la
            + np.einsum("qti,qti->qt", c, a) * lb
        )
        out[s : s + step] = 2.0 * np.arctan2(det, den).sum(axis=1)
    return out


def winding_numbers_exact(V: np.ndarray, F: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """w (q,) by summing every triangle: O(q f)."""
    return solid_angles(V, F, Q) / (4.0 * np.pi)


def winding_numbers(V: np.ndarray, F: np.ndarray, Q: np.ndarray, beta: float = BETA, leaf: int = LEAF) -> np.ndarray:
    """w (q,) by a tree walk: far groups as dipoles, near groups split, near leaves exact.

    The tree splits triangles at the median centroid along the longest axis.
    A group far from a query (distance > ``beta`` times its radius)
    contributes the solid angle of a flat patch with the group's summed area
    vector N at its area-weighted centre c: N . (c - q) / |c - q|^3.  The walk
    is over groups (about 2 f / leaf of them), each vectorised over queries.
    """
    V = np.asarray(V, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    F = np.asarray(F, dtype=np.int64)
    if len(F) <= 2 * leaf or len(Q) * len(F) <= CHUNK:
        return winding_numbers_exact(V, F, Q)
    tri = V[F]
    cent = tri.mean(axis=1)
    area_vec = 0.5 * np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = np.linalg.norm(area_vec, axis=1)
    total = np.zeros(len(Q))
    stack = [(np.arange(len(F)), np.arange(len(Q)))]
    while stack:
        g, qi = stack.pop()
        a = area[g]
        asum = a.sum()
        c = (cent[g] * a[:, None]).sum(axis=0) / asum if asum > 0 else cent[g].mean(axis=0)
        radius = np.sqrt(((tri[g] - c) ** 2).sum(axis=2).max())
        d = c - Q[qi]
        dist = np.sqrt((d * d).sum(axis=1))
        far = dist > beta * radius
        if far.any():
            total[qi[far]] += (d[far] @ area_vec[g].sum(axis=0)) / dist[far] ** 3
        near = qi[~far]
        if not len(near):
            continue
        if len(g) <= leaf:
            total[near] += solid_angles(V, F[g], Q[near])
            continue
        P = cent[g]
        axis = int(np.argmax(P.max(axis=0) - P.min(axis=0)))
        order = np.argsort(P[:, axis], kind="stable")
        half = len(g) // 2
        stack += [(g[order[half:]], near), (g[order[:half]], near)]
    return total / (4.0 * np.pi)
