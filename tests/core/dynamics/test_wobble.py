"""Scale-free controls (core/wobble.py): the wobble frequency is the frequency the flesh moves at.

Tolerances: the rest Hessian is checked against central differences of the
solver's own energy (truncation O(eps^2) of a quadratic-dominated function:
1e-5 relative: the energy's constant terms cancel to round-off, ~1e-16 of
sum mu / eps^2).  Frequencies measured from a simulated free vibration use a
time step 100x finer than the period, where backward Euler lengthens the
period by about (omega h)^2 / 3 < 0.2 %; 3 % leaves room for the cluster
rotations' nonlinearity at the small amplitude used.
"""

import numpy as np
import pytest

from core.dynamics.simulator import SimulationSettings, Simulator, uses_arap
from core.dynamics.wobble import (
    damping_coefficient,
    natural_frequencies,
    rest_hessian,
    scaled_frequency,
    stiffness_scale,
)
from core.model.materials import Material
from core.model.rig import rest_parameters
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import bar_scene


@pytest.fixture(scope="module")
def scene():
    return bar_scene(cells_per_unit=3, bones=3)


@pytest.fixture(scope="module", params=[0.0, 0.4], ids=["arap", "corotational"])
def model(request, scene):
    mat = Material.uniform(scene.mesh.t, 3e4, request.param, 1000.0)
    return build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)


def _free_vibration(sim, vector, steps):
    """Displacement along ``vector`` (12m,) of a free vibration started from 1e-4 * vector."""
    p = rest_parameters(3)
    state = sim.initial_state(p)
    z0 = 1e-4 * vector.reshape(state.z.shape)
    state = type(state)(z=z0, z_prev=z0, q=state.q, q_prev=state.q_prev)
    out = []
    for _ in range(steps):
        state, _ = sim.step(state, p)
        out.append(float(state.z.ravel() @ vector))
    return np.array(out)


def _frequency(signal, h):
    """Frequency (Hz) from the mean spacing of the upward zero crossings."""
    up = np.flatnonzero((signal[:-1] < 0) & (signal[1:] >= 0))
    # Linear interpolation of each crossing inside its step.
    times = (up + signal[up] / (signal[up] - signal[up + 1])) * h
    return 1.0 / np.mean(np.diff(times))


@pytest.mark.parametrize("hz", [1.5, 4.0])
def test_the_slowest_mode_vibrates_at_the_wobble_frequency(model, hz):
    arap = uses_arap("auto", model)
    omega0 = natural_frequencies(model, arap)[0]
    h = 1.0 / (100.0 * hz)
    sim = Simulator(
        model,
        SimulationSettings(
            time_step=h,
            stiffness_scale=stiffness_scale(omega0, hz),
            tolerance=0.0,
            max_iterations=30,
            rest_state="rest",
        ),
    )
    K = rest_hessian(model, arap)
    M = np.kron(model.A_M, np.eye(3))
    import scipy.linalg as sla

    w2, V = sla.eigh(K, 0.5 * (M + M.T))
    slowest = V[:, np.argmin(np.where(w2 > 1e-9 * w2.max(), w2, np.inf))]
    signal = _free_vibration(sim, slowest / np.linalg.norm(slowest), 500)
    assert abs(_frequency(signal, h) / hz - 1.0) <= 0.03


def test_damping_ratio_sets_the_decay_per_period(model):
    """Log decrement with zeta = 0.2 against zeta = 0 (which isolates backward Euler's own damping).

    The ratio of amplitudes after one period is exp(-2 pi zeta / sqrt(1 - zeta^2)) = 0.277; 5 %.
    """
    arap = uses_arap("auto", model)
    omega0 = natural_frequencies(model, arap)[0]
    hz = 2.0
    h = 1.0 / (100.0 * hz)
    kappa = stiffness_scale(omega0, hz)
    K = rest_hessian(model, arap)
    M = np.kron(model.A_M, np.eye(3))
    import scipy.linalg as sla

    w2, V = sla.eigh(K, 0.5 * (M + M.T))
    slowest = V[:, np.argmin(np.where(w2 > 1e-9 * w2.max(), w2, np.inf))]
    slowest /= np.linalg.norm(slowest)
    peaks = {}
    for zeta in (0.0, 0.2):
        c = damping_coefficient(hz, zeta)
        settings = SimulationSettings(time_step=h, stiffness_scale=kappa, damping=c, tolerance=0.0, max_iterations=30)
        sig = _free_vibration(Simulator(model, settings), slowest, 160)
        peaks[zeta] = (np.abs(sig[:60]).max(), np.abs(sig[100:160]).max())  # one period apart
    ratio = (peaks[0.2][1] / peaks[0.2][0]) / (peaks[0.0][1] / peaks[0.0][0])
    expected = np.exp(-2 * np.pi * 0.2 / np.sqrt(1 - 0.04))
    assert abs(ratio / expected - 1.0) <= 0.05, ratio


