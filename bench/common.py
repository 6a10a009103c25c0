"""Shared benchmark machinery: timing with spreads, machine info, results, plots.

Every figure is a :class:`Timing` (median, min, max, repeats) or a plain
number with its unit.  Shared machines are noisy, so comparisons are ratios
of figures measured side by side in the same run, never absolute targets.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
# Where Blender puts the extension when it is installed into the "user_default" repository.
ADDON_MODULE = "bl_ext.user_default.skinmodes"


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

    def plot_path(self, name: str) -> Path:
        p = self.out / "plots" / f"{name}.png"
        p.parent.mkdir(parents=True, exist_ok=True)
        self.plots.append(str(p.relative_to(self.out)))
        return p


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
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    out = subprocess.run(
        [peer_python, str(BENCH / "peers" / script), *args], capture_output=True, text=True, env=env, timeout=timeout
    )
    if out.returncode != 0:
        raise RuntimeError(
            f"{script} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def install_addon(work: Path) -> ModuleType:
    """Install the add-on from a freshly built package, as a user does, once per process; return its module.

    The sections that import bpy run in this one process (after the others),
    so the first installs and the later ones find it registered: a second
    install would re-register the add-on under a section's feet.  work: a
    folder for the package (any temporary folder; the installed copy lives in
    the profile that BLENDER_USER_RESOURCES names, see ``__main__``).
    """
    tools = str(ROOT / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import bpy
    import build_extension

    if ADDON_MODULE not in bpy.context.preferences.addons:
        zip_path = build_extension.dev_zip(work / "skinmodes-dev.zip")
        result = bpy.ops.extensions.package_install_files(
            filepath=str(zip_path), repo="user_default", enable_on_install=True
        )
        if result != {"FINISHED"} or ADDON_MODULE not in bpy.context.preferences.addons:
            raise RuntimeError(f"the extension built at {zip_path} did not install into Blender")
    return importlib.import_module(ADDON_MODULE)
