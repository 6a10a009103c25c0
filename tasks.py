#!/usr/bin/env python3.11
"""One entry point for every job in this repository.

    python3.11 tasks.py demo      # headless demo bake: creature.blend, .pc2, picture
    python3.11 tasks.py test      # the whole test suite (lint, then the main and Blender 4.2 lanes side by side)

Contributors also have:

    python3.11 tasks.py pytest [ARGS]    # main lane only, ARGS go to pytest
    python3.11 tasks.py lane42 [ARGS]    # the Blender 4.2 LTS / numpy 2 lane
    python3.11 tasks.py lint             # ruff + mypy against fake-bpy-module-4.2
    python3.11 tasks.py build            # the extension zips (downloads the wheels)
    python3.11 tasks.py bench [--quick]  # the benchmark suite -> bench/REPORT.md

Each job creates the virtual environment it needs under ``.venvs/`` when it is
missing, and reuses it when its pinned requirements have not changed (a hash
of the requirements file is kept beside the environment).  Only the standard
library is used here, because this file runs before any environment exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENVS = ROOT / ".venvs"
# scikit-sparse (the bench's CHOLMOD peer) compiles against SuiteSparse's headers.
CHOLMOD_HEADER = Path("/usr/include/suitesparse/cholmod.h")

# name -> (requirements file, what it is for)
ENVIRONMENTS = {
    "main": ("requirements/main.txt", "bpy 5.0.1 + numpy 1.26 (the main lane)"),
    "lane42": ("requirements/lane42.txt", "bpy 4.2 LTS + numpy 2 (the minimum Blender)"),
    "lint": ("requirements/lint.txt", "ruff, mypy and fake-bpy-module-4.2"),
    "bench": ("requirements/bench.txt", "peers for the benchmark suite (never shipped)"),
}


def _say(msg: str) -> None:
    print(f"[tasks] {msg}", flush=True)


def _check_python() -> None:
    if sys.version_info[:2] != (3, 11):
        sys.exit(
            "tasks.py needs CPython 3.11 (bpy 5.0.1 and 4.2 are built for it); "
            f"this is {sys.version.split()[0]}. Run it as: python3.11 tasks.py ..."
        )


def _python(env: str) -> Path:
    return VENVS / env / "bin" / "python"


def ensure_env(env: str) -> Path:
    """Create or refresh ``.venvs/<env>`` from its pinned requirements file."""
    req_rel, purpose = ENVIRONMENTS[env]
    req = ROOT / req_rel
    extra = ROOT / req_rel.replace(".txt", ".nodeps.txt")
    optional = ROOT / req_rel.replace(".txt", ".cholmod.txt")
    with_cholmod = optional.exists() and CHOLMOD_HEADER.exists()
    digest = hashlib.sha256(
        b"".join(f.read_bytes() for f in (req, extra, optional) if f.exists()) + (b"+cholmod" if with_cholmod else b"")
    ).hexdigest()
    home = VENVS / env
    stamp = home / ".requirements.sha256"
    if stamp.exists() and stamp.read_text().strip() == digest and _python(env).exists():
        return _python(env)
    _say(f"creating .venvs/{env}: {purpose}")
    if home.exists():
        shutil.rmtree(home)
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    pip = [str(_python(env)), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "-r", str(req)], check=True, cwd=ROOT)
    if extra.exists():
        # Packages whose own metadata over-constrains (see the file's comments).
        subprocess.run([*pip, "install", "-q", "--no-deps", "-r", str(extra)], check=True, cwd=ROOT)
    if with_cholmod:
        subprocess.run([*pip, "install", "-q", "-r", str(optional)], check=True, cwd=ROOT)
    elif optional.exists():
        _say(f"skipping {optional.relative_to(ROOT)}: {CHOLMOD_HEADER} is missing (apt install libsuitesparse-dev)")
    stamp.write_text(digest + "\n")
    return _python(env)


def _env(env_vars: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every job runs in."""
    env = dict(os.environ)
    # Single-threaded BLAS keeps small dense kernels fast and timings stable on shared machines.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env["PYTHONPATH"] = str(ROOT)
    if env_vars:
        env.update(env_vars)
    return env


def _run(cmd: list[str], env_vars: dict[str, str] | None = None) -> int:
    _say(" ".join(cmd))
    return subprocess.run(cmd, cwd=ROOT, env=_env(env_vars)).returncode


def cmd_pytest(args: list[str]) -> int:
    py = ensure_env("main")
    return _run([str(py), "-m", "pytest", *args], _peer_env())


def _peer_env() -> dict[str, str]:
    """Point the peer cross-checks and the quick bench at the bench-only environment."""
    if os.environ.get("SKINMODES_NO_PEERS"):
        return {}
    try:
        return {"SKINMODES_BENCH_PEER_PYTHON": str(ensure_env("bench"))}
    except subprocess.CalledProcessError as exc:
        # The peers come from PyPI; without them their cross-checks skip and say why.
        _say(f"WARNING: could not create .venvs/bench ({exc}); the peer cross-checks will be skipped")
        return {}


