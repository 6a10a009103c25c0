"""Flesh that jiggles: each soft region's answer to its rig's acceleration at the Wobble (issue 37).

Real characters read out of Blender by the add-on (``tools.rig_dump``, in a child process), prepared and
simulated by the core with the default settings at Wobble 3 Hz and 1 Hz (``testkit/flesh.py``): per soft
region the ratio of its peak offset to a / (2 pi f)^2 and the frequency it rings at after the stop, the
appendage tips, the grounded flesh, the worst one-bone region's change of extent along its bone, and the
step's cost.  The limits are ``tests/testkit/test_flesh.py``'s.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from testkit.build_extension import ROOT
from testkit.flesh import FleshReport, measure

from .common import Context, in_scratch_folder

FULL = ("husky", "stag", "frog", "bee", "dolphin", "platformer", "creature")
QUICK = ("creature",)
WOBBLES = (3.0, 1.0)


def run(ctx: Context) -> dict:
    return in_scratch_folder("skinmodes-bench-flesh-", lambda work: _run(ctx, work))


def _run(ctx: Context, work: Path) -> dict:
    names = QUICK if ctx.quick else FULL
    rigs = work / "rigs"
    cmd = [sys.executable, "-m", "tools.rig_dump", "--out", str(rigs), "--only", *names]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"rig dump failed: {done.stderr[-2000:]}")
    rows = []
    for hz in WOBBLES[:1] if ctx.quick else WOBBLES:
        for name in names:
            r = measure(name, hz, rigs=rigs, cache=work / "cache")
            ctx.log(
                f"  flesh: {name} at {hz:g} Hz: "
                + ", ".join(f"{k} {v[0]:.2f} ({v[3]:.2f} Hz)" for k, v in r.soft.items())
            )
            rows.append(row(r))
    return {"characters": rows}


def row(r: FleshReport) -> dict:
    """The report's figures as JSON (the per-frame series left out)."""
    d = dataclasses.asdict(r)
    d.pop("series")
    # NaN (a region with no mode of its own) is not JSON: None.
    d["spectrum"] = {
        k: {**v, "lowest_hz": None if v["lowest_hz"] != v["lowest_hz"] else v["lowest_hz"]}
        for k, v in d["spectrum"].items()
    }
    bone, change = r.worst_extent
    d["worst_extent"] = {"bone": bone, "change": change}
    d.pop("extents")
    return d


def report_lines(p: dict) -> list[str]:
    L = [
        "## Flesh that jiggles: soft regions against a/(2πf)² (issue 37)",
        "",
        "Real characters with the default settings (`bench/flesh.py`, `testkit/flesh.py`), each clip followed by "
        "a 1.5 s hold.  Soft region: its peak offset (95th percentile over its render vertices) over a/(2πf)² "
        "with a its own peak rig acceleration (the issue asks [1/3, 3]), and the frequency it rings at after the "
        "stop (the issue: Wobble ± 25 %).  Offsets in % of the body diagonal; extent: the worst one-bone "
        "region's change of length along its bone (the issue: ≤ 10 %).",
        "",
        "| character | Wobble | soft region: ratio (peak %, decay Hz) | tips % | grounded % | worst extent "
        "| max % (reported) | settled % | ms per frame |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in p["characters"]:
        soft = "; ".join(f"{k} {v[0]:.2f} ({v[1]:.2f} %, {v[3]:.2f} Hz)" for k, v in r["soft"].items())
        tips = ", ".join(f"{k} {v:.2f}" for k, v in r["tips"].items()) or "—"
        w = r["worst_extent"]
        L.append(
            f"| {r['name']} | {r['wobble_hz']:g} Hz | {soft} | {tips} | {r['grounded']:.3f} | {w['bone']} "
            f"{100 * w['change']:.1f} % | {r['max_pct']:.2f} ({r['reported_pct']:.2f}) | {r['settled_pct']:.3f} "
            f"| {r['ms_per_frame']:.1f} |"
        )
    L += [
        "",
        "Where the subspace can move each region (issue 37, item 1; `core/validation/region_spectrum.py`): the "
        "model's natural modes at the Wobble's stiffness (fibers at theirs); a region's own modes hold at least "
        "half their kinetic energy in it.  Lowest own mode against the Wobble; its share of all the modes' "
        "energy against its share of the mass.",
        "",
        "| character | Wobble | region: lowest own mode Hz (own modes) · share of the modes / of the mass |",
        "|---|---|---|",
    ]
    for r in p["characters"]:
        cells = "; ".join(
            f"{k} {'—' if v['lowest_hz'] is None else format(v['lowest_hz'], '.2f')} ({v['own']}) · "
            f"{100 * v['share']:.1f} % / {100 * v['mass']:.1f} %"
            for k, v in r.get("spectrum", {}).items()
        )
        L.append(f"| {r['name']} | {r['wobble_hz']:g} Hz | {cells} |")
    return [*L, ""]


def behind(p: dict) -> list[str]:
    out = []
    for r in p["characters"]:
        hz = r["wobble_hz"]
        for k, v in r["soft"].items():
            if hz == 3.0 and not (1 / 3 <= v[0] <= 3.0 and abs(v[3] / hz - 1.0) <= 0.25):
                out.append(f"{r['name']} {k}: {v[0]:.2f} of a/(2πf)², rings at {v[3]:.2f} Hz (Wobble {hz:g} Hz).")
        if r["worst_extent"]["change"] > 0.10:
            w = r["worst_extent"]
            out.append(
                f"{r['name']} at {hz:g} Hz: {w['bone']}'s flesh changes its length by {100 * w['change']:.1f} %."
            )
        short = [f"{k} {v:.2f} %" for k, v in r["tips"].items() if hz == 3.0 and v < 1.0]
        if short:
            out.append(f"{r['name']}: appendage tips under 1 %: {', '.join(short)}.")
    return out
