"""The actuated local-global step (core/locomotion/step.py)."""

import dataclasses

import numpy as np
import pytest

from core.contact.ground import GroundPlane
from core.errors import SimulationError
from core.locomotion.step import (
    Stepper,
    StepSettings,
    body_rotation,
    linear_momentum,
    rest_state,
)
from core.locomotion.subspace import rest_coordinates
from core.model.fem import lumped_mass
from core.validation.scenes import random_rotation

NO_GRAVITY = StepSettings(gravity=(0.0, 0.0, 0.0))


def _abar(model, a):
    return np.r_[a, 1.0]


def _gait(model, k, amplitude=0.1, period=40):
    return _abar(model, amplitude * np.sin(2 * np.pi * k / period + np.arange(model.m)))


def _actuation_gradient(stepper, Z, abar):
    """dE_a/dZ (q, 3) at the optimal rotations: A_gamma Z - sum_c (K[c] abar) Omega_c^T."""
    m = stepper.model
    Ka = m.K @ abar
    Om = stepper.energy(Z, Z, Ka, abar)[1][1]
    return m.A_gamma @ Z - np.einsum("cuk,cik->ui", Ka, Om)


def test_rest_is_a_fixed_point_with_zero_actuation(slug):
    _, _, model = slug
    stepper = Stepper(model, NO_GRAVITY)
    state, report = stepper.step(rest_state(model), _abar(model, np.zeros(model.m)))
    assert report.converged and not report.energy_rose
    assert np.abs(state.Z - model.rest).max() < 1e-9 * np.abs(model.rest).max()
    abar = _abar(model, np.zeros(model.m))
    E, _ = stepper.energy(model.rest, model.rest, model.K @ abar, abar)
    assert abs(E) < 1e-9 * model.passive_constant


def test_actuation_rotations_are_proper(slug_clusters):
    _, _, model = slug_clusters
    stepper = Stepper(model, NO_GRAVITY)
    rng = np.random.default_rng(0)
    Z = model.rest + 0.2 * rng.standard_normal(model.rest.shape)
    abar = _abar(model, rng.standard_normal(model.m))
    R, Om = stepper.energy(Z, Z, model.K @ abar, abar)[1]
    for Q in (R, Om):
        np.testing.assert_allclose(Q @ Q.transpose(0, 2, 1), np.broadcast_to(np.eye(3), Q.shape), atol=1e-12)
        np.testing.assert_allclose(np.linalg.det(Q), 1.0, atol=1e-12)
    # a reflected configuration still gets det +1 (the determinant fix)
    Zm = Z * np.array([1.0, 1.0, -1.0])
    Om = stepper.energy(Zm, Zm, model.K @ abar, abar)[1][1]
    np.testing.assert_allclose(np.linalg.det(Om), 1.0, atol=1e-12)


def test_actuation_adds_no_net_force_or_torque(slug_clusters):
    """The actuation gradient is orthogonal to every rigid motion of the current shape."""
    mesh, mat, model = slug_clusters
    stepper = Stepper(model, NO_GRAVITY)
    rng = np.random.default_rng(1)
    Z = model.rest + 0.1 * rng.standard_normal(model.rest.shape)
    abar = _abar(model, 0.3 * rng.standard_normal(model.m))
    g = _actuation_gradient(stepper, Z, abar)
    masses = lumped_mass(mesh, mat.density)
    Y = model.subspace.basis
    x = Y @ Z
    scale = np.abs(g).max() * np.abs(Z).max()
    for t in np.eye(3):  # translations: Y T = 1 t^T
        T = rest_coordinates(Y, masses, np.broadcast_to(t, x.shape))
        assert abs(np.vdot(g, T)) < 1e-9 * scale
    for w in np.eye(3):  # rotations about the origin: Y W = w x x
        W = rest_coordinates(Y, masses, np.cross(w, x))
        assert abs(np.vdot(g, W)) < 1e-9 * scale
    # and the energy itself is invariant: E_a(Z R^T) = E_a(Z)
    R = random_rotation(rng)
    e1 = stepper.energy(Z, Z, model.K @ abar, abar)[0]
    e2 = stepper.energy(Z @ R.T, Z @ R.T, model.K @ abar, abar)[0]
    assert abs(e1 - e2) < 1e-9 * abs(e1)


