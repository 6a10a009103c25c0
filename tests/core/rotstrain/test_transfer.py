"""The RS-to-Euclidean map: its linear limit, its Jacobian, and its exponentials."""

import numpy as np
import pytest

from core.rotstrain.transfer import RSMap

from .bars import bar


@pytest.mark.parametrize("fixed", [True, False])
def test_linear_limit_is_the_linear_modes(fixed):
    """u(delta e_i) / delta -> U_i: the RS simulator starts where linear modal analysis does."""
    b = bar(3, fixed)
    m = RSMap(b.W, b.S, b.fit, "exact")
    _, J = m.evaluate(np.zeros(3))
    assert np.abs(np.einsum("mk,mai->kai", J, b.fit.B) - b.U).max() < 1e-10 * np.abs(b.U).max()
    delta = 1e-5
    u = b.fit.displacements(m.positions(delta * np.eye(3)[1]))
    assert np.abs(u / delta - b.U[1]).max() < 1e-4 * np.abs(b.U[1]).max()


@pytest.mark.parametrize("method", ["pade", "taylor", "exact"])
def test_jacobian_matches_finite_differences(method):
    b = bar(3)
    m = RSMap(b.W, b.S, b.fit, method)
    q = np.array([0.8, -0.5, 0.3]) / np.abs(b.W).max()  # tet rotations up to about a radian
    x, J = m.evaluate(q)
    assert np.allclose(x, m.positions(q))
    h = 1e-6
    fd = np.stack([(m.positions(q + h * e) - m.positions(q - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    assert np.abs(fd - J).max() < 1e-7 * np.abs(J).max()


def test_pade_is_closer_to_the_exact_map_than_taylor_at_large_rotations():
    b = bar(3)
    q = np.array([1.0, 0.0, 0.0]) * 1.2 / np.abs(b.W[0]).max()
    exact = RSMap(b.W, b.S, b.fit, "exact").positions(q)
    err = {k: np.abs(RSMap(b.W, b.S, b.fit, k).positions(q) - exact).max() for k in ("pade", "taylor")}
    assert err["pade"] < err["taylor"] / 10, err
