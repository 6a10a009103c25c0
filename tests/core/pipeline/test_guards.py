"""The guards (core/pipeline/guards.py): what the frame loop says about the rig and the motion.

Cuts vs fast motion (issue 23, item 6b): a discontinuity of the rig is a cut, a fast periodic flap is not.

The guard (core/pipeline/guards.py ``RigGuard.check``) looks at the rig's second difference
(JUMP_WARNING of the character's size per frame), then keeps only steps that are discontinuities:
more than CUT_RATIO times the same probe point's steps within CUT_WINDOW frames.  A wasp's wing
flapping 45 % of the body per frame accelerates past the threshold every frame but repeats its steps.
"""

import itertools

import numpy as np
import pytest

import core.pipeline.guards
from core.model.rig import rig_matrix, rig_parameters
from core.pipeline import FrameSimulation, SolverSettings
from core.pipeline.guards import frame_ranges
from tests.core.pipeline.characters import _teleport, swing

TIP_STEP = 0.45  # the wing tip's largest step per frame, as a share of the character's size (the wasp's)


def flap(period: float, phase: float, amplitude: float, teleport_at: int | None = None):
    """Bones 1 and 2 (the wing) flap about z, sin(2 pi f / period + phase) x amplitude; optionally the
    whole rig jumps 3 m (about 2.5 sizes) at ``teleport_at``."""

    def rig(f: int) -> np.ndarray:
        A = np.tile(np.eye(4)[:3], (3, 1, 1))
        a = amplitude * np.sin(2 * np.pi * f / period + phase)
        c, s = np.cos(a), np.sin(a)
        for b in (1, 2):
            A[b, :, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1.0]]
        if teleport_at is not None and f >= teleport_at:
            A[:, 1, 3] += 3.0
        return rig_parameters(A)

    return rig


def _amplitude(prepared, period: float, phase: float) -> float:
    """The flap amplitude (rad) whose largest tip step over frames 0..40 is TIP_STEP of the size."""
    sim = FrameSimulation(prepared, SolverSettings(), 1, 2, flap(period, phase, 1.0))
    size, probe = sim.size, sim.guard.probe_rig
    frames = range(41)
    # Tip steps are chords of the angle steps: scale the angle until the largest chord is TIP_STEP.
    lo, hi = 0.0, 3.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        x = [probe @ rig_matrix(flap(period, phase, mid)(f)) for f in frames]
        steps = max(np.linalg.norm(b - a, axis=1).max() for a, b in itertools.pairwise(x))
        lo, hi = (mid, hi) if steps < TIP_STEP * size else (lo, mid)
    return 0.5 * (lo + hi)


def _jumps(prepared, rig, end: int = 40) -> list[str]:
    sim = FrameSimulation(prepared, SolverSettings(), 0, end, rig)
    sim.offsets(end)
    return [w for w in sim.warnings if "the rig jumps" in w]


# Periods of 3, 4 and 6 frames; the phase pi/4 samples a 4-frame sine as a square wave (held, step,
# held, step): the hardest case, each step twice its neighbours.
CASES = [(3.0, 0.0), (4.0, 0.0), (4.0, np.pi / 4), (6.0, 0.3)]


@pytest.mark.parametrize("period,phase", CASES)
def test_a_fast_periodic_flap_is_not_a_cut(prepared, period, phase, monkeypatch):
    rig = flap(period, phase, _amplitude(prepared, period, phase))
    assert _jumps(prepared, rig) == []
    # The flap does pass the acceleration threshold: with the discontinuity test off
    # (every step counts as isolated) it is called a cut, as before issue 23.
    monkeypatch.setattr(core.pipeline.guards, "CUT_RATIO", 0.0)
    assert len(_jumps(prepared, rig)) == 1


@pytest.mark.parametrize("period,phase", CASES[1:3])
def test_a_cut_during_a_flap_is_still_reported_with_its_frame(prepared, period, phase):
    rig = flap(period, phase, _amplitude(prepared, period, phase), teleport_at=17)
    (line,) = _jumps(prepared, rig)
    assert line.startswith("frame 17: the rig jumps by") and "Reset at Cuts" in line


def test_with_reset_at_cuts_a_flap_restarts_at_most_once_at_its_start(prepared):
    """Restarting cannot wait for the frames after: only the frames before tell a flap.  The square
    wave's first step follows a held frame, so it may restart there once; never again after."""
    period, phase = 4.0, np.pi / 4
    rig = flap(period, phase, _amplitude(prepared, period, phase))
    sim = FrameSimulation(prepared, SolverSettings(reset_at_cuts=True), 0, 40, rig)
    sim.offsets(40)
    restarts = [int(w.split(":")[0].split()[1]) for w in sim.warnings if "restarts at rest" in w]
    assert len(restarts) <= 1 and all(f <= period for f in restarts), restarts
    cut = flap(period, phase, _amplitude(prepared, period, phase), teleport_at=17)
    sim = FrameSimulation(prepared, SolverSettings(reset_at_cuts=True), 0, 40, cut)
    sim.offsets(40)
    assert any(w.startswith("frame 17:") and "restarts at rest" in w for w in sim.warnings)


def test_the_guard_says_when_the_motion_is_implausible(prepared):
    calm = FrameSimulation(prepared, SolverSettings(), 1, 30, swing)
    calm.offsets(30)
    assert calm.warnings == [] and 0 < calm.max_offset < 0.5

    def whip(f):
        return swing(40.0 * f)

    wild = FrameSimulation(prepared, SolverSettings(wobble_hz=0.2, damping_ratio=0.0), 1, 30, whip)
    wild.offsets(30)
    offset = [w for w in wild.warnings if "secondary motion reached" in w]
    guard = [w for w in wild.warnings if "solver step" not in w]  # the solver may add its convergence line
    assert len(offset) == 1 and all(w.startswith("frame ") for w in guard)


def test_a_rig_jump_is_reported_with_its_frame(prepared):
    sim = FrameSimulation(prepared, SolverSettings(), 1, 20, _teleport)
    sim.offsets(20)
    jumps = [w for w in sim.warnings if "the rig jumps by" in w]
    assert len(jumps) == 1 and jumps[0].startswith("frame 10: the rig jumps by") and "Reset at Cuts" in jumps[0]
    calm = FrameSimulation(prepared, SolverSettings(), 1, 20, swing)
    calm.offsets(20)
    assert calm.warnings == []


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


def test_frame_ranges_reads_as_ranges():
    assert frame_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10" and frame_ranges([]) == ""
