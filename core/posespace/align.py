"""Aligning per-pose bases so their columns can be blended (Xu & Barbič, §5.1, eqs. 11-12).

Bases computed independently at two poses span similar subspaces, but their
columns need not correspond: eigenvectors come out permuted, sign-flipped or
mixed inside near-degenerate clusters.  Blending them column by column then
cancels modes (a rank loss the tests show).  Each pose's basis is instead turned,
inside its own span, towards an already aligned neighbour: the orthogonal
Q = argmin ||U_j Q - U_i||_M is Y Z^T from the SVD U_j^T M U_i = Y Σ Z^T.

Skinning bases are scalar weights W (n, m) whose affine maps act on each
vertex's coordinates, so a basis does not turn with the limb it lives on: the
seed's per-vertex un-rotation before Procrustes (its Fig. 7, for vector-valued
modes) has nothing to undo, and W Q aligns the 12 m-column subspace through
B(W Q) = B(W) (Q ⊗ I_12).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Alignment:
    """bases: aligned (k, n, m); rotations Q_i (k, m, m) with aligned_i = original_i Q_i;
    parent (k,): the pose each was aligned to (-1 at the root); cosines (k, m): the
    singular values Σ against the parent, cosines of the principal angles (1 at the root)."""

    bases: np.ndarray
    rotations: np.ndarray
    parent: np.ndarray
    cosines: np.ndarray


def procrustes(U: np.ndarray, target: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonal Q (m, m) minimising ||U Q - target||_M, and the cosines (m,) of the principal angles.

    U, target: (n, m) bases; masses: (n,) the diagonal of M.
    """
    Y, sigma, Zt = np.linalg.svd(U.T @ (masses[:, None] * target))
    return Y @ Zt, sigma


def alignment_tree(features: np.ndarray, root: int = 0) -> np.ndarray:
    """Parent (k,) of each pose in the seed's greedy tree (§5.1); -1 at ``root``.

    From the root, repeatedly join the unconnected pose closest (in features (k, f))
    to any connected one, and align it to that one (Prim's algorithm on distances).
    """
    F = np.asarray(features, dtype=np.float64)
    k = len(F)
    D = np.linalg.norm(F[:, None, :] - F[None, :, :], axis=2)
    parent = np.full(k, -1)
    connected = np.zeros(k, dtype=bool)
    connected[root] = True
    for _ in range(k - 1):  # loop over poses, a handful
        sub = np.where(connected[:, None] & ~connected[None, :], D, np.inf)
        i, j = np.unravel_index(np.argmin(sub), sub.shape)
        parent[j], connected[j] = i, True
    return parent


def align_bases(bases: np.ndarray, masses: np.ndarray, features: np.ndarray, root: int = 0) -> Alignment:
    """Align bases (k, n, m) along :func:`alignment_tree`: each to its parent's aligned basis."""
    U = np.asarray(bases, dtype=np.float64)
    k, _, m = U.shape
    parent = alignment_tree(features, root)
    aligned = U.copy()
    Q = np.tile(np.eye(m), (k, 1, 1))
    cosines = np.ones((k, m))
    order = _tree_order(parent, root)
    for j in order[1:]:  # loop over poses, parents first
        Q[j], cosines[j] = procrustes(U[j], aligned[parent[j]], masses)
        aligned[j] = U[j] @ Q[j]
    return Alignment(aligned, Q, parent, cosines)


def _tree_order(parent: np.ndarray, root: int) -> list[int]:
    """Poses in breadth-first order from ``root``: every parent before its children."""
    order, frontier = [root], [root]
    while frontier:
        frontier = [int(j) for j in np.flatnonzero(np.isin(parent, frontier))]
        order += frontier
    return order
