"""From a skinned surface to per-frame secondary motion (core/pipeline.py)."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.model.rig import rig_parameters
from core.pipeline import (
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    SolverSettings,
    SubspaceSettings,
    check_frame_range,
    prepare_character,
)
from core.validation.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


@pytest.fixture(scope="module")
def character():
    V, F = join(uv_sphere(20, 0.5, (0, 0, 0)), uv_sphere(20, 0.4, (0.7, 0, 0)))
    W = chain_weights(V, np.array([-0.5, 0.5, 1.1]))
    return CharacterInput(rest=V, faces=F, bone_weights=W)


def swing(t):
    """Three bones: the last two swing about z; rig parameters (36,)."""
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    a = 0.6 * np.sin(t / 4.0)
    c, s = np.cos(a), np.sin(a)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    for b in (1, 2):
        A[b, :, :3] = R
    return rig_parameters(A)


@pytest.fixture(scope="module")
def prepared(character, tmp_path_factory):
    return prepare_character(
        character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path_factory.mktemp("c")
    )


def test_prepared_character_has_what_the_solver_needs(prepared, character):
    st = prepared.stats
    assert st["tets"] > 1000 and st["modes"] == 6 and st["clusters"] >= 10
    assert prepared.reconstructor.count == len(character.rest)
    assert np.allclose(prepared.tet_bone_weights.sum(axis=1), 1.0)
    assert prepared.leak.min() >= 0 and prepared.leak.max() <= 1


def test_long_runs_keep_checkpoints_not_every_state(prepared, monkeypatch):
    """Over the state budget, forward simulation keeps one state every CHECKPOINT frames plus the newest;
    any frame is still exact (bit for bit)."""
    import core.pipeline
    from core.pipeline import CHECKPOINT

    sim = FrameSimulation(prepared, SolverSettings(), 1, 200, swing)
    monkeypatch.setattr(core.pipeline, "STATE_BUDGET", 0)  # as if 200 frames were 100k
    ref = {f: sim.offsets(f).copy() for f in range(1, 201)}
    assert len(sim.cached_frames) <= 200 // CHECKPOINT + 2
    for f in (150, 37, 199, 2):
        assert np.array_equal(sim.offsets(f), ref[f])


def test_within_the_budget_every_state_is_kept_for_scrubbing(prepared):
    sim = FrameSimulation(prepared, SolverSettings(), 1, 60, swing)
    sim.offsets(60)
    assert sim.cached_frames == list(range(1, 61))


def test_any_frame_order_gives_the_same_motion(prepared):
    solver = SolverSettings(fps=24, substeps=2)
    a = FrameSimulation(prepared, solver, 1, 30, swing)
    seq = {f: a.offsets(f) for f in range(1, 31)}
    b = FrameSimulation(prepared, solver, 1, 30, swing)
    for f in (25, 3, 30, 1, 17, 18, 9):
        assert np.array_equal(b.offsets(f), seq[f])
    assert np.abs(seq[30]).max() > 1e-4
    assert not b.offsets(0).any() and not b.offsets(31).any()
    b.invalidate_after(10)
    assert max(b.cached_frames) == 10 and np.array_equal(b.offsets(20), seq[20])


def test_second_preparation_comes_from_the_cache(character, tmp_path):
    first = prepare_character(character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
    second = prepare_character(character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == ["model", "tets"]
    assert np.array_equal(first.model.weights, second.model.weights)
    assert np.array_equal(first.mesh.T, second.mesh.T)
    assert second.stats["tetrahedralize_s"] < first.stats["tetrahedralize_s"]


def test_painted_masks_change_the_material_and_the_leak(character, prepared):
    k = len(character.rest)
    soft = CharacterInput(
        rest=character.rest,
        faces=character.faces,
        bone_weights=character.bone_weights,
        stiffness=(character.rest[:, 0] < 0.3).astype(float),
        leak=np.zeros(k),
    )
    p = prepare_character(soft, SUB, MaterialSettings(youngs_modulus=5e3))
    assert p.material.mu.min() < 0.5 * prepared.material.mu.min()
    assert np.allclose(p.leak, 1.0)  # painting 0 everywhere holds all flesh to the rig


def test_empty_range_is_refused(prepared):
    with pytest.raises(SimulationError, match="frame range 10 to 5 is empty"):
        FrameSimulation(prepared, SolverSettings(), 10, 5, swing)


def test_check_frame_range_accepts_one_frame_and_refuses_an_empty_range_in_one_line():
    assert check_frame_range(-3, -3) == (-3, -3)
    assert check_frame_range(np.int64(1), 24.0) == (1, 24) and isinstance(check_frame_range(1, 2)[0], int)
    with pytest.raises(SimulationError) as err:
        check_frame_range(-10, -20)
    assert str(err.value) == "the frame range -10 to -20 is empty; set the end frame after the start frame"


def _carried(velocity, swing_too=False):
    """The swing (or the rest pose) carried along at a constant velocity (m per frame)."""

    def rig(f):
        p = swing(f) if swing_too else rig_parameters(np.tile(np.eye(4)[:3], (3, 1, 1)))
        A = p.reshape(3, 3, 4).copy()
        A[:, :, 3] += np.asarray(velocity) * f
        return A.ravel()

    return rig


@pytest.mark.parametrize("substeps", [1, 2, 4])
def test_galilean_invariance_through_frame_simulation(prepared, substeps):
    """A rig already moving at constant velocity at the first frame makes no secondary motion.

    The first state's rig velocity is taken at sub-step spacing, so nothing
    pops: the offsets stay at round-off, 1e-9 of the distance travelled.
    """
    solver = SolverSettings(substeps=substeps)
    v = np.array([0.3, -0.1, 0.2])
    sim = FrameSimulation(prepared, solver, 1, 24, _carried(v))
    worst = max(np.abs(sim.offsets(f)).max() for f in range(1, 25))
    assert worst <= 1e-9 * np.linalg.norm(v) * 24


@pytest.mark.parametrize("substeps", [1, 2, 4])
def test_carrying_the_swing_along_changes_nothing(prepared, substeps):
    """The swing on a rig moving at 0.3 m/frame equals the swing at rest, to 1e-9 relative."""
    solver = SolverSettings(substeps=substeps)
    still = FrameSimulation(prepared, solver, 1, 24, swing)
    moving = FrameSimulation(prepared, solver, 1, 24, _carried([0.3, 0.0, 0.0], swing_too=True))
    assert np.abs(still.offsets(24)).max() > 1e-4
    # float32 reconstruction (the add-on's dtype): compare the float64 states instead.
    za, zb = still.state(24).z, moving.state(24).z
    assert np.abs(za - zb).max() <= 1e-9 * np.abs(za).max()


def test_preroll_starts_the_shot_with_the_flesh_already_moving(prepared):
    """Pre-roll N frames equals simulating from start - N and discarding the first N (bit for bit)."""
    long = FrameSimulation(prepared, SolverSettings(), -5, 20, swing)
    rolled = FrameSimulation(prepared, SolverSettings(preroll=6), 1, 20, swing)
    assert np.array_equal(rolled.state(1).z, long.state(1).z)
    assert np.array_equal(rolled.offsets(20), long.offsets(20))
    assert np.abs(rolled.state(1).z).max() > 0  # the first frame already moves
    assert rolled.cached_frames[0] == 1


def test_settles_on_the_held_pose(prepared):
    """The swing stops at frame 24 and holds: one second (24 frames) later the flesh is on the pose.

    Default controls (3 Hz, damping ratio 0.2): the amplitude falls by about
    e^(-0.2 * 2 pi * 3) = 5e-4 in a second, below 1 % of the largest offset.
    """

    def stop(f):
        return swing(min(f, 24))

    sim = FrameSimulation(prepared, SolverSettings(), 1, 48, stop)
    peak = max(np.abs(sim.offsets(f)).max() for f in range(1, 25))
    assert peak > 1e-3
    assert np.abs(sim.offsets(48)).max() <= 0.01 * peak


def test_animated_controls_are_read_per_frame(prepared):
    steady = FrameSimulation(prepared, SolverSettings(), 1, 20, swing)
    same = FrameSimulation(prepared, SolverSettings(), 1, 20, swing, controls=lambda f: (3.0, 0.2))
    assert np.array_equal(steady.offsets(20), same.offsets(20))
    ramp = FrameSimulation(prepared, SolverSettings(), 1, 20, swing, controls=lambda f: (3.0 if f < 10 else 6.0, 0.2))
    assert np.array_equal(ramp.offsets(9), steady.offsets(9))
    assert not np.array_equal(ramp.offsets(20), steady.offsets(20))


def test_the_guard_says_when_the_motion_is_implausible(prepared):
    calm = FrameSimulation(prepared, SolverSettings(), 1, 30, swing)
    calm.offsets(30)
    assert calm.warnings == [] and 0 < calm.max_offset < 0.5

    def whip(f):
        return swing(40.0 * f)

    wild = FrameSimulation(prepared, SolverSettings(wobble_hz=0.2, damping_ratio=0.0), 1, 30, whip)
    wild.offsets(30)
    offset = [w for w in wild.warnings if "secondary motion reached" in w]
    assert len(offset) == 1 and all(w.startswith("frame ") for w in wild.warnings)


def _teleport(f):
    """The swing, with the whole rig jumping 3 m (about 2.5 sizes) at frame 10."""
    A = swing(f).reshape(3, 3, 4).copy()
    if f >= 10:
        A[:, 0, 3] += 3.0
    return A.ravel()


def test_a_rig_jump_is_reported_with_its_frame(prepared):
    sim = FrameSimulation(prepared, SolverSettings(), 1, 20, _teleport)
    sim.offsets(20)
    jumps = [w for w in sim.warnings if "the rig jumps by" in w]
    assert len(jumps) == 1 and jumps[0].startswith("frame 10: the rig jumps by") and "Reset at Cuts" in jumps[0]
    calm = FrameSimulation(prepared, SolverSettings(), 1, 20, swing)
    calm.offsets(20)
    assert calm.warnings == []


def test_reset_at_cuts_restarts_at_rest_on_the_new_pose(prepared):
    """With Reset at Cuts the state at the cut is at rest relative to the rig (z = 0 exactly), and what
    follows equals a simulation that starts there with the rig at rest."""
    sim = FrameSimulation(prepared, SolverSettings(reset_at_cuts=True), 1, 20, _teleport)
    assert not sim.state(10).z.any()
    assert any(w.startswith("frame 10:") and "restarts" in w for w in sim.warnings)
    fresh = FrameSimulation(prepared, SolverSettings(), 10, 20, _teleport)
    # The fresh start extrapolates the rig's velocity at frame 10; the reset starts it at rest.
    assert np.abs(sim.offsets(20)).max() > 0
    assert np.isfinite(fresh.offsets(20)).all()


def test_a_collapsed_or_mirrored_bone_is_reported(prepared):
    def collapse(f):
        A = swing(f).reshape(3, 3, 4).copy()
        if f == 5:
            A[2, :, :3] = 0.0
        if f >= 8:
            A[1, 0, :3] *= -1.0
        return A.ravel()

    sim = FrameSimulation(prepared, SolverSettings(), 1, 12, collapse)
    sim.offsets(12)
    text = " | ".join(sim.warnings)
    assert "frame 5: bone 2 of the rig is scaled to zero" in text
    assert "frame 8: bone 1 of the rig has a negative scale" in text


# Physics skin under the jiggle (issue 15) ---------------------------------------------------

HEADS = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [1.1, 0.0, 0.0]])
TAILS = np.array([[0.5, 0.0, 0.0], [1.1, 0.0, 0.0], [1.5, 0.0, 0.0]])


@pytest.fixture(scope="module")
def skinned(character, tmp_path_factory):
    """The two-sphere character with its bones' segments (the physics skin pins around them)."""
    inp = CharacterInput(
        rest=character.rest,
        faces=character.faces,
        bone_weights=character.bone_weights,
        bone_heads=HEADS,
        bone_tails=TAILS,
    )
    return prepare_character(inp, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path_factory.mktemp("p"))


