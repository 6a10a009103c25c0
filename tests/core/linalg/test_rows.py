"""Per-cluster 3x3 matrices stored as rows (core/linalg/rows.py), against plain (r, 3, 3) numpy.

Tolerance: each entry is a sum of at most three products of O(1) numbers, so
the row forms and numpy's batched matmul agree to a few ulps (1e-14).
"""

import numpy as np

from core.linalg import rows


def _stack(r, seed):
    return np.random.default_rng(seed).standard_normal((r, 3, 3))


def _as_rows(A):
    return np.ascontiguousarray(A.reshape(len(A), 9).T)


def test_stacked_transposes_and_the_cluster_order_give_the_same_rows():
    A = _stack(7, 0)
    stacked = np.swapaxes(A, 1, 2).reshape(-1, 3)  # rows 3c..3c+2 = A_c^T, as the reduced operators store them
    assert np.array_equal(rows.from_stacked(stacked), _as_rows(A))
    # op[order] @ z[:, i] is the row block i of the rows: the simulator's gradient product.
    order = rows.cluster_order(len(A))
    assert np.array_equal(stacked[order].T.reshape(9, -1), _as_rows(A))


def test_products_transposes_and_traces_match_numpy():
    A, B = _stack(11, 1), _stack(11, 2)
    Ar, Br = _as_rows(A), _as_rows(B)
    assert np.abs(rows.product(Ar, Br) - _as_rows(A @ B)).max() < 1e-14
    assert np.array_equal(rows.transpose(Ar), _as_rows(np.swapaxes(A, 1, 2)))
    assert np.abs(rows.traces(Ar, Br) - np.einsum("cij,cij->c", A, B)).max() < 1e-14
