"""Rollouts and the gait search (core/locomotion/gait.py): the issue's real result on two creatures.

A legless blob and a four-legged soft box (core/locomotion/creatures.py) each travel at least one body
length per 10 s of simulated time on flat ground with Coulomb friction, along the chosen direction
(within 20 deg), with no tet inverted and no vertex (every vertex is checked, not only the contact
samples) deeper than 1% of the body's height below the ground.  The fast tests replay the gaits the
seeded search found (``gaits.py``); the slow test runs the seeded search again and checks that what it
finds meets the same bar.  It does not ask for the stored vector bit for bit: CMA-ES amplifies a last-bit
difference (another CPU's BLAS, numpy 2 in the 4.2 lane) into another, equally valid gait.  Bit-for-bit
reproducibility of a seed on one machine is test_the_same_seed_gives_the_same_gait's.
"""

import dataclasses

import numpy as np
import pytest

from core.errors import SkinmodesError
from core.locomotion.creatures import RECIPES, Recipe, crawl_report, creature_problem, search_gait
from core.locomotion.gait import GaitCancelled, find_gait, restart_seed, rollout

from .gaits import FOUND

TEN_SECONDS = 300  # steps of 1/30 s
MAX_HEADING_DEG = 20.0
DEPTH_SHARE = 0.01  # of the body's height: the penalty contact's allowance (measured: about 1.5 mm of 0.36 m)


def assert_crawls(name, x):
    """The issue's real result for the gait x of creature ``name`` over ten simulated seconds."""
    f = crawl_report(RECIPES[name], x, TEN_SECONDS)
    assert f["body_lengths"] >= 1.0, f
    assert f["heading_deg"] <= MAX_HEADING_DEG, f
    assert f["facing"] > 0.5, f  # it faces the way it goes throughout (never turns past 60 deg)
    assert f["deepest"] <= DEPTH_SHARE * f["height"], f
    assert f["inverted"] == 0 and f["unconverged"] == 0 and f["energy_rose"] == 0, f


@pytest.mark.parametrize("name", ["blob", "quadruped"])
def test_a_found_gait_crawls_a_body_length_per_ten_seconds(name):
    assert_crawls(name, FOUND[name])


# Known short (issue 40, open: a gait for any boneless shape): with one BLAS thread on this 2-core machine, as
# the README's test command runs, the quadruped's seeded search finds a gait that crawls 3.0 body lengths per
# 10 s within 9 deg of its heading but turns up to 66 deg on the way (facing 0.40 < 0.5); the same at the
# commit before issue 37, so it is the search's sensitivity to the last bit, not the flesh's.  Not strict: on
# other BLAS builds it finds a valid gait.
SEARCHED = ["blob", pytest.param("quadruped", marks=pytest.mark.xfail(reason="issue 40: the found gait turns 66 deg"))]


@pytest.mark.slow
@pytest.mark.parametrize("name", SEARCHED)
def test_the_seeded_search_finds_a_gait_that_crawls(name):
    """CMA-ES (seed 0) with the recipe's budget (restarts, finalists judged on 10 s) finds a gait meeting
    the real result (on the machine that stored FOUND it finds FOUND itself)."""
    gait = search_gait(RECIPES[name], seed=0)
    assert gait.judged is not None and gait.judged > 0.0
    assert_crawls(name, gait.x)


SMALL = Recipe("quadruped", cell=0.1)  # about 300 tets: for the search's own checks


@pytest.fixture(scope="module")
def small():
    return creature_problem(SMALL, 30)


def test_zero_actuation_goes_nowhere(small):
    r = rollout(small, small.sinusoids(np.zeros(small.dimension)))
    # body lengths: settling onto soft legs shifts the centre a few mm (the lattice's tets are not mirror
    # symmetric, and friction only grips from the second step, once the ground's push is known): no travel
    assert abs(r.objective) < 1e-2
    assert r.unconverged == 0 and r.energy_rose == 0


def test_a_search_can_start_from_a_given_gait(small):
    """x0 (coarse.py's refinement): every sample of a tiny step lies near it; a wrong length is refused."""
    x0 = np.linspace(-1.0, 1.0, small.dimension)
    gait = find_gait(small, generations=1, population=4, seed=3, sigma0=1e-3, x0=x0)
    assert np.abs(gait.x - x0).max() < 0.01
    with pytest.raises(ValueError, match="x0 has shape"):
        find_gait(small, generations=1, population=4, x0=x0[:-1])


