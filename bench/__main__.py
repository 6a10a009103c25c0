"""The benchmark suite: ``python3.11 tasks.py bench [--quick] [--full] [--only a,b] [--out DIR]``.

Runs every section in one process, one after the other, so that ratios are
measured side by side, and writes ``results.json`` (machine, versions, every
figure with median/min/max/repeats) and ``REPORT.md`` (tables, plots, and a
plain statement of where we are behind a peer or target) into ``--out``
(default ``bench/``; ``--quick`` defaults to ``bench/quick/``, which git
ignores).  ``--full`` adds Table 1's 104k-vertex displacement baseline (about
ten more minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from testkit.blender_process import run_and_leave

from . import (
    accuracy,
    characters,
    contact,
    convergence,
    flesh,
    in_blender,
    locomotion,
    meshing,
    physskin,
    posespace,
    rotstrain,
    scaling,
    side_by_side,
    table1,
    wheremoves,
    whole_characters,
)
from .common import BENCH, Context, cpu_name, jsonable, machine_info, write_json
from .peers.pinning import pin_threads
from .report import update_readme, write_report

SECTIONS = {
    "scaling": scaling.run,
    "accuracy": accuracy.run,
    "peers": side_by_side.run,
    "table1": table1.run,
    "meshing": meshing.run,
    "physskin": physskin.run,
    "posespace": posespace.run,
    "locomotion": locomotion.run,
    "rotstrain": rotstrain.run,
    "contact": contact.run,
    # The last four import bpy into this process, so they run after the others.
    "characters": characters.run,
    "whole_characters": whole_characters.run,
    "wheremoves": wheremoves.run,
    "flesh": flesh.run,
    "convergence": convergence.run,
    "blender": in_blender.run,
}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks that every section still runs")
    ap.add_argument("--full", action="store_true", help="include the 104k-vertex displacement baseline")
    ap.add_argument("--only", default="", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--out", type=Path, default=None, help="output folder")
    ap.add_argument("--report-only", action="store_true", help="re-render REPORT.md from results.json in --out")
    args = ap.parse_args(argv)
    if args.report_only:
        out = args.out or BENCH
        res = json.loads((out / "results.json").read_text())
        write_report(out / "REPORT.md", res)
        if out == BENCH and not res.get("quick") and set(res["sections"]) == set(SECTIONS) and not res.get("errors"):
            update_readme(BENCH.parent / "README.md", res)
        return 0
    only = [s for s in args.only.split(",") if s]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown section(s) {', '.join(unknown)}")
    out = args.out or (BENCH / "quick" if args.quick else BENCH)
    out.mkdir(parents=True, exist_ok=True)
    # One BLAS/OpenMP thread in this process and every child, whether or not tasks.py launched us.
    pin_threads()
    last: dict = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    if last.get("quick") != args.quick:
        last = {}
    ctx = Context(
        quick=args.quick,
        out=out,
        peer_python=os.environ.get("SKINMODES_BENCH_PEER_PYTHON") or None,
        log=lambda s: print(s, flush=True),
        previous=last.get("sections", {}),
        previous_dates=last.get("section_dates", {}),
    )
    started = time.perf_counter()
    previous: dict = {}
    if only and last:
        # Re-running some sections keeps the others' figures (each section says when it ran).
        previous = last
    results: dict = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3.11 tasks.py bench" + "".join(f" {a}" for a in argv),
        "quick": args.quick,
        "machine": machine_info(),
        "sections": {},
        "section_seconds": {},
        "errors": {},
    }
    for key in ("sections", "section_seconds", "section_dates", "section_machines"):
        results.setdefault(key, {}).update(previous.get(key, {}))
    for name in results["sections"]:
        # Runs before machines were recorded per section: say so rather than claim this machine.
        results["section_machines"].setdefault(name, "not recorded")
    if previous:
        # The full run's command stays; re-runs of some sections are listed (the report dates each section).
        results["command"] = previous["command"]
        results["reruns"] = [*previous.get("reruns", []), " ".join(argv)]
    for name, fn in SECTIONS.items():
        if only and name not in only:
            continue
        results["section_dates"][name] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        results["section_machines"][name] = cpu_name(results["machine"])
        print(f"[bench] {name}", flush=True)
        t0 = time.perf_counter()
        try:
            results["sections"][name] = fn(ctx, full=args.full) if name == "table1" else fn(ctx)
        except Exception as exc:  # one broken section must not hide the others' figures
            traceback.print_exc()
            results["errors"][name] = f"{type(exc).__name__}: {exc}"
        results["section_seconds"][name] = time.perf_counter() - t0
        results["total_seconds"] = time.perf_counter() - started
        results["plots"] = sorted(set(previous.get("plots", [])) | set(ctx.plots))
        write_json(out / "results.json", results)  # after every section: a crash keeps what was measured
    write_report(out / "REPORT.md", jsonable(results))
    if out == BENCH and not args.quick and set(results["sections"]) == set(SECTIONS) and not results["errors"]:
        update_readme(BENCH.parent / "README.md", jsonable(results))
    print(f"[bench] wrote {out / 'results.json'} and {out / 'REPORT.md'} in {results['total_seconds']:.0f} s")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    # The characters and Blender sections import bpy: a throw-away profile keeps the
    # user's Blender config untouched, and the process leaves without bpy's teardown.
    run_and_leave(main, "skinmodes-bench-profile-")
