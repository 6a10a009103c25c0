"""The physics skin's drive (core/physskin/drive.py) through the frame loop (issue 15): its correction,
complementary jiggle on top of it, invariance, and frames independent of the order they are asked for."""

import numpy as np
import pytest

from core.pipeline import FrameSimulation, SolverSettings
from tests.core.pipeline.characters import _carried, prepare, swing, two_spheres


@pytest.fixture(scope="module")
def skinned(tmp_path_factory):
    """The two-sphere character with its bones' segments (the physics skin pins around them)."""
    return prepare(two_spheres(segments=True), tmp_path_factory.mktemp("p"))


def test_physics_skin_alone_is_its_correction_and_nothing_at_rest(skinned):
    """Secondary Motion off: the offsets are the physics skin's correction to LBS, no jiggle.

    At the rest pose (frame 0 of the swing) they are LBS's round-off (1e-6 of the
    size in float32); while the joint bends they are not zero.
    """
    from core.physskin.rig import render_correction

    solver = SolverSettings(physics_skin=True, secondary_motion=False)
    sim = FrameSimulation(skinned, solver, 0, 12, swing)
    assert np.abs(sim.offsets(0)).max() <= 1e-6
    c = sim.drive.physics.correction(sim.rig(12), sim.drive.positions(12))
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


def test_the_ground_pushes_the_physics_skin_out_and_the_jiggle_on_top_of_it(skinned):
    """Ground and Physics Skin on (issue 30 item 4): the drive passes the ground to the skin's solve and to
    the jiggle; free surface vertices stay above it (1 % of the size) where the rig does not pin them
    below it, a frame's skin is the same bits scrubbed to or baked in order, and the flesh is bounded."""
    X = skinned.model.X
    floor = float(skinned.mesh.X[:, 2].min()) + 0.05 * float(np.ptp(X[:, 2]))
    solver = SolverSettings(physics_skin=True, ground=True, ground_height=floor)
    sim = FrameSimulation(skinned, solver, 1, 12, swing)
    assert sim.drive.obstacles is not None and sim.drive.simulator.contact is not None
    skin = sim.drive.physics.skin
    free = np.setdiff1d(skinned.mesh.boundary_vertices(), skin.pins)
    scrubbed = FrameSimulation(skinned, solver, 1, 12, swing).drive.positions(9)
    for f in range(1, 13):
        x = sim.drive.positions(f)
        assert x[free, 2].min() >= floor - 0.01 * sim.size
        assert np.isfinite(sim.offsets(f)).all() and np.abs(sim.state(f).z).max() < 1e3 * sim.size
    assert np.array_equal(sim.drive.positions(9), scrubbed)
    plain = FrameSimulation(skinned, SolverSettings(physics_skin=True), 1, 12, swing).drive.positions(9)
    assert plain[free, 2].min() < floor - 0.02 * sim.size  # without the ground the skin goes through it


def test_a_bake_says_which_frames_the_physics_skin_stopped_short_on(skinned):
    """Frames whose volume solve ran into its cap depend on it: the simulation's warnings name them, and
    stay silent when every frame converged (the swing at the default cap).  One step allowed forces the cap
    on every bent frame; the frame at rest converges at once and is not named."""
    solver = SolverSettings(physics_skin=True, secondary_motion=False)
    sim = FrameSimulation(skinned, solver, 0, 12, swing)
    for f in range(13):
        sim.offsets(f)
    assert not any("physics skin" in w for w in sim.warnings)
    short = FrameSimulation(skinned, solver, 0, 12, swing)
    short.drive.physics.volume_steps = 1
    short.drive.forget_after(-1)
    for f in range(13):
        short.offsets(f)
    (line,) = [w for w in short.warnings if "physics skin" in w]
    (note,) = short.drive.notes()
    assert 0 not in note[1] and 12 in note[1]
    assert "stopped short of converging at frames " in line and "cap of 1 steps" in line and "Young's Modulus" in line


def test_a_solve_that_finds_no_shape_fails_the_frame_in_one_line(skinned, monkeypatch):
    """Where the physics skin's iterations find no answer (a material far too soft for the pose or its
    weight makes the system too ill-conditioned; here forced by allowing one iteration), the frame raises
    a SimulationError whose one line says which frame and what to change, not a bare ArithmeticError."""
    import core.physskin.solve as solve
    from core.errors import SimulationError

    sim = FrameSimulation(skinned, SolverSettings(physics_skin=True, secondary_motion=False), 0, 12, swing)
    monkeypatch.setattr(solve, "MAX_ITERATIONS", 1)
    with pytest.raises(SimulationError) as caught:
        sim.drive.positions(12)
    line = str(caught.value)
    assert "\n" not in line and "frame 12" in line and "Young's Modulus" in line
    assert isinstance(caught.value.__cause__, ArithmeticError)
