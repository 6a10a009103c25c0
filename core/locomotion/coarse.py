"""Search coarse, play fine: a large mesh's gait found on a coarse copy of its shape, carried over and refined.

The search runs in the reduced space (q = 20 coordinates, 6 actuation modes), so its result does not
need the fine mesh; what a rollout pays per mesh size is its contact samples (every boundary vertex:
2.4 ms per step at 724 vertices, 4.1 at 10k).  Searched directly on a 10,268-vertex blob, the same
budget as the 724-vertex blob's reached 0.84 body lengths per 10 s instead of 2.05 (bench/locomotion.md):
another draw of the same landscape.  So on a large mesh the search runs on a coarse copy of the same
shape (the same surface tetrahedralised coarser, or the caller's own coarse mesh), the gait is carried
to the fine mesh's modes by their fields (``transfer.py``: the eigensolver's order and sign of nearly
equal modes changes with resolution), and a few CMA-ES generations seeded at the carried gait, judged
on the fine mesh beside the carried gait itself, pick what the fine mesh plays.  Every step is seeded:
the same seed gives the same gait bit for bit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..geometry.tetmesh import TetMesh, boundary_faces, compact_unreferenced
from ..geometry.tetrahedralize import tetrahedralize
from .gait import Gait, GaitProblem, Progress, find_gait, planned_evaluations, rollout
from .transfer import ModeMatch, match_modes, mode_overlaps, transfer_gait

# The coarse copy's size: the creatures' blob has 2,784 tets (724 vertices), where the recipe's budget
# finds a gait of 2 body lengths per 10 s and its six modes pair with a 10k-vertex mesh's at 0.98 or more.
COARSE_TETS = 3_000
# A mesh with more tets than LARGE_FACTOR x the copy's is searched on the copy by default (12,000 tets for the
# default copy): there a rollout already costs about 1.5x the copy's (more boundary samples) and the direct
# search's draw is no better.  Below it the copy would be barely coarser than the mesh: the saving is small
# and the carried gait's pairing a needless risk.
LARGE_FACTOR = 4
# The refinement on the fine mesh: generations of the recipe's population from the carried gait, with a
# step that stays near it (the good gaits saturate tanh/logistic arguments of 2-5; 0.3 moves them a little).
REFINE_GENERATIONS = 3
REFINE_SIGMA = 0.3


def is_large(mesh: TetMesh, coarse_tets: int = COARSE_TETS) -> bool:
    """Whether ``mesh`` is searched on a coarse copy of ``coarse_tets`` tets by default (0: never)."""
    return coarse_tets > 0 and mesh.t > LARGE_FACTOR * coarse_tets


@dataclass(frozen=True)
class CoarseGait:
    """gait: what the fine mesh plays (its search vector, its J, the judge's J on the fine mesh; history: the
    coarse search's generations then the refinement's; evaluations and seconds: both meshes', from the
    pairing to the pick, the models' builds not included); coarse: the coarse search's own Gait; match: the
    modes' pairing; carried: the carried gait's J over the judge's rollout on the fine mesh (before the
    refinement); coarse_vertices."""

    gait: Gait
    coarse: Gait
    match: ModeMatch
    carried: float
    coarse_vertices: int


def coarse_copy(mesh: TetMesh, target_tets: int = COARSE_TETS) -> TetMesh:
    """The same shape at about ``target_tets`` tets: the mesh's boundary surface tetrahedralised by the
    (deterministic) lattice mesher.  mesh: n vertices -> a TetMesh of about target_tets tets."""
    X, F, _ = compact_unreferenced(mesh.X, boundary_faces(mesh.T))
    res = tetrahedralize(X, F, target_tets=target_tets, method="lattice")
    return TetMesh.from_arrays(res.X, res.T)


def _offset(progress: Progress | None, done: int, planned: int) -> Progress | None:
    """A phase's progress told as the whole search's: ``done`` rollouts before it, ``planned`` in all."""
    if progress is None:
        return None
    return lambda d, _p, best: progress(done + d, planned, best)


def search_coarse(
    problem: GaitProblem,
    mesh: TetMesh,
    coarse_problem: GaitProblem,
    coarse_mesh: TetMesh,
    generations: int,
    population: int,
    seed: int = 0,
    sigma0: float = 1.0,
    restarts: int = 1,
    judge_steps: int | None = None,
    finalists: int = 4,
    progress: Progress | None = None,
    refine_generations: int = REFINE_GENERATIONS,
) -> CoarseGait:
    """find_gait on ``coarse_problem`` (the same shape's coarse mesh, its settings the fine one's), then the gait
    carried to ``problem``'s mesh and refined there.  Raises SimulationError in one line (``match_modes``)
    when a coarse mode has no counterpart on the fine mesh: the meshes are not of one shape.

    The fine mesh judges on ``judge_steps`` (the search's rollout when None) the carried gait and the
    refinement's ``finalists`` best; the first best wins (the carried gait on a tie)."""
    start = time.perf_counter()
    match = match_modes(
        mode_overlaps(coarse_mesh, coarse_problem.model.modes.displacements, mesh, problem.model.modes.displacements)
    )
    planned = planned_evaluations(population, generations, restarts, judge_steps, finalists)
    refine_planned = planned_evaluations(population, refine_generations, 1, judge_steps, finalists) + 1
    total = planned + refine_planned
    coarse = find_gait(
        coarse_problem, generations, population, seed, sigma0, restarts, judge_steps, finalists,
        _offset(progress, 0, total),
    )  # fmt: skip
    carried_x = transfer_gait(coarse.x, match, problem.model.m, problem.k)
    judge = replace(problem, steps=judge_steps or problem.steps)
    carried = rollout(judge, judge.sinusoids(carried_x)).objective
    refine_seed = int(np.random.SeedSequence([seed, 0x5EED]).generate_state(1)[0])  # not any restart's stream
    refined = find_gait(
        problem, refine_generations, population, refine_seed, REFINE_SIGMA, 1, judge_steps, finalists,
        _offset(progress, coarse.evaluations + 1, total), x0=carried_x,
    )  # fmt: skip
    refined_judged = refined.judged if refined.judged is not None else refined.objective
    if np.isfinite(carried) and not refined_judged > carried:
        x, J = carried_x, rollout(problem, problem.sinusoids(carried_x)).objective
        judged, extra = carried, 1
    else:
        x, J, judged, extra = refined.x, refined.objective, refined_judged, 0
    gait = Gait(
        x=x,
        sinusoids=problem.sinusoids(x),
        objective=float(J),
        history=np.concatenate([coarse.history, refined.history]),
        evaluations=coarse.evaluations + 1 + refined.evaluations + extra,
        seconds=time.perf_counter() - start,
        judged=float(judged) if judge_steps is not None else None,
    )
    return CoarseGait(gait, coarse, match, float(carried), coarse_mesh.n)
