"""Search coarse, play fine (core/locomotion/coarse.py): the carried gait, its refinement, the refusal, the default."""

import dataclasses

import numpy as np
import pytest

from core.errors import SimulationError
from core.locomotion.coarse import COARSE_TETS, LARGE_FACTOR, coarse_copy, is_large, search_coarse
from core.locomotion.creatures import Recipe, creature_mesh, creature_problem, search_gait
from core.locomotion.stored import GaitSettings, search

from .conftest import slug_model

COARSE = Recipe("quadruped", cell=0.1)  # 140 vertices, 336 tets
FINE = Recipe("quadruped", cell=0.05)  # 703 vertices, 2,592 tets: the same shape, 5x the vertices
BUDGET = dict(generations=2, population=4, seed=3, sigma0=2.0, restarts=1, judge_steps=45, finalists=2)


@pytest.fixture(scope="module")
def pair():
    mc, mf = creature_mesh(COARSE), creature_mesh(FINE)
    return creature_problem(FINE, 30, mf), mf, creature_problem(COARSE, 30, mc), mc


def test_the_same_seed_gives_the_same_carried_and_refined_gait(pair):
    a = search_coarse(*pair, **BUDGET, refine_generations=2)
    b = search_coarse(*pair, **BUDGET, refine_generations=2)
    np.testing.assert_array_equal(a.gait.x, b.gait.x)  # bit for bit
    assert a.gait.objective == b.gait.objective and a.gait.judged == b.gait.judged
    assert a.match.overlap.min() > 0.9  # the same six modes on both lattices
    assert len(a.gait.history) == 2 + 2  # the coarse search's generations, then the refinement's
    assert a.gait.judged >= a.carried  # the fine mesh plays the better of the carried gait and the refined ones
    assert a.gait.x.shape == (pair[0].dimension,) and a.coarse_vertices == pair[3].n


def test_progress_hears_both_phases_and_never_passes_the_plan(pair):
    calls = []
    search_coarse(*pair, **BUDGET, refine_generations=1, progress=lambda d, p, b: calls.append((d, p)))
    done = [d for d, _ in calls]
    assert done == sorted(done) and all(d <= p for d, p in calls)
    assert len({p for _, p in calls}) == 1 and len(calls) >= 2 + 1


def test_a_mesh_of_another_shape_is_refused_in_one_line(pair):
    fine_problem, fine_mesh = pair[0], pair[1]
    slug_mesh, _mat, slug = slug_model()
    slug_problem = dataclasses.replace(fine_problem, model=slug)
    with pytest.raises(SimulationError, match="no counterpart") as err:
        search_coarse(fine_problem, fine_mesh, slug_problem, slug_mesh, **BUDGET)
    assert "\n" not in str(err.value)


def test_a_mesh_is_large_above_four_coarse_copies(pair):
    fine_mesh = pair[1]
    assert LARGE_FACTOR * COARSE_TETS == 12_000
    assert not is_large(fine_mesh) and is_large(fine_mesh, coarse_tets=fine_mesh.t // LARGE_FACTOR - 1)
    assert not is_large(fine_mesh, coarse_tets=0)  # 0: always the mesh itself


def test_the_coarse_copy_is_the_same_shape_coarser(pair):
    """The lattice mesher covers the surface, so the copy is the shape grown by up to one of its cells
    (measured: 1.30x the volume at 621 tets, 1.15x at 1,434)."""
    fine_mesh = pair[1]
    copy = coarse_copy(fine_mesh, 600)
    assert 0.6 * 600 < copy.t < 1.6 * 600
    cell = (6.0 * copy.volumes.sum() / copy.t) ** (1.0 / 3.0)  # 6 tets per lattice cube
    np.testing.assert_allclose(copy.X.min(axis=0), fine_mesh.X.min(axis=0), atol=cell)
    np.testing.assert_allclose(copy.X.max(axis=0), fine_mesh.X.max(axis=0), atol=cell)
    assert 1.0 <= copy.volumes.sum() / fine_mesh.volumes.sum() < 1.4


@pytest.mark.slow  # two precomputes of an 8,772-tet blob: about 15 s on an idle core
def test_a_stored_search_on_a_large_mesh_runs_on_its_coarse_copy():
    """GaitSettings.coarse_tets = 2,000 makes a 8,772-tet blob large (> 4 x 2,000): its surface is tetrahedralised
    at about 2,000 tets (2,499; its modes pair at 0.92 or more), searched, the gait carried back; the same seed
    gives the same stored gait.  (The quadruped's thin legs do not survive so coarse a copy: its 5th and 6th
    modes find no counterpart, which ``search_coarse`` refuses; hence the 12,000-tet default threshold.)"""
    mesh = creature_mesh(Recipe("blob", cell=0.04))
    tiny = GaitSettings(rollout_s=0.5, judge_s=0.5, generations=2, population=4, restarts=1, seed=7, coarse_tets=2000)
    assert is_large(mesh, tiny.coarse_tets)
    a, b = search(mesh, tiny), search(mesh, tiny)
    np.testing.assert_array_equal(a.x, b.x)
    # the coarse search (2 x 4 and 4 finalists judged), the carried gait's judge, 3 refining generations of 4
    assert a.evaluations >= 2 * 4 + 1 + 3 * 4


@pytest.mark.slow  # a 4,461-vertex precompute: a few seconds on an idle core
def test_a_large_creature_is_searched_on_its_coarse_lattice_by_default():
    recipe = Recipe("quadruped", cell=0.025, generations=1, population=4, steps=10, restarts=1, judge_steps=10)
    mesh = creature_mesh(recipe)
    assert is_large(mesh)
    gait = search_gait(recipe, seed=1, mesh=mesh)
    assert len(gait.history) == 1 + 3  # one generation on the 703-vertex lattice, three on the mesh


def test_a_copy_too_coarse_to_carry_the_gait_gives_way_to_the_mesh_itself(pair):
    """Issue 40: a 500-tet copy of the quadruped loses its thin legs' modes; it was refused ("no counterpart",
    with a setting the command line had no flag for).  Now a copy that cannot carry the gait gives way to one
    twice as fine (1,000 tets: the 2,592-tet mesh is no longer large against it), then to the mesh itself: the
    same gait, bit for bit, as searching the mesh itself (Search Copy 0) with the same seed."""
    tiny = GaitSettings(rollout_s=0.5, judge_s=0.0, generations=1, population=4, restarts=1, coarse_tets=500)
    mesh = pair[1]
    assert is_large(mesh, 500) and not is_large(mesh, 1000)
    with pytest.raises(SimulationError, match="no counterpart"):  # the 500-tet copy cannot carry it
        small = coarse_copy(mesh, 500)
        search_coarse(pair[0], mesh, creature_problem(FINE, 30, small), small, **BUDGET)
    fallback = search(mesh, tiny)
    itself = search(mesh, dataclasses.replace(tiny, coarse_tets=0))
    np.testing.assert_array_equal(fallback.x, itself.x)
    assert fallback.objective == itself.objective and fallback.evaluations == itself.evaluations
