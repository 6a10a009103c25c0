"""Per-cluster 3x3 matrices stored as rows: A (9, r) with A[3 i + j, c] = A_c[i, j].

The solver keeps one 3x3 matrix per cluster (deformation gradients,
rotations, stretches).  Stored entry-major, every entry of all r matrices is
one contiguous row, so an operation on all clusters is one numpy call on r
numbers, and the cluster averaging operator (Benchekroun et al. 2023, eq. 27)
maps the reduced coordinates to the rows with three matrix-vector products.
"""

from __future__ import annotations

import numpy as np

# The entry of A^T at each row-major position.
_TRANSPOSE = np.array([0, 3, 6, 1, 4, 7, 2, 5, 8])


def cluster_order(r: int) -> np.ndarray:
    """(3r,) indices taking row 3c + j of a stack of r 3x3 blocks to position j r + c.

    The reduced operators store rows 3c..3c+2 = F_c^T (see ``reduced.py``);
    taken in this order, ``op[order] @ z[:, i]`` is the row block
    ``F_c[i, j]`` for j, c, so three products fill the (9, r) rows.
    """
    return (3 * np.arange(r)[None, :] + np.arange(3)[:, None]).ravel()


def from_stacked(F: np.ndarray) -> np.ndarray:
    """Rows (9, r) from stacked transposes F (3r x 3), rows 3c..3c+2 = F_c^T."""
    r = F.shape[0] // 3
    return np.ascontiguousarray(F.reshape(r, 3, 3).transpose(2, 1, 0)).reshape(9, r)


def transpose(A: np.ndarray) -> np.ndarray:
    """A_c^T for every cluster, (9, r)."""
    return A[_TRANSPOSE]


def product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A_c B_c for every cluster, (9, r)."""
    r = A.shape[1]
    return np.einsum("ikc,kjc->ijc", A.reshape(3, 3, r), B.reshape(3, 3, r)).reshape(9, r)


def traces(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """tr(A_c^T B_c) for every cluster, (r,)."""
    return np.einsum("ic,ic->c", A, B)
