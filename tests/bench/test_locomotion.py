"""The locomotion section's page (bench/locomotion.py): its rows, direct and searched coarse, render as stated."""

from bench.locomotion import _budget, report_lines


def row(**kw):
    base = {
        "creature": "blob",
        "vertices": 724,
        "tets": 2784,
        "samples": 458,
        "precompute_s": 0.1,
        "optimisation_s": 129.0,
        "rollouts": 588,
        "steps_per_rollout": 90,
        "ms_per_step": 2.4,
        "objective": 0.58,
        "body_lengths": 2.05,
        "length": 1.0,
        "distance_per_cycle": 0.19,
        "heading_deg": 0.4,
        "facing": 0.96,
        "iterations": 12.8,
        "deepest": 0.0016,
        "inverted": 0,
        "history": [0.1] * 48,
    }
    return {**base, **kw}


def test_budgets_say_restarts_generations_and_the_refinement():
    assert _budget(row()) == "48 x 12 x 90"  # a run before restarts were recorded
    direct = row(restarts=3, generations=16, population=12, refine_generations=0)
    assert _budget(direct) == "3 x 16 x 12 x 90"
    coarse = row(restarts=3, generations=16, population=12, refine_generations=3)
    assert _budget(coarse) == "3 x 16 x 12 x 90, then 3 x 12 x 90 on the mesh"


def test_a_large_row_is_set_beside_the_goal_the_seed_and_the_direct_search():
    big = row(
        creature="blob, ~10k vertices",
        vertices=10_268,
        searched_vertices=724,
        coarse_search_s=130.0,
        optimisation_s=160.0,
        restarts=3,
        generations=16,
        population=12,
        refine_generations=3,
    )
    text = "\n".join(report_lines({"cpu": "AMD EPYC", "load": "idle", "rows": [row(), big]}))
    assert "| blob, ~10k vertices | 10,268 |" in text and "| 724 | 160 |" in text
    assert "At 10,268 vertices the search took 160 s in all" in text and "130 s of them on the 724-vertex copy" in text
    assert "Goal: at most 300 s" in text and "900-984 s" in text and "216 s" in text
