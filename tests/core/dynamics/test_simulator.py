"""The reduced solver, proven by invariants (core/simulator.py).

Tolerances: quantities that are exactly zero or exactly equal in exact
arithmetic are checked against round-off, scaled by the size of the
quantities involved (1e-9 .. 1e-12 relative); the rotation test allows 1e-8
relative over 100 steps because every step re-solves a 3x3 polar problem per
cluster and the errors of 100 nonlinear steps accumulate.
"""

import numpy as np
import pytest

from core.dynamics.simulator import SimulationSettings, Simulator
from core.errors import SimulationError
from core.geometry.tetmesh import TetMesh
from core.model.constraint import complementarity_matrix
from core.model.materials import Material
from core.model.rig import LBSRig, rig_parameters
from core.subspace.reduced import assemble_model, build_reduced_model
from core.validation.scenes import bar_scene, random_rotation, rotated_transforms

H = 1.0 / 48.0


@pytest.fixture(scope="module")
def scene():
    return bar_scene(cells_per_unit=3, bones=3)


@pytest.fixture(scope="module", params=[0.0, 0.35], ids=["arap", "corotational"])
def model(request, scene):
    mat = Material.uniform(scene.mesh.t, 5e4, request.param, 1000.0)
    return build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)


def simulate(sim, scene, steps, amplitude=1.2, spin=0.0, rotate=None, **kw):
    """Run the bending animation; returns the list of u (n, 3)."""

    def pose(t):
        A = scene.transforms(t, amplitude=amplitude, frequency=1.5, spin=spin)
        if rotate is not None:
            A = rotated_transforms(A, rotate)  # x' = R x  for rest X' = R X
        return rig_parameters(A)

    state = sim.initial_state(pose(0.0))
    out = []
    for k in range(1, steps + 1):
        state, _ = sim.step(state, pose(k * H), **kw)
        out.append(sim.displacement(state))
    return out


def test_rest_stays_at_rest(model, scene):
    sim = Simulator(model, SimulationSettings(time_step=H))
    p = rig_parameters(np.tile(np.eye(4)[:3], (3, 1, 1)))
    state = sim.initial_state(p)
    for _ in range(20):
        state, _ = sim.step(state, p)
    assert np.abs(sim.displacement(state)).max() <= 1e-12 * scene.length


def test_galilean_invariance(model, scene):
    """A rig translating at constant velocity (already moving at t=0) makes no secondary motion."""
    sim = Simulator(model, SimulationSettings(time_step=H))
    v = np.array([3.0, -1.0, 2.0])

    def pose(t):
        A = np.tile(np.eye(4)[:3], (3, 1, 1))
        A[:, :, 3] = v * t
        return rig_parameters(A)

    state = sim.initial_state(pose(0.0), p_prev=pose(-H))
    for k in range(1, 41):
        state, _ = sim.step(state, pose(k * H))
    motion = np.linalg.norm(v) * 40 * H
    assert np.abs(sim.displacement(state)).max() <= 1e-9 * motion


@pytest.mark.parametrize(
    "solver",
    [
        {"max_iterations": 15, "tolerance": 0.0, "rest_state": "rest"},
        {"max_iterations": 15, "tolerance": 0.0, "rest_state": "pose"},
        {},
    ],
    ids=["fixed-iterations-rest", "fixed-iterations-pose", "defaults"],
)
def test_rotation_equivariance(model, scene, solver):
    """Rotate rest mesh and rig trajectory by R: the secondary motion rotates by R (1e-8, 100 steps).

    "defaults" stops on the tolerance: the stopping test measures the
    character by its largest distance from the centroid, which does not
    change under rotation, so the iteration counts and the result do not
    either.

    The rig spins the bar by up to 90 degrees while bending each joint by up
    to 60 degrees.  (Much wilder motion, a bar folding onto itself, is
    chaotic: round-off then grows exponentially in any implementation, and
    no fixed tolerance can hold over 100 steps.)
    """
    R = random_rotation(np.random.default_rng(11))
    mesh_r = TetMesh.from_arrays(scene.mesh.X @ R.T, scene.mesh.T)
    mat = Material(mu=model.mu, lam=model.lam, density=np.full(mesh_r.t, 1000.0))
    rotated = assemble_model(
        mesh_r, mat, model.masses, model.leak, LBSRig(scene.rig.weights), model.weights, model.eigenvalues, model.labels
    )
    settings = SimulationSettings(time_step=H, **solver)
    u = simulate(Simulator(model, settings), scene, 100, amplitude=2.0, spin=np.pi / 2)
    u_r = simulate(Simulator(rotated, settings), scene, 100, amplitude=2.0, spin=np.pi / 2, rotate=R)
    scale = max(np.abs(a).max() for a in u)
    assert scale > 0.05 * scene.length  # large secondary motion, not a trivial test
    err = max(np.abs(b - a @ R.T).max() for a, b in zip(u, u_r))
    assert err <= 1e-8 * scale