def test_physics_skin_alone_is_its_correction_and_nothing_at_rest(skinned):
    """Secondary Motion off: the offsets are the physics skin's correction to LBS, no jiggle.

    At the rest pose (frame 0 of the swing) they are LBS's round-off (1e-6 of the
    size in float32); while the joint bends they are not zero.
    """
    from core.physskin.rig import render_correction

    solver = SolverSettings(physics_skin=True, secondary_motion=False)
    sim = FrameSimulation(skinned, solver, 0, 12, swing)
    assert np.abs(sim.offsets(0)).max() <= 1e-6
    c = sim.physics.correction(sim.rig(12), sim.physics_positions(12))
    expected = render_correction(skinned.embedding, skinned.mesh.T, c, skinned.keep)
    np.testing.assert_allclose(sim.offsets(12), expected, atol=1e-6)
    assert np.abs(expected).max() > 1e-3


def test_jiggle_on_the_physics_skin_stays_complementary(skinned):
    """Jiggle on top of the physics skin: x = x_phys + u with J^T D M u = 0 at every frame (1e-9 relative).

    u lives in the rig-complementary subspace whatever shape drives it; the jiggle
    must not carry rig motion, and the physics skin must not leak into the jiggle.
    """
    from core.model.constraint import complementarity_matrix
    from core.model.rig import lbs_jacobian

    model = skinned.model
    Jc = complementarity_matrix(lbs_jacobian(model.X, skinned.tet_bone_weights), model.masses, model.leak)
    norm_J = np.sqrt(Jc.multiply(Jc).sum())
    sim = FrameSimulation(skinned, SolverSettings(physics_skin=True), 1, 24, swing)
    plain = FrameSimulation(skinned, SolverSettings(), 1, 24, swing)
    Y = model.basis()
    moved = 0.0
    for f in range(2, 25):
        u = Y @ sim.state(f).z
        moved = max(moved, np.abs(u).max())
        assert np.linalg.norm(Jc.T @ u.ravel()) <= 1e-9 * norm_J * np.linalg.norm(u)
    assert moved > 1e-4
    # Driven by a different rig shape, the jiggle differs from the LBS-driven one.
    assert np.abs(sim.state(24).z - plain.state(24).z).max() > 1e-6


