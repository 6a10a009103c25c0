"""The global step on one active set (core/contact/active_solve.py): the low-rank and the whole factor
are the minimiser of 1/2 (z - z0)^T (I3 (x) H) (z - z0) + 1/2 sum w (J z - b)^2, checked against the
normal equations solved densely (1e-9 relative: both solves' round-off on matrices of condition ~1e4).
"""

import numpy as np
import pytest

from core.contact.active_solve import ActiveSolve
from core.contact.penalty import ContactRows


def problem(a, q=8, seed=0):
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((a, 3 * q))
    w = rng.uniform(1.0, 1e3, a)
    b = rng.standard_normal(a)
    B = rng.standard_normal((q, q))
    return J, w, b, B @ B.T + q * np.eye(q), rng.standard_normal((3, q))


@pytest.mark.parametrize("a", [1, 5, 16, 17, 40])  # low-rank up to 2q rows, the whole factor beyond
def test_the_solve_is_the_minimiser(a):
    J, w, b, H, z0 = problem(a)
    q = H.shape[0]
    on = np.arange(a + 3) < a  # three more rows that do not act
    rows = ContactRows(np.vstack([J, np.ones((3, 3 * q))]), np.append(b, [9.0] * 3), np.append(w, [5.0] * 3), on)
    solve = ActiveSolve(H, rows, on)
    assert solve.low_rank == (a <= 2 * q)
    Hb = np.kron(np.eye(3), H)
    want = np.linalg.solve(Hb + (J.T * w) @ J, Hb @ z0.ravel() + J.T @ (w * b))
    assert np.allclose(solve.solve(z0), want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


def test_no_active_row_leaves_the_free_step():
    J, w, b, H, z0 = problem(2)
    solve = ActiveSolve(H, ContactRows(J, b, w, np.ones(2, dtype=bool)), np.zeros(2, dtype=bool))
    assert np.array_equal(solve.solve(z0), z0.ravel())