def test_complementarity_every_step(model, scene):
    sim = Simulator(model, SimulationSettings(time_step=H))
    Jc = complementarity_matrix(scene.rig.jacobian(scene.mesh.X), model.masses, model.leak)
    norm_J = np.sqrt(Jc.multiply(Jc).sum())
    for u in simulate(sim, scene, 30):
        assert np.linalg.norm(Jc.T @ u.ravel()) <= 1e-9 * norm_J * np.linalg.norm(u)


def test_energy_never_increases_within_a_step(model, scene):
    """ARAP local and global steps, and the co-rotational line search, only decrease the energy."""
    sim = Simulator(model, SimulationSettings(time_step=H, max_iterations=25, tolerance=0.0))
    state = sim.initial_state(scene.parameters(0.0, amplitude=2.0))
    for k in range(1, 16):
        energies: list[float] = []
        state, _ = sim.step(state, scene.parameters(k * H, amplitude=2.0), record=energies)
        e = np.array(energies)
        # Round-off of an energy of this size: a few ulps of the largest term.
        assert np.all(np.diff(e) <= 1e-10 * np.abs(e).max()), np.diff(e).max()


def test_backward_euler_dissipates_a_free_vibration(model, scene):
    sim = Simulator(model, SimulationSettings(time_step=H, max_iterations=50, tolerance=1e-12))
    p = rig_parameters(np.tile(np.eye(4)[:3], (3, 1, 1)))
    state = sim.initial_state(p)
    z0 = 0.02 * np.random.default_rng(3).standard_normal(state.z.shape)
    state = type(state)(z=z0, z_prev=z0, q=state.q, q_prev=state.q_prev)
    total = [sim.elastic_energy(state.z, p)]
    for _ in range(40):
        state, _ = sim.step(state, p)
        total.append(sim.elastic_energy(state.z, p) + sim.kinetic_energy(state))
    assert total[0] > 0
    assert np.all(np.diff(total) <= 1e-9 * total[0])
    assert total[-1] < 0.9 * total[0]


def test_identical_inputs_give_bit_identical_outputs(model, scene):
    a = simulate(Simulator(model, SimulationSettings(time_step=H)), scene, 20)
    b = simulate(Simulator(model, SimulationSettings(time_step=H)), scene, 20)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_film_rate_time_step_is_stable_with_stiff_material(scene):
    mat = Material.uniform(scene.mesh.t, 1e6, 0.4, 1000.0)
    model = build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)
    sim = Simulator(model, SimulationSettings(time_step=1 / 24))
    state = sim.initial_state(scene.parameters(0.0, amplitude=3.0, frequency=2.0))
    for k in range(1, 73):
        state, rep = sim.step(state, scene.parameters(k / 24, amplitude=3.0, frequency=2.0))
        assert np.isfinite(state.z).all() and np.isfinite(rep.energy)
    assert np.abs(sim.displacement(state)).max() < scene.length


def test_injected_nan_raises_a_clear_error_naming_the_frame(model, scene):
    sim = Simulator(model, SimulationSettings(time_step=H))
    state = sim.initial_state(scene.parameters(0.0))
    p = scene.parameters(H)
    p[5] = np.nan
    with pytest.raises(SimulationError, match=r"frame 12: .*NaN") as err:
        sim.step(state, p, frame=12)
    assert "\n" not in str(err.value)
    bad = state.copy()
    object.__setattr__(bad, "z", np.full_like(state.z, np.nan))
    with pytest.raises(SimulationError, match="frame 3"):
        sim.step(bad, scene.parameters(H), frame=3)


