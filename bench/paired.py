"""Paired measurement: two warm processes timed in alternation, the figure a median of per-round ratios.

A shared machine changes speed for seconds at a time (other jobs, frequency,
caches), so timing one side and then the other, each in a fresh process,
compares two different machines.  Here every side lives in its own warm
worker process (``peers/worker.py``): ours with the main environment's
interpreter, the peers with the bench-only one, each pinned to one BLAS and
OpenMP thread the same way (``peers/pinning.py``).  One round times the same
work in the order A B B A, so a drift that is linear over the round cancels;
the round's ratio is (A1 + A2) / (B1 + B2).  The figure is the median of the
per-round ratios, reported with their quartiles and range.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from .common import ROOT, Timing
from .peers.pinning import pinned_env


class WorkerError(RuntimeError):
    pass


class Worker:
    """One side's warm process (``python -m bench.peers.worker SIDE``), spoken to in JSON lines."""

    def __init__(self, python: str, side: str) -> None:
        env = pinned_env()
        env["PYTHONPATH"] = str(ROOT)
        self.side = side
        self._log: IO[str] = tempfile.TemporaryFile("w+")  # its stderr: read back only to explain a failure
        self.proc = subprocess.Popen(
            [python, "-m", "bench.peers.worker", side],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.hello = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self._log.seek(0)
            tail = self._log.read().strip().splitlines()[-1:] or [f"exit status {self.proc.poll()}"]
            raise WorkerError(f"{self.side} worker stopped: {tail[0]}")
        out = json.loads(line)
        if "error" in out:
            raise WorkerError(f"{self.side} worker: {out['error']}")
        return out

    def call(self, cmd: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call_quit()
            finally:
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
        self._log.close()

    def call_quit(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def spread(values: list[float]) -> dict[str, float]:
    """Median, quartiles and range of per-round ratios (keys median, q1, q3, min, max, rounds)."""
    a = np.asarray(values, dtype=np.float64)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {
        "median": float(med),
        "q1": float(q1),
        "q3": float(q3),
        "min": float(a.min()),
        "max": float(a.max()),
        "rounds": len(a),
    }


def abba(a: Callable[[], float], b: Callable[[], float], rounds: int) -> dict[str, Any]:
    """``rounds`` rounds of A B B A; each callable does the work and returns its own seconds.

    Returns {"ratio": spread of (A1 + A2) / (B1 + B2) per round, "a": Timing, "b": Timing},
    the Timings over every block of each side.
    """
    ta: list[float] = []
    tb: list[float] = []
    ratios = []
    for _ in range(rounds):
        a1 = a()
        b1 = b()
        b2 = b()
        a2 = a()
        ta += [a1, a2]
        tb += [b1, b2]
        ratios.append((a1 + a2) / (b1 + b2))
    return {"ratio": spread(ratios), "a": Timing.of(ta), "b": Timing.of(tb)}


def palindrome(blocks: dict[str, Callable[[], float]], rounds: int) -> dict[str, Any]:
    """``rounds`` rounds of the blocks in order and back (A B C D D C B A); each returns its own seconds.

    Returns {"times": {name: Timing over every block}, "sums": {name: [X1 + X2 per round]}, "rounds"}:
    every pair of blocks sits at mirrored places in a round, so the ratio of two names' sums, round by
    round (:func:`paired_ratio`), is a paired figure.
    """
    names = list(blocks)
    samples: dict[str, list[float]] = {k: [] for k in names}
    sums: dict[str, list[float]] = {k: [] for k in names}
    for _ in range(rounds):
        this: dict[str, float] = dict.fromkeys(names, 0.0)
        for name in [*names, *reversed(names)]:
            s = blocks[name]()
            samples[name].append(s)
            this[name] += s
        for name in names:
            sums[name].append(this[name])
    return {"times": {k: Timing.of(v) for k, v in samples.items()}, "sums": sums, "rounds": rounds}


def paired_ratio(paired: dict[str, Any], a: str, b: str) -> dict[str, float]:
    """Spread (median, quartiles, range) of the per-round (a1 + a2) / (b1 + b2)."""
    return spread([x / y for x, y in zip(paired["sums"][a], paired["sums"][b])])


def per_step(t: Timing, steps: int) -> Timing:
    """A Timing of blocks of ``steps`` steps as seconds per step."""
    return Timing(t.median / steps, t.min / steps, t.max / steps, t.repeats)


def write_problem(path: Path, **arrays: Any) -> Path:
    np.savez(path, **arrays)
    return path
