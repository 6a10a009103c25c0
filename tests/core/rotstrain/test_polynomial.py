"""The precomputed Taylor polynomial is the per-tet Taylor map, to round-off."""

import numpy as np

from core.rotstrain.energy import reduced_forces, rs_stiffness
from core.rotstrain.polynomial import PadePolynomialMap, PolynomialMap
from core.rotstrain.solver import RSSimulator
from core.rotstrain.transfer import RSMap

from .bars import bar


def test_polynomial_map_equals_the_per_tet_taylor_map():
    b = bar(4)
    poly, per_tet = PolynomialMap(b.W, b.S, b.fit), RSMap(b.W, b.S, b.fit, "taylor")
    for q in (np.array([1.0, -0.5, 0.3, 0.2]), np.array([-2.0, 0.1, 0.0, 1.0])):
        q = q / np.abs(b.W).max()
        (x1, J1), (x2, J2) = poly.evaluate(q), per_tet.evaluate(q)
        assert np.abs(x1 - x2).max() < 1e-12 * np.abs(x2).max()
        assert np.abs(J1 - J2).max() < 1e-12 * np.abs(J2).max()


def test_the_solver_runs_the_same_on_either_map():
    b = bar(3)
    K = rs_stiffness(b.mesh, b.material, b.S)
    f = reduced_forces(b.fit.B, b.masses, np.array([0.0, -9.81, 0.0]))
    ends = []
    for m in (PolynomialMap(b.W, b.S, b.fit), RSMap(b.W, b.S, b.fit, "taylor")):
        sim = RSSimulator(m, K, 1.0 / 60.0, b.masses.sum(), b.mesh.size(), f)
        s = sim.rest_state()
        for _ in range(10):
            s, _ = sim.step(s)
        ends.append(s.x)
    assert np.abs(ends[0] - ends[1]).max() < 1e-9 * np.abs(ends[1]).max()


def test_precomputed_pade_starts_linear_and_has_the_jacobian_of_its_positions():
    b = bar(4)
    pade = PadePolynomialMap.build(b.W, b.S, b.fit, b.mesh)
    x0, J0 = pade.evaluate(np.zeros(4))
    assert np.abs(x0).max() == 0.0
    assert np.abs(J0 - RSMap(b.W, b.S, b.fit, "exact").evaluate(np.zeros(4))[1]).max() < 1e-12 * np.abs(J0).max()
    q = 0.8 * np.array([1.0, -0.5, 0.3, 0.2]) / np.abs(b.W).max()
    _, J = pade.evaluate(q)
    h = 1e-6
    fd = np.stack([(pade.positions(q + h * e) - pade.positions(q - h * e)) / (2 * h) for e in np.eye(4)], axis=1)
    assert np.abs(fd - J).max() < 1e-7 * np.abs(J).max()


def test_precomputed_pade_beats_taylor_at_large_rotations():
    """Measured at tet rotations around 1.5 rad: 4e-4 against Taylor's 2e-3 (relative to the largest x)."""
    b = bar(4)
    q = 1.5 * np.array([1.0, -0.5, 0.3, 0.2]) / np.abs(b.W).max()
    exact = RSMap(b.W, b.S, b.fit, "exact").positions(q)
    pade = np.abs(PadePolynomialMap.build(b.W, b.S, b.fit, b.mesh).positions(q) - exact).max()
    taylor = np.abs(PolynomialMap(b.W, b.S, b.fit).positions(q) - exact).max()
    assert pade < taylor / 3 and pade < 1e-3 * np.abs(exact).max(), (pade, taylor)