def test_rig_positions_path_matches_the_lbs_path(model, scene):
    """Driving with x_rig = J p gives the same trajectory as driving with p."""
    sim = Simulator(model, SimulationSettings(time_step=H))
    sp_ = sim.initial_state(scene.parameters(0.0))
    sx = sim.initial_state(x_rig=scene.positions(0.0))
    for k in range(1, 21):
        sp_, _ = sim.step(sp_, scene.parameters(k * H))
        sx, _ = sim.step(sx, x_rig=scene.positions(k * H))
    u = sim.displacement(sp_)
    assert np.abs(sim.displacement(sx) - u).max() <= 1e-9 * np.abs(u).max()


def test_state_can_be_saved_and_restored(model, scene):
    sim = Simulator(model, SimulationSettings(time_step=H))
    state = sim.initial_state(scene.parameters(0.0))
    saved = None
    for k in range(1, 11):
        state, _ = sim.step(state, scene.parameters(k * H))
        if k == 5:
            saved = state.copy()
    again = saved
    for k in range(6, 11):
        again, _ = sim.step(again, scene.parameters(k * H))
    assert np.array_equal(again.z, state.z)


def test_a_squashed_pose_is_a_stable_equilibrium(scene):
    """The rig squashes the bar to 60 % and holds: a small push dies out instead of buckling away.

    With "pose" the volume term is measured from the squashed pose itself, so
    its curvature there is positive; the push (1e-3 of the length) must decay
    below a tenth of itself in two seconds with damping ratio 0.3.
    """
    mat = Material.uniform(scene.mesh.t, 5e4, 0.45, 1000.0)
    model = build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    A[:, :, :3] *= 0.6
    p = rig_parameters(A)
    sim = Simulator(model, SimulationSettings(time_step=H, damping=2 * 0.3 * 2 * np.pi * 2.0))
    state = sim.initial_state(p)
    z0 = 1e-3 * scene.length * np.random.default_rng(5).standard_normal(state.z.shape) / np.sqrt(state.z.size)
    state = type(state)(z=z0, z_prev=z0, q=state.q, q_prev=state.q_prev)
    start = np.abs(sim.displacement(state)).max()
    for _ in range(96):
        state, _ = sim.step(state, p)
    assert np.abs(sim.displacement(state)).max() <= 0.1 * start


def test_the_product_and_the_solver_share_one_set_of_defaults():
    """The pipeline's SolverSettings maps onto exactly the solver's defaults (exact equality: no restated numbers)."""
    from core.pipeline import SolverSettings
    from core.settings import BY_NAME

    assert SolverSettings().simulation() == SimulationSettings()
    assert SimulationSettings().max_iterations == BY_NAME["iterations"].default
    assert SimulationSettings().rest_state == str(BY_NAME["rest_state"].default).lower()


def test_rebound_to_the_same_model_steps_identically(model, scene):
    """Simulator.rebound (the pose-space path) swaps products and refactors: onto the model it
    already has, with gravity given as the row Y^T m, every step is bit-identical."""
    settings = SimulationSettings(time_step=H, gravity=(0.0, -9.81, 0.0))
    sim = Simulator(model, settings)
    again = sim.rebound(model, model.basis().T @ model.masses)
    assert again is not sim and again._systems is not sim._systems
    a, b = simulate(sim, scene, 10), simulate(again, scene, 10)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------- convergence (issue 23)
# The product's controls: the slowest mode at 3 Hz with damping ratio 0.2, two sub-steps at 24 fps.
POISSONS = [0.0, 0.2, 0.4, 0.45, 0.49]
_MODELS: dict[float, object] = {}


def _product_simulator(scene, poisson, material, **settings):
    from core.dynamics.wobble import damping_coefficient, natural_frequencies, stiffness_scale

    if poisson not in _MODELS:
        mat = Material.uniform(scene.mesh.t, 5e4, poisson, 1000.0)
        _MODELS[poisson] = build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)
    model = _MODELS[poisson]
    w0 = natural_frequencies(model, material == "arap" or poisson == 0.0)[0]
    return Simulator(
        model,
        SimulationSettings(
            time_step=H,
            material=material,
            stiffness_scale=stiffness_scale(w0, 3.0),
            damping=damping_coefficient(3.0, 0.2),
            **settings,
        ),
    )


