"""Rollouts and the gait search (core/locomotion/gait.py) on a small soft slug."""

import numpy as np
import pytest

from core.locomotion.gait import GaitProblem, find_gait, ground_under, rollout
from core.locomotion.step import StepSettings

from .conftest import slug_model


@pytest.fixture(scope="module")
def problem():
    _, _, model = slug_model(cells_per_unit=3, m=4, samples=20)
    settings = StepSettings(dt=1 / 30, tolerance=1e-4)
    return GaitProblem(model, settings, ground_under(model), direction=np.array([1.0, 0.0, 0.0]), steps=60)


def test_zero_actuation_goes_nowhere(problem):
    r = rollout(problem, problem.sinusoids(np.zeros(problem.dimension)))
    assert abs(r.objective) < 1e-3  # body lengths: settling on the ground, no travel
    assert r.unconverged == 0 and r.energy_rose == 0


def test_a_short_search_improves_the_objective_and_is_deterministic(problem):
    """A few generations of CMA-ES beat the first generation's best, and the same seed repeats bit for bit."""
    gait = find_gait(problem, generations=4, population=6, seed=0)
    assert gait.history[-1] > gait.history[0] > 0.0
    assert gait.evaluations == 24
    again = find_gait(problem, generations=4, population=6, seed=0)
    np.testing.assert_array_equal(gait.x, again.x)
    assert gait.objective == again.objective
    r = rollout(problem, gait.sinusoids)
    assert r.objective == gait.objective
    assert r.com[-1, 0] > r.com[0, 0]  # it moved the way it was asked to
