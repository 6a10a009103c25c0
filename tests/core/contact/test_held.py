"""Held rows (core/contact/held.py): the bound that keeps a held row unpressed, and rows that act as if all
were given.

Exactness: a held row is never pressed within reach of its centre (checked at random points on the
ball's edge); the rows with some held back give the energy, gradient and global step of the same rows
all given, to round-off (1e-12 relative: sums over fewer rows in another order).
"""

import numpy as np
import pytest

from core.contact.held import HeldRows
from core.contact.penalty import ContactRows
from core.contact.sample_rows import stacked_rows


def samples(seed=0, k=40, q=5):
    """(Y (k, q), its row norms (k,), normals (k, 3), z (3, q), slack (k,) spread around 0, targets b (k,))."""
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((k, q))
    n = rng.standard_normal((k, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    z = rng.standard_normal((3, q))
    slack = rng.uniform(-0.5, 3.0, k)
    b = np.einsum("ij,ij->i", n, Y @ z.T) - slack
    return Y, np.linalg.norm(Y, axis=1), n, z, slack, b


def held_rows(seed=0, band=0.5):
    Y, scale, n, z, slack, b = samples(seed)
    i = np.arange(len(Y))
    enter, held = HeldRows.split(Y, scale, i, n, b, 7.0, z, slack, np.full(len(i), band))
    return Y, n, z, b, enter, held


def test_split_enters_the_pressed_and_near_rows_and_holds_the_rest():
    Y, n, z, b, enter, held = held_rows()
    slack = np.einsum("ij,ij->i", n, Y @ z.T) - b
    assert np.array_equal(enter, slack < 0.5) and enter.any() and not enter.all()
    assert np.array_equal(held.index, np.flatnonzero(~enter))
    assert np.isclose(held.reach, np.min(slack[~enter] / np.linalg.norm(Y[~enter], axis=1)), rtol=1e-8)
    assert HeldRows.split(Y, np.ones(len(Y)), np.arange(len(Y)), n, b, 7.0, z, slack, np.full(len(Y), 9.0))[1] is None


@pytest.mark.parametrize("seed", range(3))
def test_no_held_row_is_pressed_within_reach(seed):
    Y, _, z, _, _, held = held_rows(seed)
    rng = np.random.default_rng(seed + 10)
    for _ in range(200):
        d = rng.standard_normal(z.shape)
        at = z + 0.999 * held.reach * d / np.linalg.norm(d)
        assert held.clear(at)
        slack = np.einsum("ij,ij->i", held.normal, Y[held.index] @ at.T) - held.b
        assert (slack > 0).all()
    assert not held.clear(z + 1.001 * held.reach * d / np.linalg.norm(d))


def test_take_admits_the_rows_pressed_at_the_iterate_and_recentres_the_rest():
    Y, n, z, b, _, held = held_rows()
    before = held.index.copy()
    far = z + 5.0 * np.random.default_rng(3).standard_normal(z.shape)
    J, bt, w = held.take(far)
    u = np.einsum("ij,ij->i", n[before], Y[before] @ far.T)
    pressed = before[u < b[before]]
    assert len(pressed) and set(pressed) <= set(before) - set(held.index)  # every pressed row left the hold
    assert J.shape == (len(bt), 3 * Y.shape[1]) and (w == 7.0).all()
    assert np.array_equal(held.centre, far) and held.clear(far)
    stay = np.einsum("ij,ij->i", held.normal, Y[held.index] @ far.T) - held.b
    assert (stay >= held.reach * np.linalg.norm(Y[held.index], axis=1) / (1 + 1e-6)).all()


def rows_both_ways(seed=0):
    """The same normal rows (and two friction rows) all given, and with the far ones held."""
    Y, scale, n, z, slack, b = samples(seed)
    i = np.arange(len(Y))
    rng = np.random.default_rng(seed)
    friction = (stacked_rows(Y, np.array([0, 0]), rng.standard_normal((2, 3))), rng.standard_normal(2), np.ones(2))

    def rows(J, b_, held=None):
        one = np.ones(len(b_), dtype=bool)
        return ContactRows(
            np.concatenate([J, friction[0]]),
            np.concatenate([b_, friction[1]]),
            np.concatenate([np.full(len(b_), 50.0), friction[2]]),
            np.concatenate([one, np.zeros(2, dtype=bool)]),
            held,
        )

    enter, held = HeldRows.split(Y, scale, i, n, b, 50.0, z, slack, np.full(len(i), 0.5))
    every = rows(stacked_rows(Y, i, n), b)
    some = rows(stacked_rows(Y, i[enter], n[enter]), b[enter], held)
    B = rng.standard_normal((Y.shape[1],) * 2)
    return every, some, z, B @ B.T + np.eye(len(B))


@pytest.mark.parametrize("seed", range(4))
def test_held_rows_act_as_if_all_were_given(seed):
    every, some, z, H = rows_both_ways(seed)
    assert some.held is not None and len(some) < len(every)  # some rows start held
    rng = np.random.default_rng(seed + 20)
    for scale in (0.01, 1.0, 5.0):  # inside the ball, and far out of it (the held rows are then admitted)
        at = z + scale * rng.standard_normal(z.shape)
        assert np.isclose(some.energy(at), every.energy(at), rtol=1e-12)
        assert np.allclose(
            some.gradient(at), every.gradient(at), rtol=1e-12, atol=1e-12 * np.abs(every.gradient(at)).max()
        )
        z0 = z + scale * rng.standard_normal(z.shape)
        want = every.minimise(H, z0, z)
        assert np.allclose(some.minimise(H, z0, z), want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
