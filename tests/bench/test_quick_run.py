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
SECTIONS = {
    "scaling",
    "accuracy",
    "peers",
    "table1",
    "meshing",
    "characters",
    "whole_characters",
    "blender",
    "physskin",
    "posespace",
    "wheremoves",
    "flesh",
    "convergence",
    "locomotion",
    "rotstrain",
    "contact",
}


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
    # No thread variables: the bench pins its own threads and its workers' however it is launched.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
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
    # scaling 8, accuracy 2, blender 5, characters 2, and with the peers 6 more (4 per-step, 2 preparation)
    assert len(found) >= (23 if os.environ.get("SKINMODES_BENCH_PEER_PYTHON") else 17)
    for t in found:
        assert t["repeats"] >= 1
        assert 0.0 < t["min"] <= t["median"] <= t["max"]
    blender = res["sections"]["blender"]
    assert blender["frames"] == 24 and blender["vertices"] > 100
    assert blender["ms_per_frame"]["bake"] > 0 and blender["ms_per_frame"]["frame_set"] > 0
    # Quick mode bakes the smallest real character once, over a short clip.
    chars = res["sections"]["characters"]["characters"]
    assert [c["name"] for c in chars] == ["rigged_simple"]
    c = chars[0]
    assert c["first_jiggle_s"]["repeats"] == 1
    assert c["frames"][0] < c["first_jiggle_frame"] <= c["frames"][1]
    # The prepared character's stage timers run inside the first-jiggle wall clock: none is
    # negative and the remainder ("preview set-up") is not either.
    assert min(c["first_jiggle_split_s"].values()) >= 0.0, c["first_jiggle_split_s"]
    assert c["frames_baked"] == c["frames"][1] - c["frames"][0] + 1
    assert c["vertices"] > 50 and c["tets"] > 100 and c["size"] > 0.0
    assert c["nan"] is False
    if os.environ.get("SKINMODES_BENCH_PEER_PYTHON"):
        check_paired_peers(res["sections"]["peers"])
    else:
        assert "skipped" in res["sections"]["peers"]


def test_where_it_moves_measures_ours_and_the_reference_on_the_same_skin(quick_run):
    """Section 9 (issue 31): the reference skins with Blender's own weights and keeps bone lengths."""
    _, out = quick_run
    w = json.loads((out / "results.json").read_text())["sections"]["wheremoves"]
    (row,) = w["characters"]
    assert row["name"] == "rigged_simple" and row["appendage_bones"] == ["Node_3"]
    assert row["lbs_check_pct"] < 1e-3  # our LBS of the animated bones is Blender's rig-only mesh
    assert row["bone_length_change"] < 1e-9
    for side in ("ours", "reference"):
        t = row["tip"][side]
        assert t["peak_pct"] > 0.0 and 0 <= t["lag_frames"] <= 8
        assert set(row["regions"]) == {"appendage", "grounded", "core", "body"}
        assert row["regions"]["body"][side] >= max(r[side] for r in row["regions"].values()) - 1e-12


def check_paired_peers(p):
    """The peers section is paired: ratio spreads per round, real m and r of each side, every side pinned."""
    assert p["method"] == "paired", p
    assert p["steps"] and p["preparation"]

    def ratio(q):
        assert q["rounds"] >= 1
        assert 0.0 < q["min"] <= q["q1"] <= q["median"] <= q["q3"] <= q["max"]

    for row in p["steps"]:
        ratio(row["step_ratio_ours_over_fastcody"])
        ratio(row["step_ratio_ours_over_simkit"])
        # Every side steps the very same model.
        assert {(v["m"], v["r"]) for v in row["models"].values()} == {(row["modes"], row["clusters"])}
        # Same equations, same state: the trajectories agree to solver round-off (see test_peers.py).
        assert row["trajectory_max_diff_over_extent"] < 1e-5
    for row in p["preparation"]:
        ratio(row["ratio_ours_over_fastcody"])
        for side in ("ours", "fastcody"):
            assert row[side]["m"] == row["requested"]["m"] and row[side]["r"] >= 1
        assert row["ours"]["r"] == row["requested"]["r"]  # ours gives exactly the clusters asked for
    # fast-cody's modes given all its constraint rows span ours (test_peers.py says why 1e-5).
    assert p["fastcody_modes"]["sin_full"] < 1e-5, p["fastcody_modes"]
    for side, t in p["threads"].items():
        assert set(t["env"].values()) == {"1"}, side
        assert t["openblas"] and set(t["openblas"].values()) == {1}, (side, t)


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
        "## 6. Real characters",
        "## 9. Where it moves",
    ):
        assert heading in report
    res = json.loads((out / "results.json").read_text())
    assert {Path(p).stem for p in res["plots"]} >= {
        "scaling",
        "accuracy",
        "in_blender",
        "characters_rigged_simple",
        "wheremoves_rigged_simple",
    }
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
    assert res["date"][:10] in text and res["command"] in text
    assert "| figure | measured | ratio |" in text
    assert text.count(README_BEGIN) == 1 and text.count(README_END) == 1


