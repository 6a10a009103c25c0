"""The bench's pose-space section runs in quick mode and writes well-formed, finite results.

No timing is asserted (shared machines are noisy): only that the section is registered, that
every figure the report reads is there and consistent, and that the report shows it.
"""

from __future__ import annotations

import math
import os

import pytest

from tests.bench.helpers import quick_section
from tests.bench.test_physskin import numbers

pytestmark = pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the bench runs in the main lane")


@pytest.fixture(scope="module")
def quick_posespace(tmp_path_factory):
    return quick_section("posespace", tmp_path_factory.mktemp("bench-posespace"))


def test_quick_section_has_every_figure(quick_posespace):
    res, _ = quick_posespace
    assert res["errors"] == {}
    p = res["sections"]["posespace"]
    assert all(math.isfinite(v) for v in numbers(p))
    s = p["speed"]
    assert list(s["ms_per_step"]) == ["1", "2"] and all(v > 0 for v in s["ms_per_step"].values())
    r = s["ratio_over_one"]["2"]
    assert r["rounds"] == s["rounds"] and 0 < r["min"] <= r["median"] <= r["max"]
    assert all(v > 0 for v in s["precompute_s_per_pose"].values())
    for a in p["accuracy"]:
        assert 0 < a["rest_mean"] <= a["rest_max"] and a["max_u"] > 0
        assert a["refused"] is not None or a["posespace_mean"] <= a["posespace_max"]
    c = p["contact"]
    assert len(c["rig"]) == len(c["rest_modes"]) == len(c["contact_aware"]) == c["steps"]
    assert c["contacts"] > 0 and c["contact_pose_s"] > 0
    # Contact-aware modes never push past the rig's own (1e-9: round-off of the stick rows).
    assert all(a <= r + 1e-9 for a, r in zip(c["contact_aware"], c["rig"]))
    claim = p["claim"]
    assert {r["method"] for r in claim["rows"]} >= {"seed", "seed_projected", "warped", "pca", "skinning"}
    assert all(0 <= r["mean"] <= r["max"] and r["ms"] > 0 for r in claim["rows"])
    assert claim["max_u"] > 0 and claim["reference_ms"] > 0


def test_report_has_the_section_and_the_seed(quick_posespace):
    _, out = quick_posespace
    report = (out / "REPORT.md").read_text()
    assert "## 8. Pose-space subspaces" in report and "gorilla r = 100: 1.33 ms" in report
    assert "(plots/posespace_contact.png)" in report
    assert "### The seed's claim as the seed states it (issue 29)" in report and "**Verdict.** At m = 4" in report
    assert (out / "plots" / "posespace_contact.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