def test_physics_skin_carried_at_constant_velocity_makes_no_jiggle(skinned):
    """Galilean invariance with the physics rig: a swing carried along at 0.3 m/frame gives the same
    jiggle as the swing in place, to 1e-9 of its size.  Exact in exact arithmetic: the solve's
    iterations start from the carried ARAP answer and stop relative to that start, so they run
    the same sequence; what is left is round-off."""
    solver = SolverSettings(physics_skin=True)
    still = FrameSimulation(skinned, solver, 1, 16, swing)
    moving = FrameSimulation(skinned, solver, 1, 16, _carried([0.3, 0.0, 0.0], swing_too=True))
    za, zb = still.state(16).z, moving.state(16).z
    assert np.abs(za).max() > 1e-5
    assert np.abs(za - zb).max() <= 1e-9 * np.abs(za).max()


def test_physics_frames_do_not_depend_on_the_order_they_are_asked_for(skinned):
    """Scrubbing backwards gives the frames the bake gives, bit for bit: each frame's solve starts
    from that frame's own ARAP answer, never from whichever frame came before."""
    solver = SolverSettings(physics_skin=True)
    forward = FrameSimulation(skinned, solver, 1, 12, swing)
    a = [forward.offsets(f) for f in range(1, 13)]
    backward = FrameSimulation(skinned, solver, 1, 12, swing)
    b = [backward.offsets(f) for f in range(12, 0, -1)][::-1]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


