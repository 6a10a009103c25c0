"""Tets -> bones and pinned vertices -> bones (Song et al., §3).

Bones are rest-pose segments: ``heads`` and ``tails`` (b, 3).  Each tet joins the
rotation cluster of the bone segment nearest to its barycentre; vertices close to
a segment are pinned to that bone and follow its handle transform applied to
their own rest position (x_p = H x̂_p, Song et al., §3, Fig. 2: snapping pins to
the handle would distort the rest pose).
"""

from __future__ import annotations

import numpy as np


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
