"""The jiggle with contact (core/contact/surface.py through core/dynamics/simulator.py).

A 2 m bar, 0.4 m thick, on three bones (tests/core/contact/scenes.py), at 48 steps per second.
Tolerances: penetrations against 1 % of the thickness (the issue's bound); complementarity and
rotation equivariance to round-off, as in tests/core/dynamics/test_simulator.py (1e-9 of the
displacement's norm for complementarity; 1e-8 of the largest displacement after 60 rotated steps:
the contact's active sets are the same on both sides, so the round-off of 60 nonlinear steps is all
that differs); energies never increase within a step (1e-10 of the largest term).
"""

import numpy as np
import pytest

from core.contact.colliders import Ground
from core.contact.surface import SurfaceContact
from core.dynamics.simulator import SimulationSettings, Simulator
from core.geometry.tetmesh import TetMesh
from core.model.constraint import complementarity_matrix
from core.model.materials import Material
from core.model.rig import LBSRig
from core.subspace.reduced import assemble_model
from core.validation.scenes import random_rotation, rotated_transforms
from tests.core.contact.scenes import WIDTH, H, bar, box, roll, signed_depth, simulator, translated

DROP = 0.5  # m


@pytest.fixture(scope="module", params=[0.0, 0.3], ids=["arap", "corotational"])
def scene_model(request):
    return bar(poisson=request.param)


def falling(t):
    """The rig falls freely from DROP and lands with the bar's underside on the ground (z = -WIDTH / 2)."""
    return translated(max(DROP - 0.5 * 9.81 * t * t, 0.0))


def test_a_dropped_bar_comes_to_rest_on_the_ground(scene_model):
    scene, model = scene_model
    sim = simulator(model, gravity=(0.0, 0.0, -9.81), damping=2.0)
    ground = Ground(height=-WIDTH / 2)
    xs, _ = roll(sim, scene, falling, lambda t: [ground], int(3.0 / H))
    lowest = np.array([x[:, 2].min() for x in xs])
    assert -WIDTH / 2 - lowest.min() <= 0.01 * WIDTH  # penetration
    assert max(x[:, 2].max() for x in xs) <= DROP + WIDTH / 2  # no bounce above the drop
    landed = int(np.sqrt(2 * DROP / 9.81) / H) + 1
    rest = landed + int(2.0 / H)
    speed = max(np.abs(xs[k] - xs[k - 1]).max() / H for k in range(rest, len(xs)))
    assert speed <= 1e-3 * np.sqrt(2 * 9.81 * DROP)  # at rest within 2 s of landing: 0.1 % of the landing speed
    free = simulator(model, contact=False, gravity=(0.0, 0.0, -9.81), damping=2.0)
    xf, _ = roll(free, scene, falling, lambda t: [ground], int(1.0 / H))
    assert -WIDTH / 2 - min(x[:, 2].min() for x in xf) > 0.2 * WIDTH  # without contact it sinks in


def test_every_iteration_lowers_the_energy_with_contact(scene_model):
    _, model = scene_model
    sim = simulator(model, gravity=(0.0, 0.0, -9.81), max_iterations=25, tolerance=0.0)
    ground = Ground(height=-WIDTH / 2)
    state = sim.initial_state(falling(0.0))
    touched = 0
    for k in range(1, 40):
        energies: list[float] = []
        state, _ = sim.step(state, falling(k * H), obstacles=[ground], record=energies)
        e = np.array(energies)
        assert np.all(np.diff(e) <= 1e-10 * np.abs(e).max()), np.diff(e).max()
        touched += sim.displacement(state)[:, 2].min() < 0
    assert touched


def swinging(scene):
    return lambda t: scene.parameters(t, amplitude=1.5, frequency=1.0)


def sweeping_box(t):
    """A box 0.6 m x 0.6 m x 0.3 m sweeping under the tail's outer half, its top on the rig's underside.

    The rig never enters it; gravity and the swing press the flesh onto it.
    """
    y = 1.5 - 1.5 * t
    return [box((1.0, y - 0.3, -0.5), (1.6, y + 0.3, -WIDTH / 2))]