LANE42_ENV = {"SKINMODES_LANE": "4.2"}
# Where the 4.2 lane writes while the main lane runs beside it (``cmd_test``).
LANE42_LOG = ROOT / "build" / "lane42.log"


def cmd_lane42(args: list[str]) -> int:
    py = ensure_env("lane42")
    return _run([str(py), "-m", "pytest", *args], LANE42_ENV)


def cmd_lint(_: list[str]) -> int:
    py = ensure_env("lint")
    rc = _run([str(py), "-m", "ruff", "check", "."])
    rc |= _run([str(py), "-m", "ruff", "format", "--check", "."])
    # The add-on is type-checked as it ships: staged with core beside it, the
    # way Blender imports it, against the bpy stubs of the minimum version.
    stage = ROOT / "build" / "typecheck" / "skinmodes"
    rc |= _run([str(py), "-m", "tools.build_extension", "stage", "--dest", str(stage)])
    rc |= _run([str(py), "-m", "mypy", "--config-file", "pyproject.toml", str(stage)])
    # core must import and solve in an environment that has no bpy at all.
    rc |= _run(
        [
            str(py),
            "-c",
            "import importlib.util, core, core.pipeline, core.dynamics.simulator; "
            "assert importlib.util.find_spec('bpy') is None; print('core imports without bpy')",
        ]
    )
    return rc


def cmd_build(args: list[str]) -> int:
    py = ensure_env("main")
    return _run([str(py), "-m", "tools.build_extension", "build", *args])


def cmd_demo(args: list[str]) -> int:
    py = ensure_env("main")
    return _run([str(py), "-m", "tools.demo", *args])


def cmd_bench(args: list[str]) -> int:
    py = ensure_env("main")
    return _run([str(py), "-m", "bench", *args], _peer_env())


def cmd_test(args: list[str]) -> int:
    """The whole suite: static checks, then the main lane and the Blender 4.2 lane side by side.

    Each lane runs on one BLAS thread, so on a machine with two cores or more the two lanes together take
    about as long as the longer one (measured: 40 min one after the other, see the README).  The 4.2 lane's
    output goes to build/lane42.log and is printed when both have ended.  SKINMODES_SERIAL_LANES=1 runs them
    one after the other, with both outputs live.
    """
    _say("=== lint ===")
    failed = [] if cmd_lint([]) == 0 else ["lint"]
    if os.environ.get("SKINMODES_SERIAL_LANES") or (os.cpu_count() or 1) < 2:
        for name, fn in (("main lane", cmd_pytest), ("4.2 lane", cmd_lane42)):
            _say(f"=== {name} ===")
            if fn(args) != 0:
                failed.append(name)
    else:
        failed += _lanes_side_by_side(args)
    if failed:
        _say("FAILED: " + ", ".join(failed))
        return 1
    _say("all green")
    return 0


def _lanes_side_by_side(args: list[str]) -> list[str]:
    """Run the 4.2 lane in the background while the main lane runs here; the names of the lanes that failed."""
    # Both environments (and the peers') first: creating them at once would race pip.
    main_py, lane_py, peers = ensure_env("main"), ensure_env("lane42"), _peer_env()
    LANE42_LOG.parent.mkdir(parents=True, exist_ok=True)
    lane_cmd = [str(lane_py), "-m", "pytest", *args]
    _say(f"=== 4.2 lane, in the background (output: {LANE42_LOG.relative_to(ROOT)}) ===")
    _say(" ".join(lane_cmd))
    failed, lane_rc = [], 1
    with open(LANE42_LOG, "w") as log:
        lane = subprocess.Popen(lane_cmd, cwd=ROOT, env=_env(LANE42_ENV), stdout=log, stderr=subprocess.STDOUT)
        try:
            _say("=== main lane ===")
            if _run([str(main_py), "-m", "pytest", *args], peers) != 0:
                failed.append("main lane")
            lane_rc = lane.wait()
        finally:
            if lane.poll() is None:  # interrupted: do not leave the background lane running
                lane.terminate()
                lane.wait()
    _say("=== 4.2 lane (its output) ===")
    sys.stdout.write(LANE42_LOG.read_text(errors="replace"))
    sys.stdout.flush()
    if lane_rc != 0:
        failed.append("4.2 lane")
    return failed


COMMANDS = {
    "demo": cmd_demo,
    "test": cmd_test,
    "pytest": cmd_pytest,
    "lane42": cmd_lane42,
    "lint": cmd_lint,
    "build": cmd_build,
    "bench": cmd_bench,
}


def main(argv: list[str]) -> int:
    _check_python()
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