# --- pose-space modes (issue 16) ----------------------------------------------------------------


def test_poses_without_contact_reproduce_todays_motion(prepared):
    """A training pose without contact has the rest eigenproblem, so the blend is the rest
    subspace and the motion is today's: offsets agree to float32 round-off of the render bases
    (1e-5 of the largest offset) over a swing through the pose."""
    from core.pipeline import prepare_pose_space

    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9])
    assert ps.model.k == 2 and ps.frames == (-1, 9) and ps.contacts == (0, 0)
    plain = FrameSimulation(prepared, SolverSettings(), 1, 40, swing)
    blended = FrameSimulation(prepared, SolverSettings(), 1, 40, swing, posespace=ps)
    a = np.array([plain.offsets(f) for f in range(1, 41)])
    b = np.array([blended.offsets(f) for f in range(1, 41)])
    assert np.abs(a).max() > 1e-4
    np.testing.assert_allclose(b, a, atol=1e-5 * np.abs(a).max())


def _held(p, jerk):
    """The pose p held (same rotations) while the whole rig jerks sideways from frame 5."""

    def rig(f):
        A = p.reshape(-1, 3, 4).copy()
        if f >= 5:
            A[:, 1, 3] += jerk
        return A.ravel()

    return rig


def test_a_painted_contact_holds_its_vertices_still_in_its_pose(prepared, character):
    """Contact painted on the small sphere's far cap (x > 0.95) for a training pose: held at that
    pose (same rotations, so the blend is that pose's basis) and jerked, those tet vertices do not
    move relative to the rig (1e-9 of the largest offset) while the rest of the flesh does."""
    from core.pipeline import pose_contacts, prepare_pose_space

    p = swing(2 * np.pi)
    mask = (character.rest[:, 0] > 0.95).astype(float)
    ps = prepare_pose_space(prepared, p[None], frames=[9], contacts=[mask])
    stuck = pose_contacts(prepared, p, mask)
    assert ps.contacts == (0, len(stuck)) and len(stuck) > 0
    sim = FrameSimulation(prepared, SolverSettings(), 1, 20, _held(p, 0.3), posespace=ps)
    state = sim.state(12)
    np.testing.assert_allclose(sim.pose_weights(12), [0.0, 1.0], atol=1e-12)
    blended, _ = ps.model.blend(np.array([0.0, 1.0]))
    u = blended.basis() @ state.z
    assert np.abs(u).max() > 1e-4
    assert np.abs(u[stuck]).max() <= 1e-9 * np.abs(u).max()