def test_a_collider_through_a_swinging_tail(scene_model):
    scene, model = scene_model
    sim = simulator(model, damping=0.5, gravity=(0.0, 0.0, -9.81))
    xs, rigs = roll(sim, scene, swinging(scene), sweeping_box, int(2.0 / H))
    assert all(np.isfinite(x).all() for x in xs)
    worst = max(signed_depth(sweeping_box((k + 1) * H)[0], x).max() for k, x in enumerate(xs))
    assert worst <= 0.01 * WIDTH
    free = simulator(model, contact=False, damping=0.5, gravity=(0.0, 0.0, -9.81))
    xf, _ = roll(free, scene, swinging(scene), sweeping_box, int(2.0 / H))
    assert max(signed_depth(sweeping_box((k + 1) * H)[0], x).max() for k, x in enumerate(xf)) > 0.1 * WIDTH
    # Bounded: the collider holds the flesh up, it adds no motion beyond the free swing's.
    assert max(np.abs(x - r).max() for x, r in zip(xs, rigs)) <= max(np.abs(x - r).max() for x, r in zip(xf, rigs))


def test_complementarity_with_contact(scene_model):
    scene, model = scene_model
    sim = simulator(model, damping=0.5)
    Jc = complementarity_matrix(scene.rig.jacobian(scene.mesh.X), model.masses, model.leak)
    norm_J = np.sqrt(Jc.multiply(Jc).sum())
    xs, rigs = roll(sim, scene, swinging(scene), sweeping_box, 40)
    for x, r in zip(xs, rigs):
        u = x - r
        assert np.linalg.norm(Jc.T @ u.ravel()) <= 1e-9 * norm_J * np.linalg.norm(u)


def test_rotation_equivariance_with_contact(scene_model):
    """Rotate the rest mesh, the rig's motion and the ground by R: the secondary motion rotates by R."""
    scene, model = scene_model
    R = random_rotation(np.random.default_rng(11))
    mesh_r = TetMesh.from_arrays(scene.mesh.X @ R.T, scene.mesh.T)
    mat = Material(mu=model.mu, lam=model.lam, density=np.full(mesh_r.t, 1000.0))
    rotated = assemble_model(
        mesh_r, mat, model.masses, model.leak, LBSRig(scene.rig.weights), model.weights, model.eigenvalues, model.labels
    )
    n = np.array([0.0, 1.0, 0.0])
    out = []
    for mdl, rot in ((model, np.eye(3)), (rotated, R)):
        sim = Simulator(mdl, SimulationSettings(time_step=H), SurfaceContact(mdl, H))
        ground = [Ground(height=-0.5, normal=tuple(rot @ n))]
        state = sim.initial_state(rotated_transforms_p(scene, 0.0, rot))
        us = []
        for k in range(1, 61):
            state, _ = sim.step(state, rotated_transforms_p(scene, k * H, rot), obstacles=ground)
            us.append(sim.displacement(state))
        out.append(us)
    scale = max(np.abs(a).max() for a in out[0])
    assert scale > 0.02 * scene.length
    assert max(np.abs(b - a @ R.T).max() for a, b in zip(*out)) <= 1e-8 * scale


def rotated_transforms_p(scene, t, R):
    from core.model.rig import rig_parameters

    return rig_parameters(rotated_transforms(scene.transforms(t, amplitude=2.0, frequency=1.5), R))


def test_the_rig_wins_where_it_is_inside(scene_model):
    """A rig held half inside the ground: contact neither pushes the flesh out nor lets it sink further."""
    _, model = scene_model
    still = translated(0.0)
    sim = simulator(model)
    state = sim.initial_state(still)
    for _ in range(20):
        state, _ = sim.step(state, still, obstacles=[Ground(height=0.0)])
    assert np.abs(sim.displacement(state)).max() <= 1e-10  # m: round-off of the stiff rows at rest (1e-12)


def test_friction_holds_a_pressed_slide():
    """Gravity pulling sideways and down on a bar resting on the ground: with friction its underside slides less."""
    scene, model = bar()
    slides = []
    for mu in (0.0, 1.0):
        from core.contact.surface import ContactSettings

        sim = Simulator(
            model,
            SimulationSettings(time_step=H, gravity=(-4.0, 0.0, -9.81)),
            SurfaceContact(model, H, ContactSettings(friction=mu)),
        )
        xs, rigs = roll(sim, scene, lambda t: translated(0.0), lambda t: [Ground(height=-WIDTH / 2)], 30)
        under = scene.mesh.X[:, 2] < -WIDTH / 2 + 1e-9
        slides.append(np.abs((xs[-1] - rigs[-1])[under, 0]).max())
    assert slides[1] < 0.5 * slides[0]