def _swing_and_stop(scene, t):
    """A fast swing of the whole chain (1.5 rad per joint) that stops dead at t = 0.5 s."""
    return scene.parameters(min(t, 0.5), amplitude=3.0, frequency=1.0)


@pytest.mark.parametrize("poisson", POISSONS)
@pytest.mark.parametrize("material", ["arap", "corotational"])
def test_every_iteration_lowers_the_step_energy_and_exits_converged(scene, material, poisson):
    """Each iteration lowers the incremental potential (round-off: 1e-10 of the largest term), and a
    step that says it converged has its residual, measured afresh at the returned z, within the
    tolerance (1e-12 of the size for the round-off of re-evaluating it)."""
    sim = _product_simulator(scene, poisson, material, max_iterations=50)
    tol = sim.settings.tolerance * sim.size
    state = sim.initial_state(_swing_and_stop(scene, 0.0))
    for k in range(1, 37):
        energies: list[float] = []
        p = _swing_and_stop(scene, k * H)
        new, rep = sim.step(state, p, record=energies)
        e = np.array(energies)
        assert np.all(np.diff(e) <= 1e-10 * np.abs(e).max()), (k, np.diff(e).max())
        assert rep.converged and rep.iterations < 50, (k, rep)
        assert sim.step_residual(state, new.z, p) <= tol + 1e-12 * sim.size, k
        state = new


@pytest.mark.parametrize("poisson", POISSONS)
@pytest.mark.parametrize("material", ["arap", "corotational"])
def test_the_answer_does_not_depend_on_the_iteration_cap(scene, material, poisson):
    """Caps 10, 50 and 200 give the same trajectory within 1e-3 of the motion, and none blows up.

    The cap is a safety net: each step stops on the tolerance, so once the cap
    is above what a step needs the trajectories are identical; 1e-3 leaves room
    for a step at the cap of 10.  (With the quasi-Newton solve, Poisson 0.49 at
    50 iterations blew up at the first step: its line search stopped checking
    the energy after 30 backtracks in all.)
    """
    runs = []
    for cap in (10, 50, 200):
        sim = _product_simulator(scene, poisson, material, max_iterations=cap)
        state = sim.initial_state(_swing_and_stop(scene, 0.0))
        out = []
        for k in range(1, 49):
            state, _ = sim.step(state, _swing_and_stop(scene, k * H))
            out.append(sim.displacement(state))
        runs.append(np.array(out))
    motion = np.abs(runs[-1]).max()
    assert motion > 1e-3 * scene.length  # the swing moves the flesh
    for u in runs[:-1]:
        assert np.abs(u - runs[-1]).max() <= 1e-3 * motion


def test_a_capped_step_says_it_did_not_converge(scene):
    """One iteration cannot reach the tolerance during a fast swing: the report says so (never silently)."""
    sim = _product_simulator(scene, 0.45, "corotational", max_iterations=1)
    state = sim.initial_state(_swing_and_stop(scene, 0.0))
    reports = []
    for k in range(1, 13):
        state, rep = sim.step(state, _swing_and_stop(scene, k * H))
        reports.append(rep)
    assert any(not r.converged for r in reports)
    assert all(r.iterations == 1 for r in reports)


def test_a_blow_up_names_its_cause(model):
    """An unconverged step is named as the cause ("raise Iterations"); a converged one points at the rig."""
    from core.dynamics.simulator import StepReport

    sim = Simulator(model, SimulationSettings(time_step=H))
    huge = np.full((4 * model.m, 3), 1e6 * sim.size)
    stuck = StepReport(iterations=10, residual=1.0, energy=0.0, converged=False)
    with pytest.raises(SimulationError, match=r"frame 3: .*blew up.*did not converge \(10 iterations\).*Iterations"):
        sim._check(huge, "frame 3: ", stuck)
    with pytest.raises(SimulationError, match=r"blew up.*the rig moves too far in one step"):
        sim._check(huge, "frame 3: ", StepReport(iterations=2, residual=0.0, energy=0.0))
    with pytest.raises(SimulationError, match=r"NaN: the solver did not converge"):
        sim._check(np.full_like(huge, np.nan), "frame 3: ", stuck)
