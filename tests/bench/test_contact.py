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


def test_quick_picture_keeps_the_tail_out_of_the_block(quick_contact):
    res, out = quick_contact
    c = res["sections"]["contact"]["picture"]
    assert c["character"] == "trex" and not c["nan"] and c["rig_inside_point_frames"] == 0
    assert c["penetration_pct_on"] <= min(1.0, c["penetration_pct_off"])
    assert (out / "plots" / "contact_trex_tail.png").is_file()
    assert "plots/contact_trex_tail.png" in (out / "REPORT.md").read_text()


def test_the_ground_cuts_exactly_k_samples():
    import numpy as np

    from bench.contact import cutting_ground

    P = np.random.default_rng(0).uniform(-1.0, 1.0, (500, 3))
    for k in (0, 10, 100):
        g = cutting_ground(P, k)
        assert int((P @ np.asarray(g.normal) < g.height).sum()) == k


def test_penetration_counts_only_where_the_rig_is_out_of_the_box():
    import numpy as np

    from bench.contact_picture import penetration, thickness

    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])
    rig = np.array([[[0.5, 0.5, 1.5], [0.5, 0.5, 0.5], [2.0, 0.5, 1.5]]])  # above, the rig's own, outside
    baked = np.array([[[0.5, 0.5, 0.75], [0.5, 0.5, 0.25], [2.0, 0.5, 0.0]]])
    depth, rigs = penetration(baked, rig, lo, hi)
    assert np.allclose(depth, [[0.25, 0.0, 0.0]]) and rigs == 1
    tube = np.array([[y, 0.0, z] for y in np.linspace(0.0, 10.0, 50) for z in (0.0, 0.3 + 0.01 * y)])
    assert abs(thickness(tube) - 0.4) < 0.02


def test_the_arm_is_inside_only_behind_every_nearby_tangent_plane():
    import numpy as np

    from bench.contact_arm import arm_thickness, gap_and_depth

    # A flat body (a 5 x 5 grid in z = 0, normals +z) and two arm points: one 0.2 under it, one 0.3 over it.
    g = np.linspace(-1.0, 1.0, 5)
    body = np.array([[x, y, 0.0] for x in g for y in g])
    tris = np.array([[i * 5 + j, i * 5 + j + 5, i * 5 + j + 1] for i in range(4) for j in range(4)])
    tris = np.vstack([tris, [[i * 5 + j + 1, i * 5 + j + 5, i * 5 + j + 6] for i in range(4) for j in range(4)]])
    points = np.vstack([body, [[0.0, 0.0, -0.2], [0.5, 0.5, 0.3]]])[None]
    gaps, depth = gap_and_depth(points, tris, np.array([25, 26]), np.arange(25), reach=1.0)
    assert np.isclose(gaps[0], 0.2) and np.allclose(depth, [[0.2, 0.0]])
    _, far = gap_and_depth(points, tris, np.array([25, 26]), np.arange(25), reach=0.1)
    assert np.allclose(far, 0.0)  # beyond reach, the tangent planes do not judge
    ring = np.array([[x, np.cos(t), np.sin(t)] for x in np.linspace(0.0, 5.0, 20) for t in np.linspace(0, 6.0, 30)])
    assert abs(arm_thickness(ring) - 2.0) < 0.01