def test_held_rows_leave_the_motion_as_it_was(scene_model, monkeypatch):
    """A dropped bar with the far samples' rows held back (core/contact/held.py; held even one step's
    motion ahead, so that they join within steps) and with every row given (nothing held): the same
    motion to round-off, 1e-9 of the largest displacement (sums over fewer rows, in another order,
    through 60 nonlinear steps)."""
    from core.contact import surface

    scene, model = scene_model
    ground = Ground(height=-WIDTH / 2)
    out, held = [], []
    for hold, reach in ((surface.HOLD, 0.0), (1e9, surface.REACH)):  # no reach ahead: held rows must join mid-step
        monkeypatch.setattr(surface, "HOLD", hold)
        monkeypatch.setattr(surface, "REACH", reach)
        sim = simulator(model, gravity=(0.0, 0.0, -9.81), damping=2.0)
        xs, _ = roll(sim, scene, falling, lambda t: [ground], 60)
        out.append(np.array(xs))
        state, most = sim.initial_state(falling(0.0)), 0
        for k in range(1, 40):  # the most rows held at a step, as the bar lands
            x_s = sim.contact.rig_positions(falling(k * H))
            found = sim.contact.rows(x_s, state.z.T, state.z_prev.T, [ground])
            most = max(most, 0 if found is None or found.held is None else len(found.held))
            state, _ = sim.step(state, falling(k * H), obstacles=[ground])
        held.append(most)
    assert held[0] > 0 and held[1] == 0  # rows were held, then none
    scale = np.abs(out[1] - out[1][:1]).max()
    assert np.abs(out[0] - out[1]).max() <= 1e-9 * scale


def test_a_ground_is_asked_only_about_the_samples_that_can_sink(scene_model):
    """``violated`` after ``rows`` at the step's start checks a ground only at the samples its motion can have
    sunk (a bound): the rows found are exactly those of checking every sample."""
    _, model = scene_model
    contact = SurfaceContact(model, H)
    x_rig = contact.rig_positions(translated(0.0))
    ground = [Ground(height=-WIDTH / 2 + 0.01, normal=(0.1, 0.0, 1.0))]
    rng = np.random.default_rng(5)
    z = 0.01 * rng.standard_normal((3, contact.Y.shape[1]))
    contact.rows(x_rig, z, z, ground)
    found = 0
    for scale in (1e-3, 0.03, 0.3, 1.0):
        Z = z + scale * rng.standard_normal(z.shape)
        fast, every = contact.violated(x_rig, Z, ground, z), contact.violated(x_rig, Z, ground)
        assert (fast is None) == (every is None)
        if every is not None:
            found += 1
            assert np.array_equal(fast.J, every.J) and np.array_equal(fast.b, every.b)
    assert found >= 2


def test_a_grounds_planes_are_those_of_the_general_search(scene_model):
    """The grounds' own path in ``SurfaceContact._planes`` gives the very arrays of the general one
    (core/contact/colliders.py's obstacle_planes), the rig inside for some samples and not for others."""
    from core.contact import colliders
    from core.contact.surface import ROUNDOFF

    _, model = scene_model
    contact = SurfaceContact(model, H)
    x_rig = contact.rig_positions(translated(0.0))
    u = 0.05 * np.random.default_rng(2).standard_normal((len(x_rig), 3))
    grounds = [Ground(height=-WIDTH / 2 + 0.05, normal=(0.1, 0.0, 1.0)), Ground(height=-0.9, normal=(1.0, 0.0, 0.0))]
    for obstacles in (grounds[:1], grounds):
        fast = contact._planes(x_rig, u, obstacles, 0.1)
        planes, inside = colliders.obstacle_planes(obstacles, x_rig + u, 0.1, x_rig, ROUNDOFF * contact.size)
        b = planes.depth(x_rig)
        b[inside] = np.minimum(b[inside], 0.0)
        assert inside.any() and not inside.all()
        for got, want in zip(fast, (planes.index, planes.normal, b)):
            assert np.array_equal(got, want)