def test_new_sections_have_their_summary_rows(quick_run):
    """Locomotion, RS vs skinning eigenmodes, contact and the pose-space claim each give a summary row
    (issue 29) from the quick results, and REPORT.md shows it."""
    from bench.report import summary_rows

    _, out = quick_run
    res = json.loads((out / "results.json").read_text())
    figures = [r[0] for r in summary_rows(res)]
    report = (out / "REPORT.md").read_text()
    for prefix in ("locomotion,", "RS vs skinning eigenmodes", "contact step", "pose-space claim"):
        assert any(f.startswith(prefix) for f in figures), (prefix, figures)
        assert f"| {prefix}" in report, prefix


def test_real_characters_behind_list_names_each_failed_check():
    """The report's "behind" list flags a slow first jiggle and each failed plausibility check, and only those."""
    from bench.report import behind, summary_rows

    def row(name, vertices, first_jiggle, max_pct, first_pct, settled_pct, warnings=()):
        return {
            "name": name,
            "vertices": vertices,
            "tets": 15_000,
            "first_jiggle_s": {"median": first_jiggle, "min": first_jiggle, "max": first_jiggle, "repeats": 1},
            "max_offset_pct": max_pct,
            "first_offset_pct": first_pct,
            "settled_offset_pct": settled_pct,
            "nan": False,
            "messages": [],
            "warnings": list(warnings),
        }

    res = {
        "sections": {
            "characters": {
                "characters": [
                    row("fine", 3300, 4.9, 24.9, 0.9, 0.9),
                    row("slow", 3500, 5.1, 1.0, 0.0, 0.0),
                    row("big_and_slow", 7000, 9.0, 1.0, 0.0, 0.0),  # the 5 s target is stated at 3.5k vertices
                    row("floppy", 1700, 1.0, 35.7, 0.0, 19.2, warnings=["the offset grows"]),
                ]
            }
        },
        "errors": {},
    }
    gaps = behind(res)
    assert len(gaps) == 2, gaps
    assert "slow (3,500 vertices" in gaps[0] and "5.1 s" in gaps[0]
    assert gaps[1].startswith("floppy ") and "max offset 35.7 %" in gaps[1] and "settled offset 19.2 %" in gaps[1]
    assert "first-frame" not in gaps[1] and "the offset grows" in gaps[1]
    rows = summary_rows(res)
    assert rows[0][0].startswith("time to first jiggle, slow,")  # the character nearest 3.5k vertices
    assert rows[1][1] == "3 of 4"  # plausibility only: "slow" ones are plausible


def test_convergence_measures_iterations_caps_and_the_stepped_wobble(quick_run):
    """Section 10 (issue 23): per material and cap, iterations and the error against the converged run."""
    _, out = quick_run
    c = json.loads((out / "results.json").read_text())["sections"]["convergence"]
    (row,) = c["characters"]
    assert row["name"] == "rigged_simple" and row["default_bake"]["steps"] > 0
    for material in ("auto", "arap"):
        m = row["materials"][material]
        assert set(m["caps"]) == {"10", "50", "200"}
        for d in m["caps"].values():
            assert 0 < d["mean_iterations"] <= d["max_iterations"] and d["ms_per_step"] > 0
            assert 0.0 <= d["error_vs_converged"] < 0.1
        assert m["wobble_hz"] > 0 and m["damping_ratio"] > 0


def test_whole_characters_time_one_body_and_each_mesh_alone(quick_run):
    """Issue 38's section: the platformer's four meshes, as one body and each alone, both bake and jiggle."""
    _, out = quick_run
    rows = json.loads((out / "results.json").read_text())["sections"]["whole_characters"]["rows"]
    assert [r["whole"] for r in rows] == [True, False]
    for r in rows:
        assert r["meshes"] == ["Arms", "Body", "Ears", "Head"] and r["bake_s"] > 0 and r["first_jiggle_s"] > 0
    assert len(rows[0]["sizes"]) == 1 and len(rows[1]["sizes"]) == 4  # one body, four bodies
