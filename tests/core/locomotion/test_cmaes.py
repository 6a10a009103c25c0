"""The small CMA-ES (core/locomotion/cmaes.py)."""

import numpy as np

from core.locomotion.cmaes import minimize


def _rosenbrock(x):
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))


def test_it_minimises_an_ill_conditioned_function():
    ellipsoid = 10.0 ** np.linspace(0, 3, 6)
    res = minimize(lambda x: float(ellipsoid @ (x - 1.0) ** 2), np.zeros(6), 1.0, 300, seed=3)
    assert res.value < 1e-8
    np.testing.assert_allclose(res.x, 1.0, atol=1e-4)
    assert np.all(np.diff(res.history) <= 0)


def test_it_solves_rosenbrock():
    res = minimize(_rosenbrock, np.zeros(4), 0.5, 400, seed=0)
    assert res.value < 1e-6


def test_the_same_seed_gives_the_same_search_bit_for_bit():
    a = minimize(_rosenbrock, np.zeros(5), 0.5, 30, population=8, seed=7)
    b = minimize(_rosenbrock, np.zeros(5), 0.5, 30, population=8, seed=7)
    c = minimize(_rosenbrock, np.zeros(5), 0.5, 30, population=8, seed=8)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.history, b.history)
    assert not np.array_equal(a.x, c.x)
    assert a.evaluations == 240


def test_the_elite_holds_the_best_samples_seen_best_first():
    one = minimize(_rosenbrock, np.zeros(5), 0.5, 10, population=8, seed=7)
    four = minimize(_rosenbrock, np.zeros(5), 0.5, 10, population=8, seed=7, keep=4)
    np.testing.assert_array_equal(one.x, four.x)  # keeping more changes nothing else
    assert four.elite.shape == (4, 5) and np.all(np.diff(four.elite_values) >= 0.0)
    np.testing.assert_array_equal(four.elite[0], four.x)
    assert [_rosenbrock(x) for x in four.elite] == list(four.elite_values)
