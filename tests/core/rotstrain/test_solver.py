"""The clamped RS solver: configuration-dependent mass, descent, scale-free stop, energy, equivariance."""

from functools import cache

import numpy as np

from core.rotstrain.energy import reduced_forces, rs_stiffness
from core.rotstrain.solver import RSSimulator, RSState
from core.rotstrain.transfer import RSMap
from core.validation.scenes import random_rotation

from .bars import Bar, bar, make_bar

H = 1.0 / 60.0
GRAVITY = np.array([0.0, -9.81, 0.0])


def simulator(b: Bar, gravity=GRAVITY, method="pade", **kw) -> RSSimulator:
    K = rs_stiffness(b.mesh, b.material, b.S)
    f = reduced_forces(b.fit.B, b.masses, gravity)
    return RSSimulator(RSMap(b.W, b.S, b.fit, method), K, H, b.masses.sum(), b.mesh.size(), f, **kw)


@cache
def hanging(steps: int = 30, modes: int = 4):
    """A clamped bar falling under 3 g: its tip swings through large rotations."""
    sim = simulator(bar(modes), 3.0 * GRAVITY)
    s, reports = sim.rest_state(), []
    for _ in range(steps):
        s, r = sim.step(s)
        reports.append(r)
    return sim, s, reports


def test_configuration_dependent_mass_matches_finite_differences_of_the_kinetic_energy():
    """(1/2) qdot^T M~(q) qdot is the kinetic energy of xdot = d/dt x(q(t))."""
    b = bar(3)
    sim = simulator(b)
    q = np.array([1.0, -0.7, 0.4]) / np.abs(b.W).max()
    qdot = np.array([0.3, 0.2, -0.5]) / np.abs(b.W).max()
    d = 1e-6
    xdot = (sim.map.positions(q + d * qdot) - sim.map.positions(q - d * qdot)) / (2 * d)
    assert np.isclose(0.5 * qdot @ sim.mass_matrix(q) @ qdot, 0.5 * xdot @ xdot, rtol=1e-8)
    # and it is not constant: that is the nonlinearity the method keeps
    M0 = sim.mass_matrix(np.zeros(3))
    assert np.abs(sim.mass_matrix(q) - M0).max() > 1e-2 * np.abs(M0).max()


def test_the_rest_state_stays_at_rest_without_forces():
    sim = simulator(bar(3), np.zeros(3))
    s, report = sim.step(sim.rest_state())
    assert np.abs(s.q).max() == 0.0 and report.converged


def test_every_newton_iteration_lowers_the_incremental_potential_and_stops_on_the_tolerance():
    _, s, reports = hanging()
    tip = bar(4).fit.displacements(s.x)
    assert tip[:, 1].min() < -0.5  # large deflection of the 2 m bar: tet rotations of tens of degrees
    for r in reports:
        assert r.converged
        assert np.all(np.diff(r.energies) <= 1e-12 * abs(r.energies[0]))


def test_the_answer_does_not_depend_on_the_iteration_cap():
    b = bar(4)
    ends = []
    for cap in (10, 50, 200):
        sim = simulator(b, 3.0 * GRAVITY, max_iterations=cap)
        s = sim.rest_state()
        for _ in range(20):
            s, _ = sim.step(s)
        ends.append(b.fit.displacements(s.x))
    assert np.abs(ends[0] - ends[2]).max() < 1e-7 * b.mesh.size()
    assert np.abs(ends[1] - ends[2]).max() < 1e-7 * b.mesh.size()


def test_energy_only_decays_without_forcing():
    """Released from a bent pose, no gravity: kinetic + elastic energy never grows (backward Euler damps)."""
    b = bar(4)
    sim = simulator(b, np.zeros(3), damping=0.0)
    q0 = np.array([1.2, 0.8, 0.0, 0.0]) / np.abs(b.W).max()
    x0 = sim.map.positions(q0)
    s = RSState(q=q0, x=x0, x_prev=x0)
    totals = []
    for _ in range(40):
        s, r = sim.step(s)
        assert r.converged
        totals.append(sim.kinetic_energy(s) + sim.potential_energy(s))
    assert np.all(np.diff(totals) <= 1e-9 * totals[0])
    assert totals[-1] < totals[0]


def test_pade_tracks_the_exact_exponential_better_than_taylor():
    """The seed's Fig. 6 / 11 point: at large tet rotations the rational approximant is the safer one."""
    b = bar(4)
    ends = {}
    for method in ("exact", "pade", "taylor"):
        sim = simulator(b, 3.0 * GRAVITY, method=method)
        s = sim.rest_state()
        for _ in range(30):
            s, _ = sim.step(s)
        ends[method] = b.fit.displacements(s.x)
    err = {k: np.abs(ends[k] - ends["exact"]).max() / b.mesh.size() for k in ("pade", "taylor")}
    assert err["pade"] < 0.01 and err["pade"] < err["taylor"], err


def test_rotating_the_whole_problem_rotates_the_result():
    """Rest shape, modes and gravity turned by a random R: the same RS trajectory, displacements turned by R."""
    R = random_rotation(np.random.default_rng(5))
    b = bar(3)
    rb = make_bar(3, fixed=True, X=b.mesh.X @ R.T, U=b.U @ R.T)
    sims = [simulator(b, 3.0 * GRAVITY), simulator(rb, 3.0 * GRAVITY @ R.T)]
    states = [s.rest_state() for s in sims]
    for _ in range(10):
        states = [sim.step(s)[0] for sim, s in zip(sims, states)]
    u = b.fit.displacements(states[0].x)
    ur = rb.fit.displacements(states[1].x)
    # equal up to where Newton stopped (1e-9 of the size per step), not to round-off
    assert np.abs(ur - u @ R.T).max() < 1e-7 * np.abs(u).max()
    assert np.abs(states[0].q - states[1].q).max() < 1e-7 * np.abs(states[0].q).max()


def test_the_same_bar_in_centimetres_moves_the_same_with_the_same_iterations():
    """A change of units (lengths x 100, so E / 100, density / 1e6, g x 100) changes nothing but the numbers:
    the stop is relative to the object's size, so Newton takes the same iterations.  Up to one per step: a
    step whose residual lands within round-off of the stop may take one more in either unit (measured with
    one BLAS thread on this 2-core machine: 6 against 5 at step 15, the same everywhere else)."""
    b = bar(3)
    cm = make_bar(3, True, X=100.0 * b.mesh.X, youngs_modulus=1e3, density=1e-3)
    runs = []
    for bb, g in ((b, 3.0 * GRAVITY), (cm, 300.0 * GRAVITY)):
        sim = simulator(bb, g)
        s, its = sim.rest_state(), []
        for _ in range(15):
            s, r = sim.step(s)
            its.append(r.iterations)
        runs.append((bb.fit.displacements(s.x), its))
    assert np.abs(runs[1][0] / 100.0 - runs[0][0]).max() < 1e-7 * np.abs(runs[0][0]).max()
    its_m, its_cm = np.array(runs[0][1]), np.array(runs[1][1])
    assert np.abs(its_m - its_cm).max() <= 1 and np.count_nonzero(its_m != its_cm) <= 2
