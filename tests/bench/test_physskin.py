"""The bench's physics-skinning section runs in quick mode and writes well-formed, finite results.

No timing is asserted (shared machines are noisy): only that the section is
registered, that every figure the report reads is there and finite, that the
paired ratios are consistent spreads, and that the report and plots exist.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from tests.bench.helpers import quick_section

pytestmark = pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the bench runs in the main lane")
VARIANTS = {"arap", "warm", "cold", "shipped", "direct"}
METHODS = {"lbs", "blended", "shipped", "blended_arap", "per_bone"}


def numbers(x):
    """Every number anywhere in the results."""
    if isinstance(x, dict):
        for v in x.values():
            yield from numbers(v)
    elif isinstance(x, list):
        for v in x:
            yield from numbers(v)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield x


@pytest.fixture(scope="module")
def quick_physskin(tmp_path_factory):
    return quick_section("physskin", tmp_path_factory.mktemp("bench-physskin"))


def test_quick_section_has_every_figure_and_all_are_finite(quick_physskin):
    res, _ = quick_physskin
    assert res["quick"] is True and res["errors"] == {}
    p = res["sections"]["physskin"]
    assert all(math.isfinite(v) for v in numbers(p))
    assert len(p["rows"]) >= 2
    for row in p["rows"]:
        assert row["vertices"] > 0 and row["tets"] > 0 and row["pins"] >= 1
        assert set(row["seconds_per_frame"]) == set(row["fps"]) == set(row["fps_range"]) == VARIANTS
        for k in VARIANTS:
            t = row["seconds_per_frame"][k]
            assert 0.0 < t["min"] <= t["median"] <= t["max"] and t["repeats"] == 2 * row["rounds"]
            assert row["fps"][k] == pytest.approx(1.0 / t["median"])
        for q in [*row["ratio_over_direct"].values(), row["ratio_warm_over_cold"]]:
            assert q["rounds"] == row["rounds"]
            assert 0.0 < q["min"] <= q["q1"] <= q["median"] <= q["q3"] <= q["max"]
        assert set(row["ratio_over_direct"]) == {"arap", "warm", "cold", "shipped"}
        # The co-rotational variants iterate (the rest pose of frame 0 takes none); ARAP never does.
        assert set(row["iterations_mean"]) == {"warm", "cold"}
        assert all(v > 0 for v in row["iterations_mean"].values())
        # Both iterative variants land on the exact per-frame solve (1e-6 of the size is the solve's tolerance).
        assert max(row["max_error_over_size"].values()) < 1e-5
        for t in row["build"].values():
            assert 0.0 < t["min"] <= t["median"] <= t["max"]
        b = row["cold_breakdown"]
        assert 0.0 < b["back_substitutions"] + b["rotations"] <= b["frame"]
        assert b["solves_per_frame"] == pytest.approx(row["iterations_mean"]["cold"] + 1)
    vol = p["volume"]
    for kind in ("twist", "bend"):
        assert vol[kind][0]["angle_deg"] == 0.0 and len(vol[kind]) >= 2
        for r in vol[kind]:
            assert set(r) == METHODS | {"angle_deg"}
            for k in METHODS:
                assert set(r[k]) == {"volume_change_pct", "inverted", "inverted_touching_pins"}
                assert 0 <= r[k]["inverted_touching_pins"] <= r[k]["inverted"] <= vol["tets"]
        # The rest pose changes nothing.
        assert all(abs(vol[kind][0][k]["volume_change_pct"]) < 1e-9 for k in METHODS)
    # Every process of the section was pinned to one thread, as in the rest of the suite.
    assert set(p["threads"]["env"].values()) == {"1"}
    assert set(p["threads"]["openblas"].values()) <= {1}


def test_report_has_the_section_its_plots_and_the_seed(quick_physskin):
    res, out = quick_physskin
    report = (out / "REPORT.md").read_text()
    assert "Physics skinning" in report and "1.078" in report  # the seed's human, beside ours
    assert {Path(p).stem for p in res["plots"]} == {"physskin_fps", "physskin_volume"}
    for p in res["plots"]:
        assert (out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"({p})" in report


def test_sources_and_energies_are_there_with_their_pinned_shares(quick_physskin):
    """Issue 30: every source's fps comes with its pinned share; from bones only pins a few percent, smooth
    weights fewer than hat weights; the energy table has every energy at every pose, finite."""
    from bench.physskin_sources import ENERGIES, ENERGY_POSES, SOURCES

    res, out = quick_physskin
    p = res["sections"]["physskin"]
    for row in p["sources"]:
        assert set(row["fps"]) == set(row["pinned_share"]) == set(row["volume_steps"]) == set(SOURCES)
        assert all(v > 0 for v in row["fps"].values())
        assert row["pinned_share"]["smooth"] < row["pinned_share"]["hat"]
        assert all(steps[1] <= row["step_cap"] for steps in row["volume_steps"].values())
    e = p["energy"]
    assert [(r["bend"], r["twist"]) for r in e["rows"]] == [tuple(x) for x in ENERGY_POSES]
    for r in e["rows"]:
        assert set(ENERGIES) <= set(r) and all(r[k]["fps"] > 0 for k in ENERGIES)
    report = (out / "REPORT.md").read_text()
    assert "By source (issue 30)" in report and "% pinned" in report and "mixed energy" in report


def test_every_source_says_how_its_volume_solves_stopped(quick_physskin):
    res, _ = quick_physskin
    for row in res["sections"]["physskin"]["sources"]:
        for shares in row["stops"].values():
            assert set(shares) == {"converged", "stalled", "cap"} and sum(shares.values()) == pytest.approx(1.0)


def test_the_distance_from_a_converged_solve_is_measured_for_every_source(quick_physskin):
    """Issue 30 item 6: each source's shipped answer and one Gauss-Newton step are measured against a
    tight solve; the shipped answer is the closer one (more steps of a descent method, from one start)
    and the report carries the table."""
    from bench.physskin_sources import SOURCES

    res, out = quick_physskin
    c = res["sections"]["physskin"]["convergence"]
    assert set(c["sources"]) == set(SOURCES)
    for s in c["sources"].values():
        assert 0.0 <= s["rms"] <= s["one_rms"] and s["rms"] <= s["worst"]
        assert s["tight_steps_max"] >= 1 and sum(s["tight_stops"].values()) == c["poses"]
    assert "How far the shipped solve stops from a converged one" in (out / "REPORT.md").read_text()
