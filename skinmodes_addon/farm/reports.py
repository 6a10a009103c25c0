"""Each farm task's summary as a file, their merge into one job report, and progress lines a farm shows.

A task run with ``--report DIR`` writes ``DIR/<command>-<shot>-<object>-<hash>.json``
(its exit code and JSON summary, or its one-line error), whatever the
outcome; ``skinmodes report DIR`` merges them into ``DIR/job.json``.
``--progress openjd`` adds the lines Open Job Description runners read
from a task's output (``openjd_status:``, ``openjd_progress:``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..bake.naming import safe_name
from ..core.errors import SkinmodesError

JOB_REPORT = "job.json"
# Of a bake's progress, the share before its frames (reading, loading the prepared model).
BEFORE_FRAMES = 0.2


def report_path(folder: str | Path, command: str, blend: str, object_name: str) -> Path:
    """The report file of one task: readable, and unique per (command, .blend path, object)."""
    digest = hashlib.sha256(f"{os.path.abspath(blend)}\n{object_name}".encode()).hexdigest()[:8]
    stem = safe_name(Path(blend).stem)
    return Path(folder) / f"{command}-{stem}-{safe_name(object_name)}-{digest}.json"


def write_report(
    folder: str | Path, command: str, blend: str, object_name: str, code: int, summary: dict | None, error: str
) -> Path:
    """Write one task's report (atomically: a merge never reads half a file); returns its path."""
    path = report_path(folder, command, blend, object_name)
    payload = {"command": command, "blend": os.path.abspath(blend), "object": object_name, "exit_code": code}
    payload.update({"summary": summary} if summary is not None else {"error": error})
    _write_json(path, payload)
    return path


def _write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def merge_reports(folder: str | Path) -> dict[str, object]:
    """Merge every task report in ``folder`` into ``folder/job.json``; returns the job report.

    Counts prepares and bakes, sums their seconds, lists every failure;
    raises a one-line :class:`SkinmodesError` when there is nothing to merge.
    """
    folder = Path(folder)
    tasks = []
    for path in sorted(folder.glob("*.json")):
        if path.name != JOB_REPORT:
            tasks.append(json.loads(path.read_text(encoding="utf-8")))
    if not tasks:
        raise SkinmodesError(f"no task reports in {folder}; did the job's tasks run with --report {folder}?")
    done = [t for t in tasks if t["exit_code"] == 0]
    by = {c: [t for t in done if t["command"] == c] for c in ("prepare", "bake")}
    report: dict[str, object] = {
        "tasks": len(tasks),
        "prepared": len(by["prepare"]),
        "baked": len(by["bake"]),
        "failed": [
            {k: t[k] for k in ("command", "blend", "object", "exit_code", "error")} for t in tasks if t not in done
        ],
        "prepare_seconds": round(sum(float(t["summary"]["seconds"]) for t in by["prepare"]), 3),
        "bake_seconds": round(sum(float(t["summary"]["seconds"]) for t in by["bake"]), 3),
        "frames_baked": sum(int(t["summary"]["frames_baked"]) for t in by["bake"]),
        "files": [f for t in by["bake"] for f in t["summary"]["files"]],
        "reports": tasks,
    }
    _write_json(folder / JOB_REPORT, report)
    return report


def openjd_progress(command: str) -> Callable[[str, float], None]:
    """A progress listener printing ``openjd_status:`` when the stage changes and ``openjd_progress:`` (0-100).

    On stderr: the command's stdout is its JSON summary alone, and OpenJD
    runners read a task's stdout and stderr together.  A bake's preparing
    stages fill the first fifth of its bar, its frames the rest.
    """
    shown: list[str] = []

    def listener(stage: str, fraction: float) -> None:
        if command == "bake":
            done = (
                BEFORE_FRAMES + (1 - BEFORE_FRAMES) * fraction if stage == "baking frames" else BEFORE_FRAMES * fraction
            )
        else:
            done = fraction
        if shown[-1:] != [stage]:
            shown.append(stage)
            print(f"openjd_status: skinmodes {command}: {stage}", file=sys.stderr, flush=True)
        print(f"openjd_progress: {100 * min(max(done, 0.0), 1.0):.1f}", file=sys.stderr, flush=True)

    return listener
