"""The floating frame: momentum of a free object, free fall, rotation of the whole problem."""

import numpy as np

from core.rotstrain.energy import rs_stiffness
from core.rotstrain.frame import FloatingRSSimulator
from core.rotstrain.transfer import RSMap
from core.validation.scenes import random_rotation

from .bars import bar, make_bar


def simulator(b, h=1.0 / 60.0, gravity=None) -> FloatingRSSimulator:
    K = rs_stiffness(b.mesh, b.material, b.S)
    return FloatingRSSimulator(RSMap(b.W, b.S, b.fit, "pade"), K, b.mesh.X, b.masses, h, gravity)


SPIN = (0.0, 0.0, 4.0)  # rad/s about z
DRIFT = (0.5, 0.0, 0.1)  # m/s


def spinning(sim, spin=SPIN, drift=DRIFT):
    spin, drift = np.asarray(spin), np.asarray(drift)
    s0 = sim.rest_state()
    return sim.state(s0.q, s0.R, s0.t, np.cross(spin, s0.p - sim.center) + drift)


def test_a_free_object_keeps_its_linear_momentum_and_loses_angular_momentum_only_to_backward_euler():
    """No forces: linear momentum to round-off; angular momentum decays at first order in h (the integrator's
    numerical damping; the centrifugal stretch it drives is captured by the frame's coupled mass)."""
    b = bar(4, fixed=False)
    losses = []
    for h in (1 / 60, 1 / 120):
        sim = simulator(b, h)
        s = spinning(sim)
        P0, L0 = sim.momentum(s)
        for _ in range(round(0.25 / h)):
            s, r = sim.step(s)
            assert r.converged and np.all(np.diff(r.energies) <= 1e-12 * abs(r.energies[0]))
        P, L = sim.momentum(s)
        assert np.abs(P - P0).max() < 1e-10 * np.linalg.norm(P0)
        losses.append(np.linalg.norm(L - L0) / np.linalg.norm(L0))
    assert losses[0] < 0.1
    assert 1.7 < losses[0] / losses[1] < 2.3, losses
    assert np.abs(s.q).max() > 0  # the spin stretches the bar


def test_uniform_gravity_only_moves_a_free_object_it_does_not_bend_it():
    b = bar(3, fixed=False)
    g = np.array([0.0, 0.0, -9.81])
    sim = simulator(b, gravity=g)
    s = sim.rest_state()
    centers = [s.t.copy()]
    for _ in range(10):
        s, _ = sim.step(s)
        centers.append(s.t.copy())
    assert np.abs(s.q).max() < 1e-12
    # the centre of mass follows backward Euler's free fall exactly: c'' = g
    c = np.array(centers)
    assert np.allclose(c[2:] - 2 * c[1:-1] + c[:-2], sim.h**2 * g, atol=1e-12)


def test_rotating_the_whole_problem_rotates_the_flight():
    R = random_rotation(np.random.default_rng(2))
    b = bar(3, fixed=False)
    rb = make_bar(3, fixed=False, X=b.mesh.X @ R.T, U=b.U @ R.T)
    sims = [simulator(b), simulator(rb)]
    states = [spinning(sims[0]), spinning(sims[1], spin=R @ SPIN, drift=R @ DRIFT)]
    for _ in range(8):
        states = [sim.step(s)[0] for sim, s in zip(sims, states)]
    assert np.abs(states[1].p - states[0].p @ R.T).max() < 1e-8 * b.mesh.size()
