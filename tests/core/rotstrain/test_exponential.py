"""Padé and Taylor exponentials: coefficients, order of accuracy, derivatives."""

import numpy as np
import pytest

from core.rotstrain.coordinates import hat
from core.rotstrain.exponential import exp_accurate, exp_rational, exp_rodrigues, pade_coefficients


def random_skew(k, scale, seed=0):
    v = np.random.default_rng(seed).standard_normal((k, 3))
    return hat(scale * v / np.linalg.norm(v, axis=1, keepdims=True))


def test_pade_3_2_coefficients_are_moler_van_loans():
    P, Q = pade_coefficients(3, 2)
    assert np.allclose(P, [1.0, 3 / 5, 3 / 20, 1 / 60]) and np.allclose(Q, [1.0, 2 / 5, 1 / 20])
    P, Q = pade_coefficients(3, 0)
    assert np.allclose(P, [1.0, 1.0, 1 / 2, 1 / 6]) and np.allclose(Q, [1.0])


def test_accurate_exponential_matches_rodrigues_at_any_angle():
    for angle in (1e-9, 0.5, np.pi / 2, 3.0, 10.0):
        w = random_skew(8, angle)
        assert np.abs(exp_accurate(w)[0] - exp_rodrigues(w)).max() < 1e-11  # squarings add round-off


@pytest.mark.parametrize(("p", "q"), [(3, 0), (3, 2)])
def test_approximants_have_their_stated_order(p, q):
    """exp - Q^-1 P = O(angle^(p + q + 1)): halving the angle divides the error by about 2^(p + q + 1)."""
    errs = []
    for angle in (0.2, 0.1, 0.05):
        w = random_skew(6, angle, seed=3)
        errs.append(np.abs(exp_rational(w, None, p, q)[0] - exp_rodrigues(w)).max())
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all(np.abs(np.log2(ratios) - (p + q + 1)) < 0.2), ratios


def test_pade_beats_taylor_at_large_angles():
    w = random_skew(6, 1.2)
    ex = exp_rodrigues(w)
    taylor = np.abs(exp_rational(w, None, 3, 0)[0] - ex).max()
    pade = np.abs(exp_rational(w, None, 3, 2)[0] - ex).max()
    assert pade < taylor / 10


@pytest.mark.parametrize(("p", "q", "s"), [(3, 0, 0), (3, 2, 0), (3, 2, 4)])
def test_directional_derivatives_match_finite_differences(p, q, s):
    w = random_skew(5, 1.3, seed=1)
    dW = np.stack([random_skew(5, 1.0, seed=k) for k in (7, 8)])
    _, dE = exp_rational(w, dW, p, q, s)
    assert dE is not None
    h = 1e-6
    for k in range(2):
        fd = (exp_rational(w + h * dW[k], None, p, q, s)[0] - exp_rational(w - h * dW[k], None, p, q, s)[0]) / (2 * h)
        assert np.abs(fd - dE[k]).max() < 1e-8