def test_same_wobble_at_any_modelling_scale_moves_the_same_relative_to_size(scene):
    """The bar at x0.01, x1 and x100, same wobble and damping: u / size agrees to 1e-7.

    Only round-off differs between the three problems (the eigensolver,
    clusters and products see uniformly scaled inputs); 1e-7 allows for its
    growth over 48 nonlinear steps.
    """
    results = []
    for s in (0.01, 1.0, 100.0):
        sc = bar_scene(length=4.0 * s, width=1.0 * s, cells_per_unit=3 / s, bones=3)
        mat = Material.uniform(sc.mesh.t, 3e4, 0.4, 1000.0)
        model = build_reduced_model(sc.mesh, mat, sc.rig, m=8, r=40)
        omega0 = natural_frequencies(model, False)[0]
        sim = Simulator(
            model,
            SimulationSettings(
                time_step=1 / 48, stiffness_scale=stiffness_scale(omega0, 3.0), damping=damping_coefficient(3.0, 0.1)
            ),
        )
        state = sim.initial_state(sc.parameters(0.0, amplitude=1.0, frequency=1.0))
        for k in range(1, 49):
            state, _ = sim.step(state, sc.parameters(k / 48, amplitude=1.0, frequency=1.0))
        results.append(sim.displacement(state) / sc.length)
    assert np.abs(results[1]).max() > 1e-3  # it does move
    for r in (results[0], results[2]):
        assert np.abs(r - results[1]).max() <= 1e-7


def test_bad_controls_are_refused_with_a_message():
    from core.errors import SimulationError

    with pytest.raises(SimulationError, match="wobble frequency"):
        stiffness_scale(10.0, 0.0)
    with pytest.raises(SimulationError, match="damping ratio"):
        damping_coefficient(3.0, float("nan"))


def _prony(signal, h):
    """(frequency Hz, damping ratio) of a damped oscillation sampled every h: the roots z of the
    least-squares recurrence a[k+1] = s a[k] - q a[k-1], lam = log(z) / h."""
    A = np.stack([signal[1:-1], -signal[:-2]], axis=1)
    s, q = np.linalg.lstsq(A, signal[2:], rcond=None)[0]
    lam = np.log(complex(np.roots([1.0, -s, q])[0])) / h
    return abs(lam) / (2.0 * np.pi), -lam.real / abs(lam)


@pytest.mark.parametrize("hz, zeta", [(3.0, 0.2), (1.5, 0.3)])
def test_the_stepped_motion_has_the_requested_frequency_and_damping_at_film_rate(model, hz, zeta):
    """At the product's time step (1/48 s), where backward Euler alone gives 2.81 Hz and zeta 0.37 for
    a request of 3 Hz and 0.2, the compensated controls meet both within 5 % (issue 23), measured from
    a small free decay of the slowest mode (amplitude 1e-4: linear to well below 1 %)."""
    from core.dynamics.wobble import implicit_euler_controls

    arap = uses_arap("auto", model)
    h = 1.0 / 48.0
    kappa, c, reached = implicit_euler_controls(natural_frequencies(model, arap)[0], hz, zeta, h)
    assert reached == zeta
    # Converged to round-off: at this amplitude any tolerance of the size would be a visible share of it.
    settings = SimulationSettings(time_step=h, stiffness_scale=kappa, damping=c, tolerance=0.0, max_iterations=50)
    K = rest_hessian(model, arap)
    M = np.kron(model.A_M, np.eye(3))
    import scipy.linalg as sla

    w2, V = sla.eigh(K, 0.5 * (M + M.T))
    slowest = V[:, np.argmin(np.where(w2 > 1e-9 * w2.max(), w2, np.inf))]
    slowest /= np.linalg.norm(slowest)
    f, z = _prony(_free_vibration(Simulator(model, settings), slowest, 96), h)
    assert abs(f / hz - 1.0) <= 0.05 and abs(z / zeta - 1.0) <= 0.05, (f, z)


def test_damping_below_backward_eulers_own_is_reported_not_met():
    """zeta = 0 cannot be stepped with backward Euler: c = 0 and the damping that results is returned."""
    from core.dynamics.wobble import implicit_euler_controls

    kappa, c, reached = implicit_euler_controls(10.0, 3.0, 0.0, 1.0 / 48.0)
    assert c == 0.0 and 0.1 < reached < 0.3 and kappa > 0


def test_scaled_frequency_undoes_the_stiffness_scale_in_the_bakes_order():
    """omega0 sqrt(kappa) is the frequency kappa was chosen for (to round-off), and ``times`` enters
    before the root's factor, bit for bit as the damping 2 zeta omega0 sqrt(kappa) was written."""
    omega0, hz, zeta = 7.3, 3.0, 0.2
    kappa = stiffness_scale(omega0, hz)
    assert scaled_frequency(omega0, kappa) / (2 * np.pi) == pytest.approx(hz, rel=1e-14)
    assert scaled_frequency(omega0, kappa, 2.0 * zeta) == 2.0 * zeta * omega0 * float(np.sqrt(kappa))