def test_the_same_seed_gives_the_same_gait(small):
    gait = find_gait(small, generations=3, population=4, seed=3)
    again = find_gait(small, generations=3, population=4, seed=3)
    np.testing.assert_array_equal(gait.x, again.x)
    assert gait.objective == again.objective and gait.evaluations == 12
    assert np.all(np.diff(gait.history) >= 0.0)  # the best so far never gets worse
    assert rollout(small, gait.sinusoids).objective == gait.objective


def test_restarts_and_a_judge_pick_the_finalist_best_over_the_longer_rollout(small):
    one = find_gait(small, generations=2, population=4, seed=3)
    gait = find_gait(small, generations=2, population=4, seed=3, restarts=2, judge_steps=45, finalists=2)
    assert gait.evaluations == 2 * 2 * 4 + 2 * 2 and len(gait.history) == 4
    np.testing.assert_array_equal(gait.history[:2], one.history)  # restart 0 is the single search
    judge = dataclasses.replace(small, steps=45)
    assert rollout(judge, gait.sinusoids).objective == gait.judged
    assert rollout(small, gait.sinusoids).objective == gait.objective
    assert gait.judged >= rollout(judge, one.sinusoids).objective  # the single search's best was a finalist


def test_restart_seeds_are_distinct_across_seeds():
    assert restart_seed(5, 0) == 5
    seeds = {restart_seed(s, r) for s in range(3) for r in range(3)}
    assert len(seeds) == 9


def test_the_jump_task_scores_the_rise(small):
    jump = dataclasses.replace(small, task="jump")
    x = np.zeros(small.dimension)
    x[: small.model.m] = 3.0  # full amplitude on every mode
    r = rollout(jump, jump.sinusoids(x))
    h = r.com[:, 2] - r.com[0, 2]
    assert r.objective == pytest.approx(h.mean() / small.length)
    with pytest.raises(ValueError):
        dataclasses.replace(small, task="fly")


def test_progress_is_told_every_generation_and_changes_nothing(small):
    """A search told to report after each generation finds the same gait bit for bit (exact equality: the
    callback only reads); it hears (rollouts done, planned, best J so far) once per generation, then the judge."""
    calls = []
    kw = dict(generations=2, population=4, seed=3, restarts=2, judge_steps=45, finalists=2)
    plain = find_gait(small, **kw)
    told = find_gait(small, **kw, progress=lambda d, p, b: calls.append((d, p, b)))
    np.testing.assert_array_equal(told.x, plain.x)
    assert told.objective == plain.objective and told.judged == plain.judged
    assert [c[0] for c in calls] == [4, 8, 12, 16, plain.evaluations]
    assert all(c[1] == 2 * 2 * 4 + 2 * 2 for c in calls)
    best = [c[2] for c in calls]
    assert np.all(np.diff(best) >= 0.0) and best[-1] == plain.history.max()  # the best never gets worse


def test_false_from_progress_cancels_with_one_line(small):
    calls = []

    def stop_after_three(done, planned, best):
        calls.append(done)
        return len(calls) < 3

    with pytest.raises(GaitCancelled, match="cancelled after 12 of 16 rollouts") as info:
        find_gait(small, generations=2, population=4, seed=3, restarts=2, progress=stop_after_three)
    assert isinstance(info.value, SkinmodesError) and "\n" not in str(info.value)
    assert calls == [4, 8, 12]  # it stopped at once: no rollout after the "no"


def test_rollouts_over_processes_find_the_same_gait_bit_for_bit(small):
    """workers=2 spreads each generation's rollouts and the judge's over two spawned processes: the same
    computation per rollout, so the same gait exactly (equality, not a tolerance)."""
    kw = dict(generations=2, population=4, seed=3, restarts=2, judge_steps=45, finalists=2)
    one = find_gait(small, **kw)
    two = find_gait(small, **kw, workers=2)
    np.testing.assert_array_equal(two.x, one.x)
    np.testing.assert_array_equal(two.history, one.history)
    assert two.objective == one.objective and two.judged == one.judged and two.evaluations == one.evaluations
