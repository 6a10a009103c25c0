"""A gait as plain data (core/locomotion/stored.py): JSON round trip, the mesh key, the seeded search."""

import json

import numpy as np
import pytest

from core.errors import SimulationError, SkinmodesError
from core.locomotion.creatures import quadruped
from core.locomotion.gait import GaitCancelled
from core.locomotion.stored import GaitSettings, StoredGait, measure, mesh_key, search

# About 300 tets; 1 s rollouts judged on 2 s: a search of a few seconds, for the module's own checks.
TINY = GaitSettings(rollout_s=1.0, judge_s=2.0, generations=2, population=4, restarts=1, seed=7)


@pytest.fixture(scope="module")
def mesh():
    return quadruped(cell=0.1)


@pytest.fixture(scope="module")
def found(mesh):
    return search(mesh, TINY)


def test_the_json_round_trip_is_bit_for_bit(found):
    back = StoredGait.from_json(found.to_json())
    np.testing.assert_array_equal(back.x, found.x)  # exact: JSON floats are Python's round-tripping repr
    assert back.settings == found.settings and back.mesh_key == found.mesh_key
    assert back.objective == found.objective and back.judged == found.judged
    assert json.loads(found.to_json())["format"] == 1


def test_the_same_seed_finds_the_same_gait(mesh, found):
    again = search(mesh, TINY, progress=lambda done, planned, best: True)
    np.testing.assert_array_equal(again.x, found.x)
    assert found.evaluations == 2 * 4 + 4  # two generations of four, then up to four finalists judged


def test_a_gait_is_refused_on_another_mesh_in_one_line(found):
    other = quadruped(cell=0.09)
    assert mesh_key(other) != found.mesh_key
    with pytest.raises(SimulationError, match="another mesh") as info:
        found.problem(other)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["", "{}", '{"format": 99}', '{"format": 1, "x": [1], "settings": 3}'])
def test_text_that_is_not_a_gait_is_refused_in_one_line(text):
    with pytest.raises(SkinmodesError, match=r"cannot be read.*Find Gait") as info:
        StoredGait.from_json(text)
    assert "\n" not in str(info.value)


def test_a_cancelled_search_finds_nothing(mesh):
    with pytest.raises(GaitCancelled):
        search(mesh, TINY, progress=lambda done, planned, best: False)


def test_measure_replays_the_gait(mesh, found):
    """The replay's objective over the judge's 2 s equals the search's judged J exactly (same rollout, same floats)."""
    m = measure(found, mesh, seconds=2.0)
    assert m["objective"] == found.judged
    assert np.isfinite(m["body_lengths_per_10s"]) and np.isfinite(m["distance_per_cycle"])
    assert m["body_length"] > 0.0


def test_the_heading_is_the_angle_on_the_ground():
    """heading(): 0 straight on, 90 sideways, 180 backwards or not at all; the rise along up is left out.
    Exact up to arccos's round-off (1e-9 degrees)."""
    from core.locomotion.stored import heading

    up, d = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    assert abs(heading(np.array([2.0, 0.0, 5.0]), d, up)) < 1e-9
    assert abs(heading(np.array([1.0, 1.0, 0.0]), d, up) - 45.0) < 1e-9
    assert abs(heading(np.array([0.0, -3.0, 0.0]), d, up) - 90.0) < 1e-9
    assert heading(np.array([-1.0, 0.0, 0.0]), d, up) == 180.0 and heading(np.zeros(3), d, up) == 180.0


def test_measured_figures_round_trip_with_the_gait(found):
    """The figures a replay measured are kept with the gait (the panel shows them after a reload), bit for bit."""
    import dataclasses

    gait = dataclasses.replace(found, figures={"body_lengths_per_10s": 1.25, "heading_deg": 3.5})
    back = type(found).from_json(gait.to_json())
    assert back.figures == gait.figures and back.to_json() == gait.to_json()
