"""The locomotion drive (core/locomotion/drive.py) run by the frame loop, with a found gait."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.geometry.tetmesh import boundary_faces, compact_unreferenced
from core.locomotion.creatures import RECIPES, creature_mesh, creature_problem
from core.locomotion.drive import LocomotionDrive, embedded_basis
from core.locomotion.gait import rollout
from core.model.rig import rig_parameters
from core.pipeline import (
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    SolverSettings,
    SubspaceSettings,
    prepare_character,
)
from core.pipeline.guards import guard_probes

from .gaits import FOUND

FPS, SUBSTEPS, START, END = 15, 2, 1, 31  # dt = 1 / 30 s, the recipe's; 30 frames = 60 solver steps
IDENTITY = rig_parameters(np.eye(4)[None, :3])  # one bone that never moves: a boneless character


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """A prepared quadruped (its tet mesh given, the render mesh its boundary) and its gait's drive."""
    recipe = RECIPES["quadruped"]
    mesh = creature_mesh(recipe)
    V, F, _ = compact_unreferenced(mesh.X, boundary_faces(mesh.T))
    character = CharacterInput(rest=V, faces=F, bone_weights=np.ones((len(V), 1)))
    sub = SubspaceSettings(modes=4, clusters=8, tet_method="lattice")
    prepared = prepare_character(character, sub, MaterialSettings(), tets=(mesh.X, mesh.T))
    problem = creature_problem(recipe, SUBSTEPS * (END - START), prepared.mesh)
    sinusoids = problem.sinusoids(FOUND["quadruped"])
    probes = guard_probes(prepared.mesh.X)
    T, emb = prepared.mesh.T, prepared.embedding
    drive = LocomotionDrive.from_problem(problem, sinusoids, T, emb, probes, FPS, SUBSTEPS, START)
    render = embedded_basis(problem.model.subspace.basis, T, emb)
    # Physical stiffness: the wobble controls do not apply to a gait (the drive ignores them), and in
    # frequency mode the frame loop would still warn that 2 sub-steps cannot resolve their damping.
    solver = SolverSettings(fps=FPS, substeps=SUBSTEPS, preroll=0, stiffness_mode="physical")
    sim = FrameSimulation(prepared, solver, START, END, lambda f: IDENTITY, drive=drive)
    return prepared, problem, drive, sim, render


def test_the_frame_loop_runs_the_gait_as_the_rollout_does(crawl):
    """FrameSimulation's states and render offsets equal the room's own rollout at every frame.

    Tolerance 1e-12 m: both feed the same Stepper the same floats (the drive rounds its interpolated
    clock back to a whole step count, so its actuation times are k dt exactly), so they agree bit for bit
    on one machine; the allowance only covers a BLAS that reorders sums between calls.
    """
    _, problem, _, sim, render = crawl
    r = rollout(problem, problem.sinusoids(FOUND["quadruped"]), record=True)
    assert r.Z is not None
    for f in range(START, END + 1):
        k = SUBSTEPS * (f - START)
        np.testing.assert_allclose(sim.state(f).z, r.Z[k], rtol=0, atol=1e-12)
        u = sim.offsets(f)  # identity rig: the offsets are the whole motion relative to rest
        np.testing.assert_allclose(u, render @ (r.Z[k] - problem.model.rest), rtol=0, atol=1e-5)  # float32 cache
    assert sim.solver_stats()["unconverged_steps"] == 0
    travelled = problem.model.centre_of_mass(sim.state(END).z) - problem.model.centre_of_mass(problem.model.rest)
    assert travelled[0] > 0.02  # it crawls forwards within the two seconds
    assert sim.warnings == []  # travel is not a guarded offset: the probes measure the deformation only


def test_render_basis_reproduces_the_render_rest_shape(crawl):
    prepared, problem, _, _, render = crawl
    np.testing.assert_allclose(render @ problem.model.rest, prepared.render_points, atol=1e-9)


def test_the_frame_rate_must_give_the_gait_time_step(crawl):
    prepared, problem, _, _, _ = crawl
    with pytest.raises(SimulationError, match="frame rate"):
        LocomotionDrive.from_problem(
            problem, problem.sinusoids(FOUND["quadruped"]), prepared.mesh.T, prepared.embedding, [0], 24, 2, START
        )


def test_the_body_transform_carries_the_rest_shape_along(crawl):
    """Rest: the identity; after the crawl: [R | t] maps the rest shape onto the body to within its deformation."""
    _, problem, drive, sim, _ = crawl
    rest = drive.initial_state(drive.sample(START), None)
    np.testing.assert_allclose(drive.body_transform(rest), np.eye(4)[:3], atol=1e-14)
    A = drive.body_transform(sim.state(END))
    X0 = problem.model.positions(problem.model.rest)
    X = problem.model.positions(sim.state(END).z)
    np.testing.assert_allclose(A[:, :3] @ A[:, :3].T, np.eye(3), atol=1e-12)
    moved = X0 @ A[:, :3].T + A[:, 3]
    assert np.abs(moved - X).max() < 0.5 * np.abs(X - X0).max()  # the rigid part explains most of the motion


def test_the_clock_is_whole_steps_and_a_restart_stops_the_body(crawl):
    _, _, drive, _, _ = crawl
    mid = 0.5 * drive.sample(4) + 0.5 * drive.sample(5)  # a sub-step between frames 4 and 5
    assert drive.step_count(mid) == SUBSTEPS * (4 - START) + 1
    state = drive.initial_state(drive.sample(START), None)
    state, _ = drive.step(state, drive.sample(START + 1), float(START + 1), 1.0, 0.0)
    still = drive.restart(state, drive.sample(START + 1))
    np.testing.assert_array_equal(still.Z, still.Z_prev)
    assert drive.skin_correction(3) is None and drive.jiggles
