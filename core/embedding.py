"""Embedding render-mesh vertices in the simulation tet mesh.

Each render vertex gets one tet and its four barycentric coordinates in it:
the containing tet, or for a point just outside the tet mesh, the nearest
candidate tet with its (extrapolated, possibly negative) coordinates.  Both
sum to one and are the affine coordinates of the point in that tet, so the
embedding reproduces the rest pose exactly and any affine motion of the tet
mesh exactly.  The render mesh's resolution never reaches the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

# Barycentric coordinates above this count as inside (round-off on faces).
INSIDE_TOL = -1e-9
CANDIDATES = 24


@dataclass(frozen=True)
class Embedding:
    """tet (k,) containing/nearest tet; bary (k, 4) affine coordinates; outside (k,) True if extrapolated."""

    tet: np.ndarray
    bary: np.ndarray
    outside: np.ndarray


def barycentric(X: np.ndarray, T: np.ndarray, tets: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Affine coordinates (k, 4) of points P (k, 3) in tets ``tets`` (k,) of mesh (X, T)."""
    V = X[T[tets]]  # (k, 4, 3)
    D = np.swapaxes(V[:, 1:] - V[:, :1], 1, 2)  # columns are edges from vertex 0
    lam = np.linalg.solve(D, (P - V[:, 0])[:, :, None])[:, :, 0]
    return np.concatenate([1.0 - lam.sum(axis=1, keepdims=True), lam], axis=1)


def embed_points(X: np.ndarray, T: np.ndarray, P: np.ndarray, candidates: int = CANDIDATES) -> Embedding:
    """Embed points P (k, 3) in tet mesh (X (n, 3), T (t, 4))."""
    P = np.asarray(P, dtype=np.float64)
    k = int(min(candidates, len(T)))
    _, cand = cKDTree(X[T].mean(axis=1)).query(P, k=k)
    cand = cand.reshape(len(P), k)
    bary = barycentric(X, T, cand.ravel(), np.repeat(P, k, axis=0)).reshape(len(P), k, 4)
    # The best candidate has the largest smallest coordinate: inside if >= 0,
    # otherwise the tet the point is "least outside" of.
    score = bary.min(axis=2)
    best = np.argmax(score, axis=1)
    rows = np.arange(len(P))
    outside = score[rows, best] < INSIDE_TOL
    if outside.any():
        # For points outside the mesh, prefer the tet whose centroid is nearest:
        # extrapolating from a far tet would amplify its deformation.
        best[outside] = 0
    return Embedding(tet=cand[rows, best], bary=bary[rows, best], outside=outside)


def interpolate(embedding: Embedding, T: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-vertex values (n, ...) interpolated at the embedded points: (k, ...)."""
    vals = np.asarray(values)[T[embedding.tet]]  # (k, 4, ...)
    return np.einsum("kj,kj...->k...", embedding.bary, vals)


def apply(embedding: Embedding, T: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Positions (k, 3) of the embedded points when the tet mesh moves to x (n, 3)."""
    return interpolate(embedding, T, x)
