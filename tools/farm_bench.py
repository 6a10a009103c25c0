"""Time a farm job against desk bakes on this machine: N shots, each holding the same two characters.

    .venvs/main/bin/python -m tools.farm_bench [--shots 6] [--frames 1-48] [--out farm_bench.json]

Each shot is saved in a folder of its own, so a desk bake prepares its character itself.  Desk: every
shot x object baked one after another with the plain command (each prepares).  Farm: ``skinmodes farm``
writes the bundle and ``openjd run`` runs it whole (one task at a time, as one worker would); each
task's wall time is read from the runner's log.  Every task is a process of its own (the bpy module
stands in for the Blender binary: testkit/farm_jobs.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testkit.blender_process import run_and_leave
from testkit.farm_jobs import build_shot, fake_blender
from testkit.real_characters import install_addon

CHARACTERS = [("Creature", 64, 0.25), ("Blob", 40, 0.35)]
SETTINGS = {"target_tets": 30000, "modes": 24, "clusters": 100}
STAMP = re.compile(r"^(\d+):(\d\d):(\d\d\.\d+)\s+(.*)$")


def seconds(stamp: re.Match[str]) -> float:
    return 3600 * int(stamp[1]) + 60 * int(stamp[2]) + float(stamp[3])


def task_times(log: str) -> dict[str, list[float]]:
    """Per step, each task's wall time (its process, start to exit) from ``openjd run``'s log."""
    out: dict[str, list[float]] = {}
    step, start = "", 0.0
    for line in log.splitlines():
        m = STAMP.match(line)
        if not m:
            continue
        text = m[4]
        if text.startswith("Open Job Description CLI: Running step"):
            step = text.split("'")[1]
        elif text.startswith("Command started as pid"):
            start = seconds(m)
        elif re.match(r"Process pid \d+ exited", text):
            out.setdefault(step, []).append(seconds(m) - start)
    return out


def desk(blender: Path, shots: list[Path], frames: str) -> float:
    """Every shot x object baked one after another, each preparing: the wall time."""
    t0 = time.perf_counter()
    for shot in shots:
        for name, *_ in CHARACTERS:
            args = ["-b", "--command", "skinmodes", "bake", "--blend", str(shot), "--object", name, "--frames", frames]
            out = subprocess.run([str(blender), *args], capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"desk bake of {shot.name}:{name} failed: {out.stderr.strip().splitlines()[-1]}")
    return time.perf_counter() - t0


def farm(blender: Path, shots: list[Path], frames: str, work: Path) -> tuple[float, dict[str, list[float]], dict]:
    """Write the bundle and run it whole: (wall time of the run, task times per step, the job report)."""
    gen = [str(blender), "-b", "--command", "skinmodes", "farm", *map(str, shots), "--out", str(work / "bundle")]
    out = subprocess.run([*gen, "--frames", frames, "--blender", str(blender)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"skinmodes farm failed: {out.stderr.strip().splitlines()[-1]}")
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "openjd", "run", str(work / "bundle" / "template.yaml")], capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    if run.returncode:
        raise SystemExit(f"openjd run failed:\n{run.stdout[-3000:]}")
    job = json.loads((work / "bundle" / "cache" / "reports" / "job.json").read_text())
    return wall, task_times(run.stdout), job


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shots", type=int, default=6)
    ap.add_argument("--frames", default="1-48")
    ap.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="skinmodes-farm-bench-") as tmp:
        work = Path(tmp)
        profile = Path(os.environ["BLENDER_USER_RESOURCES"])  # run_and_leave's throw-away profile
        install_addon(work)
        first, last = (int(x) for x in args.frames.split("-"))
        shots = []
        for i in range(args.shots):
            (work / f"shot{i}").mkdir()
            shots.append(work / f"shot{i}" / f"shot{i}.blend")
            hopped = [(name, detail, hop + 0.05 * i) for name, detail, hop in CHARACTERS]  # each its own animation
            build_shot(shots[-1], hopped, (first, last), **SETTINGS)
        blender = fake_blender(work / "blender", profile)
        desk_s = desk(blender, shots, args.frames)
        farm_s, tasks, job = farm(blender, shots, args.frames, work)
    bakes = [t for step, times in tasks.items() if step.startswith("Bake") for t in times]
    figures = {
        "shots": args.shots,
        "characters": len(CHARACTERS),
        "frames": args.frames,
        "desk_s": round(desk_s, 1),
        "farm_s": round(farm_s, 1),
        "desk_preparations": args.shots * len(CHARACTERS),
        "farm_preparations": job["prepared"],
        "prepare_task_s": round(sum(tasks["Prepare"]) / len(tasks["Prepare"]), 2),
        "bake_task_s": round(sum(bakes) / len(bakes), 2),
        "report_task_s": round(sum(tasks["Report"]), 2),
    }
    print(json.dumps(figures, indent=1))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-farm-bench-profile-")
