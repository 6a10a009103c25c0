"""The benchmark suite's quick mode runs end to end and writes well-formed results.

No timing is asserted (shared machines are noisy); only that every section
ran, that every timing is a consistent (median, min, max, repeats) record, and
that the report and its plots exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The suite runs in the main environment (it has matplotlib for the plots);
# the 4.2 lane covers core and the add-on on numpy 2.
pytestmark = pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the bench runs in the main lane")
SECTIONS = {"scaling", "accuracy", "peers", "table1", "meshing", "blender"}


def timings(x):
    """Every {median, min, max, repeats} record anywhere in the results."""
    if isinstance(x, dict):
        if set(x) == {"median", "min", "max", "repeats"}:
            yield x
        else:
            for v in x.values():
                yield from timings(v)
    elif isinstance(x, list):
        for v in x:
            yield from timings(v)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    # A profile of its own: the bench installs the extension like a user would.
    env["BLENDER_USER_RESOURCES"] = str(tmp_path_factory.mktemp("profile"))
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return proc, out


def test_quick_bench_exits_cleanly(quick_run):
    proc, _ = quick_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_results_json_has_every_section_and_consistent_timings(quick_run):
    _, out = quick_run
    res = json.loads((out / "results.json").read_text())
    assert res["quick"] is True
    assert res["errors"] == {}
    assert set(res["sections"]) == SECTIONS
    for key in ("python", "numpy", "scipy", "cores"):
        assert key in res["machine"]
    found = list(timings(res["sections"]))
    assert len(found) >= 15  # scaling 8, accuracy 2, peers 2, blender 5
    for t in found:
        assert t["repeats"] >= 1
        assert 0.0 < t["min"] <= t["median"] <= t["max"]
    blender = res["sections"]["blender"]
    assert blender["frames"] == 24 and blender["vertices"] > 100
    assert blender["ms_per_frame"]["bake"] > 0 and blender["ms_per_frame"]["frame_set"] > 0
    if os.environ.get("SKINMODES_BENCH_PEER_PYTHON"):
        assert "rows" in res["sections"]["peers"], res["sections"]["peers"]
    else:
        assert "skipped" in res["sections"]["peers"]


def test_report_has_every_section_and_its_plots(quick_run):
    _, out = quick_run
    report = (out / "REPORT.md").read_text()
    for heading in (
        "## Summary",
        "## Where we are behind",
        "## 1. Scaling",
        "## 2. Reduced",
        "## 3. Peers",
        "## 4. Table 1",
        "## Mesh preparation",
        "## 5. In Blender",
    ):
        assert heading in report
    res = json.loads((out / "results.json").read_text())
    assert {Path(p).stem for p in res["plots"]} >= {"scaling", "accuracy", "in_blender"}
    for p in res["plots"]:
        assert (out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"({p})" in report


def test_readme_summary_block_is_replaced_from_results(quick_run, tmp_path):
    from bench.report import README_BEGIN, README_END, update_readme

    _, out = quick_run
    res = json.loads((out / "results.json").read_text())
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_BEGIN}\nold figures\n{README_END}\noutro\n")
    update_readme(readme, res)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n")
    assert "old figures" not in text
    assert res["date"] in text and res["command"] in text
    assert "| figure | measured | ratio |" in text
    assert text.count(README_BEGIN) == 1 and text.count(README_END) == 1
