"""The bench's contact section runs in quick mode and writes well-formed, finite results.

No timing is asserted (shared machines are noisy): only that the section is registered, that every
figure the report reads is there and consistent, and that the report shows it.
"""

from __future__ import annotations

import math
import os

import pytest

from tests.bench.helpers import quick_section
from tests.bench.test_physskin import numbers

pytestmark = pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the bench runs in the main lane")


@pytest.fixture(scope="module")
def quick_contact(tmp_path_factory):
    return quick_section("contact", tmp_path_factory.mktemp("bench-contact"))


def test_quick_section_has_every_figure(quick_contact):
    res, out = quick_contact
    assert res["errors"] == {}
    p = res["sections"]["contact"]
    assert all(math.isfinite(v) for v in numbers(p))
    s = p["speed"]
    assert list(s["ms_per_step"]) == ["off", "0", "10"] and all(v > 0 for v in s["ms_per_step"].values())
    r = s["ratio_over_off"]["10"]
    assert r["rounds"] == s["rounds"] and 0 < r["min"] <= r["median"] <= r["max"]
    assert 10 <= s["rows"]["10"] <= s["samples"] and 0 < s["pressed"]["10"] <= s["rows"]["10"]
    assert "## Contact (issue 29)" in (out / "REPORT.md").read_text()


def test_the_ground_cuts_exactly_k_samples():
    import numpy as np

    from bench.contact import cutting_ground

    P = np.random.default_rng(0).uniform(-1.0, 1.0, (500, 3))
    for k in (0, 10, 100):
        g = cutting_ground(P, k)
        assert int((P @ np.asarray(g.normal) < g.height).sum()) == k
