"""The paired measurement's machinery: A B B A rounds, ratio spreads, thread pinning of every process.

Exact checks (integer counts, ratios of given numbers to 1e-12, thread
counts): nothing here is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.paired import abba, spread

ROOT = Path(__file__).resolve().parents[2]
PEER = os.environ.get("SKINMODES_BENCH_PEER_PYTHON")


def test_rounds_alternate_a_b_b_a_and_ratio_each_round():
    order: list[str] = []
    times = {"a": iter([1.0, 3.0, 2.0, 2.0]), "b": iter([1.0, 1.0, 4.0, 4.0])}

    def side(name: str):
        def run() -> float:
            order.append(name)
            return next(times[name])

        return run

    res = abba(side("a"), side("b"), rounds=2)
    assert order == ["a", "b", "b", "a"] * 2
    # Round 1: (1 + 3) / (1 + 1) = 2; round 2: (2 + 2) / (4 + 4) = 0.5.  Exact up to float division (1e-12).
    q = res["ratio"]
    assert q["rounds"] == 2
    assert q["min"] == pytest.approx(0.5, rel=1e-12) and q["max"] == pytest.approx(2.0, rel=1e-12)
    assert q["median"] == pytest.approx(1.25, rel=1e-12)
    assert res["a"].repeats == 4 and res["b"].repeats == 4


def test_spread_orders_its_quantiles():
    q = spread([3.0, 1.0, 2.0, 10.0, 4.0])
    assert q["min"] <= q["q1"] <= q["median"] <= q["q3"] <= q["max"]
    assert (q["min"], q["median"], q["max"], q["rounds"]) == (1.0, 3.0, 10.0, 5)


_CHILD = """
import json, numpy, scipy.linalg
from bench.peers.pinning import pin_threads
print(json.dumps(pin_threads()))
"""


@pytest.mark.parametrize("python", [sys.executable, PEER], ids=["main", "bench"])
def test_pinning_holds_however_the_process_was_launched(python):
    """A process started with 2 BLAS threads in its environment ends up with 1 in every OpenBLAS it loaded."""
    if python is None:
        pytest.skip("no bench environment (SKINMODES_BENCH_PEER_PYTHON unset)")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2", PYTHONPATH=str(ROOT))
    out = subprocess.run([python, "-c", _CHILD], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(report["env"].values()) == {"1"}
    assert report["openblas"], "numpy's OpenBLAS must be found"
    assert set(report["openblas"].values()) == {1}, report
