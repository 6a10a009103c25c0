"""The precomputed Taylor polynomial is the per-tet Taylor map, to round-off."""

import numpy as np

from core.rotstrain.energy import reduced_forces, rs_stiffness
from core.rotstrain.polynomial import PolynomialMap
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
