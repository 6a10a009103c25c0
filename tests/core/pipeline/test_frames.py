"""The frame loop (core/pipeline/frames.py): any frame in any order, checkpoints, pre-roll, controls, cuts.

A dummy drive defined here runs through FrameSimulation unchanged: a new way of driving the
flesh needs no change to the frame loop (issue 25).
"""

from dataclasses import dataclass

import numpy as np
import pytest

from core.dynamics.simulator import StepReport
from core.errors import SimulationError
from core.pipeline import FrameSimulation, SolverSettings, character_drive, check_frame_range
from tests.core.pipeline.characters import _carried, _teleport, swing


def test_long_runs_keep_checkpoints_not_every_state(prepared, monkeypatch):
    """Over the state budget, forward simulation keeps one state every CHECKPOINT frames plus the newest;
    any frame is still exact (bit for bit)."""
    import core.pipeline.frames
    from core.pipeline import CHECKPOINT

    sim = FrameSimulation(prepared, SolverSettings(), 1, 200, swing)
    monkeypatch.setattr(core.pipeline.frames, "STATE_BUDGET", 0)  # as if 200 frames were 100k
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


def test_empty_range_is_refused(prepared):
    with pytest.raises(SimulationError, match="frame range 10 to 5 is empty"):
        FrameSimulation(prepared, SolverSettings(), 10, 5, swing)


def test_check_frame_range_accepts_one_frame_and_refuses_an_empty_range_in_one_line():
    assert check_frame_range(-3, -3) == (-3, -3)
    assert check_frame_range(np.int64(1), 24.0) == (1, 24) and isinstance(check_frame_range(1, 2)[0], int)
    with pytest.raises(SimulationError) as err:
        check_frame_range(-10, -20)
    assert str(err.value) == "the frame range -10 to -20 is empty; set the end frame after the start frame"


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
    """The swing stops at frame 24 and holds: the flesh rings down onto the pose.

    Default controls (3 Hz, damping ratio 0.2): mass-proportional damping makes every motion's
    amplitude fall as e^(-zeta 2 pi f t) (3.77 per second), whatever its frequency (backward Euler
    damps a little more).  So from the largest offset, reached at or just after the stop, to frame 48
    the flesh has fallen by that envelope.  Tolerance: twice the envelope (several modes beat).
    """

    def stop(f):
        return swing(min(f, 24))

    sim = FrameSimulation(prepared, SolverSettings(), 1, 48, stop)
    sizes = np.array([np.abs(sim.offsets(f)).max() for f in range(1, 49)])
    peak, at = float(sizes.max()), int(sizes.argmax()) + 1
    assert peak > 1e-3 and at < 36
    envelope = float(np.exp(-0.2 * 2.0 * np.pi * 3.0 * (48 - at) / 24.0))
    assert sizes[-1] <= 2.0 * envelope * peak


def test_animated_controls_are_read_per_frame(prepared):
    steady = FrameSimulation(prepared, SolverSettings(), 1, 20, swing)
    same = FrameSimulation(prepared, SolverSettings(), 1, 20, swing, controls=lambda f: (3.0, 0.2))
    assert np.array_equal(steady.offsets(20), same.offsets(20))
    ramp = FrameSimulation(prepared, SolverSettings(), 1, 20, swing, controls=lambda f: (3.0 if f < 10 else 6.0, 0.2))
    assert np.array_equal(ramp.offsets(9), steady.offsets(9))
    assert not np.array_equal(ramp.offsets(20), steady.offsets(20))


class StartsAtRest:
    """A drive that starts at rest on its first sample, whatever the rig's velocity there: the
    character's own drive otherwise (what Reset at Cuts restarts with)."""

    def __init__(self, drive):
        self.drive = drive
        self.size, self.arap, self.jiggles = drive.size, drive.arap, drive.jiggles

    def initial_state(self, sample, before):
        return self.drive.initial_state(sample, None)

    def __getattr__(self, name):
        return getattr(self.drive, name)


def test_reset_at_cuts_restarts_at_rest_on_the_new_pose(prepared):
    """With Reset at Cuts the state at the cut is at rest relative to the rig (z = 0 exactly), and what
    follows equals, bit for bit, a simulation that starts there with the rig at rest: the same solver
    steps from the same state on the same samples."""
    sim = FrameSimulation(prepared, SolverSettings(reset_at_cuts=True), 1, 20, _teleport)
    assert not sim.state(10).z.any()
    assert any(w.startswith("frame 10:") and "restarts" in w for w in sim.warnings)
    drive, _ = character_drive(prepared, SolverSettings(), lambda f: np.asarray(_teleport(f), dtype=np.float64))
    fresh = FrameSimulation(prepared, SolverSettings(), 10, 20, _teleport, drive=StartsAtRest(drive))
    assert np.abs(sim.offsets(20)).max() > 0
    for f in range(10, 21):
        assert np.array_equal(sim.offsets(f), fresh.offsets(f)), f
    # A plain start there extrapolates the rig's velocity at frame 10 instead: another motion.
    moving = FrameSimulation(prepared, SolverSettings(), 10, 20, _teleport)
    assert not np.array_equal(moving.offsets(20), sim.offsets(20))


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