def test_linear_momentum_stays_zero_without_ground_and_gravity(slug_clusters):
    _, _, model = slug_clusters
    stepper = Stepper(model, NO_GRAVITY)
    state = rest_state(model)
    moved = 0.0
    for k in range(60):
        state, report = stepper.step(state, _gait(model, k, amplitude=0.2))
        assert report.converged and not report.energy_rose
        p = linear_momentum(model, state, NO_GRAVITY.dt)
        assert np.linalg.norm(p) < 1e-9 * model.mass * model.radius / NO_GRAVITY.dt
        moved = max(moved, np.abs(state.Z - model.rest).max())
    assert moved > 1e-2 * np.abs(model.rest).max()  # it did change shape


def test_energy_never_increases_across_iterations(slug):
    """E after k iterations is non-increasing in k (each cap stops the same sequence earlier), free and on
    the ground (penalty and friction drag included: both are fixed convex terms within the step)."""
    _, _, model = slug
    ground = GroundPlane(height=-0.25)
    state = rest_state(model)
    base = StepSettings(tolerance=0.0, max_iterations=1)
    for k in range(20):  # get into a moving, contacting state
        state, _ = Stepper(model, StepSettings(), ground).step(state, _gait(model, k, amplitude=0.15))
    assert state.forces is not None and (state.forces > 0).any()
    abar = _gait(model, 20, amplitude=0.15)
    Zt = 2 * state.Z - state.Z_prev
    Ka = model.K @ abar
    for on_ground in (False, True):
        energies = []
        for cap in range(1, 15):
            s = Stepper(model, dataclasses.replace(base, max_iterations=cap), ground)
            c = s.contact.drag(state.Z, state.Z_prev, state.forces)
            system = s.contact.step(state.Z, c) if on_ground else s.free
            Z, *_ = s.solve(system, state.Z, Zt, Ka, abar)
            energies.append(s.energy(Z, Zt, Ka, abar)[0] + system.energy(Z))
        d = np.diff(energies)
        assert np.all(d <= 1e-11 * np.abs(energies).max()), (on_ground, d)


def test_caps_reach_the_same_answer(slug):
    """The answer is the physics, not the cap: caps 50 and 200 give the same trajectory."""
    _, _, model = slug
    ground = GroundPlane(height=-0.25)
    finals = []
    for cap in (50, 200):
        stepper = Stepper(model, StepSettings(max_iterations=cap), ground)
        state = rest_state(model)
        for k in range(40):
            state, report = stepper.step(state, _gait(model, k))
            assert report.converged
        finals.append(state.Z)
    np.testing.assert_allclose(finals[0], finals[1], atol=1e-9)


def test_rest_on_the_ground_stays_at_rest(slug):
    """Zero actuation, gravity and ground: it settles (sags) and never travels on its own."""
    _, _, model = slug
    settings = StepSettings()
    stepper = Stepper(model, settings, GroundPlane(height=-0.25))
    state = rest_state(model)
    c0 = model.centre_of_mass(state.Z)
    for _ in range(120):
        state, report = stepper.step(state, _abar(model, np.zeros(model.m)))
        assert not report.energy_rose
    c = model.centre_of_mass(state.Z)
    assert np.linalg.norm((c - c0)[:2]) < 5e-3 * 2.0  # under half a percent of the 2 m length
    assert -0.05 < (c - c0)[2] <= 0.0  # a small sag, not a fall through the ground
    v = linear_momentum(model, state, settings.dt) / model.mass
    assert np.linalg.norm(v) < 1e-3  # m/s: at rest
    samples = model.Y_samples @ state.Z
    # the penalty's static sink: contact_depth radii if every sample carried the weight; here about a
    # third of them (the underside) do, unevenly, so a few times that, far under a millimetre
    sink = -0.25 - samples[:, 2].min()
    assert 0.0 < sink < 20 * settings.contact_depth * model.radius
    np.testing.assert_allclose(body_rotation(model, state.Z), np.eye(3), atol=1e-2)


def test_settings_are_checked():
    with pytest.raises(SimulationError):
        StepSettings(dt=0.0)
    with pytest.raises(SimulationError):
        StepSettings(max_iterations=0)
