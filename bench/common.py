"""Shared benchmark machinery: timing with spreads, machine info, results, plots.

Every figure is a :class:`Timing` (median, min, max, repeats) or a plain
number with its unit.  Shared machines are noisy, so comparisons are ratios
of figures measured side by side in the same run, never absolute targets.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from testkit.build_extension import install_dev

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


@dataclass
class Timing:
    """Wall-clock seconds of repeated runs of one thing."""

    median: float
    min: float
    max: float
    repeats: int

    @classmethod
    def of(cls, samples: list[float]) -> Timing:
        a = np.asarray(samples, dtype=np.float64)
        return cls(float(np.median(a)), float(a.min()), float(a.max()), len(a))

    def ms(self) -> str:
        return f"{1e3 * self.median:.3g} ms ({1e3 * self.min:.3g}–{1e3 * self.max:.3g}, n={self.repeats})"

    def s(self) -> str:
        return f"{self.median:.3g} s ({self.min:.3g}–{self.max:.3g}, n={self.repeats})"


def time_calls(fn: Callable[[], object], repeats: int, warmup: int = 1) -> Timing:
    """Time ``repeats`` calls of ``fn`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return Timing.of(samples)


def time_once(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


@dataclass
class Context:
    """What a benchmark section gets: mode, output folder, peer interpreter."""

    quick: bool
    out: Path
    peer_python: str | None
    log: Callable[[str], None] = print
    plots: list[str] = field(default_factory=list)
    # The sections (and the dates they ran) of the results.json this run replaces: a section can
    # compare its figures with the previous run's (the peers section reports how far they differ).
    previous: dict[str, Any] = field(default_factory=dict)
    previous_dates: dict[str, str] = field(default_factory=dict)

    def plot_path(self, name: str) -> Path:
        p = self.out / "plots" / f"{name}.png"
        p.parent.mkdir(parents=True, exist_ok=True)
        self.plots.append(str(p.relative_to(self.out)))
        return p


def cpu_name(machine: dict[str, Any]) -> str:
    """The processor a :func:`machine_info` record names."""
    return str(machine.get("cpu", machine.get("processor")))


def machines_note(res: dict[str, Any]) -> str:
    """Where the sections ran: one processor, or each processor with its sections (re-runs of some
    sections may land on another machine; figures compare only within a section)."""
    by_cpu: dict[str, list[str]] = {}
    for section, cpu in res.get("section_machines", {}).items():
        by_cpu.setdefault(cpu, []).append(section)
    if len(by_cpu) <= 1:
        return cpu_name(res["machine"])
    return "several machines: " + "; ".join(f"{cpu} ({', '.join(s)})" for cpu, s in by_cpu.items())


def machine_info() -> dict[str, Any]:
    import scipy

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "thread_pinning": pinning_report(),
    }
    try:
        with open("/proc/cpuinfo") as fh:
            names = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
        if names:
            info["cpu"] = names[0]
        with open("/proc/meminfo") as fh:
            info["memory_gb"] = round(int(fh.readline().split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return info


def pinning_report() -> dict[str, Any]:
    """This process's thread pinning (``peers/pinning.py``); the bench's main() pins before any section."""
    from .peers.pinning import pin_threads

    return pin_threads()


def jsonable(x: Any) -> Any:
    if isinstance(x, Timing):
        return asdict(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(jsonable(data), indent=2) + "\n")
    tmp.replace(path)


def run_peer(peer_python: str, script: str, *args: str, timeout: float = 1800.0) -> dict[str, Any]:
    """Run a peer script with the bench-only interpreter; it prints one JSON object last."""
    from .peers.pinning import pinned_env

    env = pinned_env()
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [peer_python, str(BENCH / "peers" / script), *args], capture_output=True, text=True, env=env, timeout=timeout
    )
    if out.returncode != 0:
        raise RuntimeError(
            f"{script} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def install_addon(work: Path) -> ModuleType:
    """The add-on module, installed once per process (``build_extension.install_dev``).

    The sections that import bpy run in this one process (after the others):
    the first installs, the later ones find it registered.
    """
    return install_dev(work)


def markdown_table(head: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table (its lines, then a blank one) with the header ``head`` and one line per row."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*out, ""]


def in_scratch_folder(prefix: str, fn: Callable[[Path], Any]) -> Any:
    """fn(folder) in a new temporary folder named ``prefix…``, removed afterwards whatever happens.

    The Blender sections install the add-on there (the bench's entry point already
    points BLENDER_USER_RESOURCES at a throw-away profile).
    """
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        return fn(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