# --- a drive the frame loop has never seen (issue 25) ----------------------------------------------


@dataclass(frozen=True)
class Lag:
    """The dummy drive's state: the flesh's lag z (1, 3) behind the root bone and its velocity v (1, 3);
    the root's position r (3,) and velocity w (3,) at the last step."""

    z: np.ndarray
    v: np.ndarray
    r: np.ndarray
    w: np.ndarray
    step: int = 0


class LaggingRoot:
    """A drive made up for this test: the whole body lags its root bone's translation like a damped
    spring (semi-implicit Euler, x'' = -k x - c x' - the root's acceleration), one offset for every
    point.  It has no modes, no rig weights and no solver of core's."""

    size, arap, jiggles = 1.0, False, True

    def __init__(self, rig, count: int, h: float):
        self.rig, self.count, self.h = rig, count, h

    def sample(self, frame):
        return np.asarray(self.rig(frame)).reshape(-1, 3, 4)[0, :, 3]  # the root bone's translation (3,)

    def initial_state(self, sample, before):
        still = np.zeros((1, 3))
        return Lag(still, still, sample, (sample - before) / self.h)

    def restart(self, state, sample):
        still = np.zeros((1, 3))
        return Lag(still, still, sample, np.zeros(3), state.step)

    def step(self, state, sample, frame, stiffness_scale, damping):
        h, k = self.h, 4.0 * np.pi**2 * stiffness_scale
        w = (sample - state.r) / h
        v = (state.v - h * k * state.z - (w - state.w)) / (1.0 + h * damping + h * h * k)
        return Lag(state.z + h * v, v, sample, w, state.step + 1), StepReport(iterations=1, residual=0.0, energy=0.0)

    def probe_displacement(self, state, frame):
        return state.z

    def displacement(self, state, frame):
        return np.repeat(state.z, self.count, axis=0).astype(np.float32)

    def offset(self, state, frame, displacement):
        return displacement

    def skin_correction(self, frame):
        return None

    def forget_after(self, frame):
        pass

    def notes(self):
        return []


def kicked(f):
    """The swing, its whole rig kicked 0.4 m sideways between frames 3 and 5."""
    A = swing(f).reshape(3, 3, 4).copy()
    A[:, 1, 3] += 0.2 * min(max(f - 3, 0), 2)
    return A.ravel()


def test_a_new_drive_runs_through_the_frame_loop_unchanged(prepared, monkeypatch):
    """The frame loop asks nothing but the Drive protocol: any frame in any order (bit for bit),
    checkpoints, invalidation, the solver's statistics and the offset guard work for a drive it has
    never seen, and the flesh lags the kick and settles."""
    import core.pipeline.frames

    solver = SolverSettings(wobble_hz=1.0, damping_ratio=0.3)
    h = 1.0 / (solver.fps * solver.substeps)

    def run():
        drive = LaggingRoot(kicked, prepared.reconstructor.count, h)
        return FrameSimulation(prepared, solver, 1, 60, kicked, drive=drive)

    a = run()
    seq = {f: a.offsets(f) for f in range(1, 61)}
    assert seq[1].shape == (prepared.reconstructor.count, 3) and seq[1].dtype == np.float32
    assert seq[4][0, 1] < -0.01  # the flesh lags the kick ...
    assert np.abs(seq[60]).max() < 0.05 * np.abs(seq[4]).max()  # ... and settles
    assert a.solver_stats()["steps"] == 59 * solver.substeps
    b = run()
    monkeypatch.setattr(core.pipeline.frames, "STATE_BUDGET", 0)
    for f in (45, 3, 60, 1, 17):
        assert np.array_equal(b.offsets(f), seq[f])
    b.invalidate_after(10)
    assert max(b.cached_frames) <= 10 and np.array_equal(b.offsets(20), seq[20])
    wild = FrameSimulation(
        prepared,
        solver,
        1,
        10,
        lambda f: 10.0 * np.asarray(kicked(f)),
        drive=LaggingRoot(lambda f: 10.0 * np.asarray(kicked(f)), prepared.reconstructor.count, h),
    )
    wild.offsets(10)
    assert any("secondary motion reached" in w for w in wild.warnings), wild.warnings


def test_a_ground_above_the_character_is_said(prepared):
    """Issue 39, item 3: the Ground at height 100 over a character at 0-1 baked without a word.  Now one line
    names the first frame and the depth (the two spheres' lowest point, swung at frame 1, is about 1 m under
    their centre: 101 units under the ground); a ground at the feet, or off, says nothing."""
    above = FrameSimulation(prepared, SolverSettings(ground=True, ground_height=100.0), 1, 4, swing)
    lines = [w for w in above.warnings if "under the Ground" in w]
    depth = float(lines[0].split("starts ")[1].split(" units")[0]) if len(lines) == 1 else 0.0
    assert lines[0].startswith("frame 1: ") and 100.0 <= depth <= 102.0 and "Height is 100" in lines[0], lines
    for settings in (SolverSettings(ground=True, ground_height=-1.5), SolverSettings(ground_height=100.0)):
        sim = FrameSimulation(prepared, settings, 1, 4, swing)
        assert not [w for w in sim.warnings if "under the Ground" in w]