def test_pose_space_frames_do_not_depend_on_the_order_they_are_asked_for(prepared, character):
    """Bake (in order) equals preview (any order), bit for bit, with pose-space modes too."""
    from core.pipeline import prepare_pose_space

    mask = (character.rest[:, 0] > 0.95).astype(float)
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9], contacts=[mask])
    a = FrameSimulation(prepared, SolverSettings(substeps=2), 1, 30, swing, posespace=ps)
    seq = {f: a.offsets(f) for f in range(1, 31)}
    b = FrameSimulation(prepared, SolverSettings(substeps=2), 1, 30, swing, posespace=ps)
    for f in (25, 3, 30, 1, 17):
        assert np.array_equal(b.offsets(f), seq[f])


def test_physics_skin_leaves_the_poses_out_and_says_so(skinned):
    from core.pipeline import prepare_pose_space

    ps = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9])
    sim = FrameSimulation(skinned, SolverSettings(physics_skin=True), 1, 5, swing, posespace=ps)
    assert sim.posespace is None and any("training poses are not used" in w for w in sim.warnings)


def test_poses_with_the_same_rotations_are_refused_naming_the_frames(prepared):
    from core.pipeline import prepare_pose_space

    p = swing(2 * np.pi)
    moved = p.reshape(-1, 3, 4).copy()
    moved[:, :, 3] += 1.0  # the same pose, the whole rig moved
    with pytest.raises(SimulationError, match="frame 9 and frame 30 have the same bone rotations"):
        prepare_pose_space(prepared, np.array([p, moved.ravel()]), frames=[9, 30])
    with pytest.raises(SimulationError, match="the rest frame and frame 4"):
        prepare_pose_space(prepared, swing(0.0)[None], frames=[4])


def test_pose_space_modes_can_be_cancelled_between_poses(prepared):
    from core.pipeline import Cancelled, prepare_pose_space

    asked = []

    def cancelled():
        asked.append(1)
        return True

    with pytest.raises(Cancelled, match="cancelled; nothing was changed"):
        prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9], cancelled=cancelled)
    assert asked and prepared.posespace is None


def test_the_solver_reports_its_iterations_and_says_when_the_cap_stops_it(prepared):
    """Issue 23: the bake summary's iteration statistics, and one warning line with the frames where
    steps stopped unconverged at the cap; none with the defaults."""
    sim = FrameSimulation(prepared, SolverSettings(), 1, 30, swing)
    sim.offsets(30)
    stats = sim.solver_stats()
    assert stats["steps"] == 29 * SolverSettings().substeps
    assert 0 < stats["mean_iterations"] <= stats["max_iterations"] < stats["iteration_cap"]
    assert stats["unconverged_frames"] == [] and sim.warnings == []

    # One iteration often suffices at the default tolerance: ask for round-off instead.
    capped = FrameSimulation(prepared, SolverSettings(iterations=1, tolerance=1e-13), 1, 30, swing)
    capped.offsets(30)
    stats = capped.solver_stats()
    assert stats["max_iterations"] == 1 and stats["unconverged_steps"] > 0
    lines = [w for w in capped.warnings if "unconverged" in w]
    assert len(lines) == 1 and "frames " in lines[0] and "raise Iterations" in lines[0], capped.warnings


def test_frame_ranges_reads_as_ranges():
    from core.pipeline import frame_ranges

    assert frame_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10" and frame_ranges([]) == ""
