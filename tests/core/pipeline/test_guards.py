"""Cuts vs fast motion (issue 23, item 6b): a discontinuity of the rig is a cut, a fast periodic flap is not.

The guard (core/pipeline.py ``FrameSimulation._rig_guard``) looks at the rig's second difference
(JUMP_WARNING of the character's size per frame), then keeps only steps that are discontinuities:
more than CUT_RATIO times the same probe point's steps within CUT_WINDOW frames.  A wasp's wing
flapping 45 % of the body per frame accelerates past the threshold every frame but repeats its steps.
"""

import itertools

import numpy as np
import pytest

import core.pipeline
from core.model.rig import rig_parameters
from core.pipeline import CharacterInput, FrameSimulation, MaterialSettings, SolverSettings, SubspaceSettings
from core.pipeline import prepare_character as prepare
from core.validation.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")
TIP_STEP = 0.45  # the wing tip's largest step per frame, as a share of the character's size (the wasp's)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    V, F = join(uv_sphere(20, 0.5, (0, 0, 0)), uv_sphere(20, 0.4, (0.7, 0, 0)))
    inp = CharacterInput(rest=V, faces=F, bone_weights=chain_weights(V, np.array([-0.5, 0.5, 1.1])))
    return prepare(inp, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path_factory.mktemp("c"))


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
    size, probe = sim.simulator.size, sim._probe_rig
    frames = range(41)
    # Tip steps are chords of the angle steps: scale the angle until the largest chord is TIP_STEP.
    lo, hi = 0.0, 3.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        x = [probe @ core.pipeline.rig_matrix(flap(period, phase, mid)(f)) for f in frames]
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
    monkeypatch.setattr(core.pipeline, "CUT_RATIO", 0.0)
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
