"""Sparse symmetric positive definite solves: one factorisation, many right-hand sides.

The factorisation is SuperLU with a *geometric nested-dissection* ordering
computed from the vertex positions and symmetric mode without pivoting:
several times faster than SuperLU's own best ordering (MMD_AT_PLUS_A), with
about half the fill (measured on the skinning eigenproblem of large grids;
``bench/REPORT.md`` keeps the current figures).  An optional CHOLMOD backend
(scikit-sparse) exists for the benchmark peer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

ND_LEAF = 64


def nested_dissection_order(A: sp.spmatrix, coords: np.ndarray, leaf: int = ND_LEAF) -> np.ndarray:
    """A fill-reducing ordering (n,) of a mesh matrix from its node coordinates.

    Recursively splits the nodes at the median of the longest bounding-box
    axis; nodes of one half adjacent to the other form the separator, which
    is numbered after both halves.  A: (n x n) sparsity pattern, coords: (n, 3).
    The recursion is over subdomains (about 2 n / leaf of them), never over nodes.
    """
    A = sp.csr_matrix(A)
    n = A.shape[0]
    mark = np.zeros(n, dtype=bool)
    parts: list[np.ndarray] = []
    # Explicit stack of (indices, state): state 0 = split, 1 = emit separator.
    stack: list[tuple[np.ndarray, int]] = [(np.arange(n), 0)]
    while stack:
        idx, state = stack.pop()
        if state == 1:
            parts.append(idx)
            continue
        if len(idx) <= leaf:
            parts.append(idx)
            continue
        P = coords[idx]
        axis = int(np.argmax(P.max(axis=0) - P.min(axis=0)))
        c = P[:, axis]
        left = c < np.median(c)
        if left.all() or not left.any():
            parts.append(idx)
            continue
        L, R = idx[left], idx[~left]
        mark[L] = True
        sub = A[R]
        rows = np.repeat(np.arange(len(R)), np.diff(sub.indptr))
        touches = np.zeros(len(R), dtype=bool)
        touches[rows[mark[sub.indices]]] = True
        mark[L] = False
        # Post-order: left half, right half, then the separator last.
        stack.append((R[touches], 1))
        stack.append((R[~touches], 0))
        stack.append((L, 0))
    order = np.concatenate(parts)
    return order


@dataclass
class SPDSolver:
    """Solves A x = b for a sparse SPD matrix A (n x n), many right-hand sides at once."""

    backend: str
    _solve: object = field(repr=False)

    def solve(self, B: np.ndarray) -> np.ndarray:
        return self._solve(B)  # type: ignore[operator]


def factorize_spd(A: sp.spmatrix, coords: np.ndarray | None, backend: str = "superlu") -> SPDSolver:
    """Factor an SPD matrix.  backend: 'superlu' (default, ships with scipy) or 'cholmod'."""
    A = sp.csc_matrix(A)
    if backend == "cholmod":
        from sksparse.cholmod import cholesky  # optional, benchmark peer only

        factor = cholesky(A)
        return SPDSolver("cholmod", lambda B: factor(B))
    if backend != "superlu":
        raise ValueError(f"unknown factorisation backend {backend!r}")
    if coords is None:
        lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", options={"SymmetricMode": True})
        return SPDSolver("superlu", lu.solve)
    perm = nested_dissection_order(A, coords)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    lu = spla.splu(
        A[perm][:, perm].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0, options={"SymmetricMode": True}
    )

    def solve(B: np.ndarray) -> np.ndarray:
        return lu.solve(np.asarray(B)[perm])[inv]

    return SPDSolver("superlu-nd", solve)
