"""Does the flesh jiggle at the Wobble asked? Issue 37's limits on seven real characters (testkit/flesh.py).

The characters are read out of Blender by ``tools.rig_dump`` (the add-on's own reading, planted feet and
masks included) into a temporary folder, then prepared and simulated by the core with the default settings:
two quadrupeds (the husky galloping, the stag galloping), a fat frog jumping, a bee flying with separate
wings, a dolphin swimming with fins, a platformer character made of one-bone pieces, and the demo creature.
Each clip ends in a hold of 1.5 s.

The limits, with their reasons:

- soft regions (torso, belly, body, a fleshy head): peak offset within [1/3, 3] of a / (2 pi f)^2 with a their
  own peak rig acceleration (the issue's band: a damped oscillator sags a / (2 pi f)^2, more or less as the
  motion is slow or sudden); their free decay after the stop within 25 % of the Wobble;
- appendage tips >= 1 % of the body diagonal; grounded flesh <= 0.5 %;
- no one-bone region's extent along its bone changes by more than 10 %, at the default Wobble and at 1 Hz;
- plausibility: max <= 25 %, first frame <= 1 %, <= 1 % one second after the stop;
- the reported max within 10 % of the played one (the same frames, the same size).

What is short today is listed in :data:`SHORT` with its measured figure, and not asserted; every other figure
is.  The measured table is printed (``-s``) and goes to the bench's "where it moves" section.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from testkit.build_extension import ROOT
from testkit.flesh import FleshReport, markdown, measure, spectrum_markdown

pytestmark = pytest.mark.slow

NAMES = ("husky", "stag", "frog", "bee", "dolphin", "platformer", "creature")
RATIO = (1.0 / 3.0, 3.0)
DECAY = 0.25
TIP_PCT = 1.0
GROUNDED_PCT = 0.5
EXTENT = 0.10
MAX_PCT, FIRST_PCT, SETTLED_PCT = 25.0, 1.0, 1.0
REPORTED = 0.10

# (character, figure) -> what was measured when it was last short (issue 37, open).  A figure listed here is
# reported, not asserted; a figure not listed is asserted.
SHORT = {
    ("husky", "tips"): "tail tip 0.66 % < 1 % (a / (2 pi f)^2 at the tip: 5.2 %)",
    ("husky", "extent"): "Ear3.R 12.8 %",
    ("husky", "extent 1 Hz"): "Ear3.R 71 %",
    ("stag", "extent"): "Tail3 19.3 %",
    ("stag", "extent 1 Hz"): "Tail3 62 %",
    ("frog", "extent"): "Head 12.7 %",
    ("frog", "extent 1 Hz"): "Head 34 %",
    ("frog", "plausible"): "max 25.0 % (the landing)",
    ("bee", "decay"): "body rings at 4.3 Hz (+44 %)",
    ("bee", "extent 1 Hz"): "Body 27 %",
    ("dolphin", "tips"): "tail 0.63 %, flippers 0.04 % (a / (2 pi f)^2 there: 2.0 %, 0.26 %)",
    ("platformer", "decay"): "body 3.78 Hz (+26 %)",
    ("platformer", "extent"): "Ear3.R 20.8 %",
    ("platformer", "extent 1 Hz"): "Ear3.L 46 %",
    ("creature", "decay"): "belly 3.74 Hz (+24.7 %, at the limit)",
}


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    """(the rig dumps' folder, a model cache folder) for the seven characters (read once, in Blender)."""
    rigs = tmp_path_factory.mktemp("rigs")
    cmd = [sys.executable, "-m", "tools.rig_dump", "--out", str(rigs), "--only", *NAMES]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return rigs, tmp_path_factory.mktemp("flesh-cache")


@pytest.fixture(scope="module")
def reports(dumped):
    """{(name, wobble): FleshReport} for the seven characters at 3 Hz and 1 Hz."""
    rigs, cache = dumped
    out = {(n, hz): measure(n, hz, rigs=rigs, cache=cache) for n in NAMES for hz in (3.0, 1.0)}
    print("\n" + markdown([out[n, 3.0] for n in NAMES]) + "\n" + markdown([out[n, 1.0] for n in NAMES]))
    print(spectrum_markdown([out[n, hz] for hz in (3.0, 1.0) for n in NAMES]))
    return out


def _check(name: str, figure: str, ok: bool, text: str) -> None:
    """Assert a figure unless it is a known shortfall (then it is only reported)."""
    if (name, figure) in SHORT:
        print(f"{name} {figure}: known short ({SHORT[name, figure]}); now {text}")
        return
    assert ok, f"{name} {figure}: {text}"


@pytest.mark.parametrize("name", NAMES)
def test_soft_regions_answer_at_the_wobble(reports, name):
    r: FleshReport = reports[name, 3.0]
    assert r.soft, name
    for region, (ratio, peak, expect, hz) in r.soft.items():
        text = f"{region} ratio {ratio:.2f} ({peak:.2f} % against {expect:.2f} %), decay {hz:.2f} Hz"
        assert RATIO[0] <= ratio <= RATIO[1], f"{name}: {text}"
        _check(name, "decay", math.isfinite(hz) and abs(hz / r.wobble_hz - 1.0) <= DECAY, text)


@pytest.mark.parametrize("name", NAMES)
def test_tips_follow_through_and_feet_stay(reports, name):
    r: FleshReport = reports[name, 3.0]
    tips = ", ".join(f"{k} {v:.2f} %" for k, v in r.tips.items())
    _check(name, "tips", all(v >= TIP_PCT for v in r.tips.values()), tips)
    assert r.grounded <= GROUNDED_PCT, f"{name}: grounded {r.grounded:.3f} %"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("hz", [3.0, 1.0])
def test_one_bone_regions_keep_their_length(reports, name, hz):
    bone, change = reports[name, hz].worst_extent
    figure = "extent" if hz == 3.0 else "extent 1 Hz"
    _check(name, figure, change <= EXTENT, f"{bone} {100 * change:.1f} % at {hz:g} Hz")


@pytest.mark.parametrize("name", NAMES)
def test_plausible_and_reported_as_played(reports, name):
    r: FleshReport = reports[name, 3.0]
    text = f"max {r.max_pct:.2f} %, first {r.first_pct:.3f} %, settled {r.settled_pct:.3f} %"
    _check(name, "plausible", r.max_pct <= MAX_PCT, text)
    assert r.first_pct <= FIRST_PCT and r.settled_pct <= SETTLED_PCT, f"{name}: {text}"
    assert abs(r.reported_pct / r.max_pct - 1.0) <= REPORTED, f"{name}: reported {r.reported_pct:.2f} %, {text}"


@pytest.mark.parametrize("name", ["husky", "creature"])
def test_presets_differ_in_the_soft_regions(dumped, name):
    """Jelly is loose, Fat the default, Muscle firmer: in the soft region itself, not only in the tails.  Each
    preset's Wobble, damping and amount (core/settings.py); measured 3.0 x and 2.8-4.2 x apart (peak offset),
    asked at least 2 x, and the region rings faster from one to the next."""
    from core.settings import PRESETS

    rigs, cache = dumped
    peaks, rings = [], []
    for pid in ("JELLY", "FAT", "MUSCLE"):
        v = PRESETS[pid]
        r = measure(name, float(v["wobble_hz"]), rigs, cache, damping_ratio=v["damping_ratio"], amount=v["amount"])
        (_, peak, _, hz), *_ = r.soft.values()
        peaks.append(peak)
        rings.append(hz)
    assert peaks[0] >= 2.0 * peaks[1] and peaks[1] >= 2.0 * peaks[2], (name, peaks)
    assert rings[0] < rings[1] < rings[2], (name, rings)
