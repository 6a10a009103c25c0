"""Rollouts and the gait search: simulate a sinusoidal actuation, score it, let CMA-ES improve it.

A rollout runs ``steps`` backward-Euler steps from rest on the ground and
records the centre of mass and the forward axis, both read from Z (q x 3)
in O(q) per step: nothing in the loop touches the mesh beyond its contact samples.  The search
minimises -J over the 3 m k sinusoid parameters (``signal.decode``), one
rollout per candidate, here or over a pool of processes (``workers``: the
same gait bit for bit).  Several seeded restarts and a judge (the finalists
replayed over a longer rollout) make the found gait depend less on where one
search's last bits happen to send it.  A progress callback hears every
generation and may cancel the search (:class:`GaitCancelled`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from ..contact.ground import GroundPlane
from ..errors import SkinmodesError
from .cmaes import minimize
from .model import LocomotionModel
from .objective import body_length, jump_objective, locomotion_objective
from .signal import Sinusoids, actuation_at, decode, parameter_count
from .step import State, Stepper, StepSettings, body_rotation, rest_state


@dataclass(frozen=True)
class GaitProblem:
    """What to optimise.  direction (3,): unit target direction; forward (3,): the body's forward axis
    at rest (defaults to direction); k sinusoids per mode; steps per rollout; amplitude_max in radii
    (the modes' unit); period_range (s); task: "walk" (displacement x alignment) or "jump" (mean rise
    of the centre of mass along the ground's normal, in body lengths); side: the weight of sideways drift
    (``objective.displacement``; 0 is the seed's objective)."""

    model: LocomotionModel
    settings: StepSettings
    ground: GroundPlane
    direction: np.ndarray
    forward: np.ndarray | None = None
    k: int = 1
    steps: int = 200
    amplitude_max: float = 0.15
    period_range: tuple[float, float] = (0.3, 1.5)
    task: str = "walk"
    side: float = 1.0
    length: float = field(init=False)

    def __post_init__(self) -> None:
        if self.task not in ("walk", "jump"):
            raise ValueError(f"unknown locomotion task {self.task!r}; use 'walk' or 'jump'")
        d = np.asarray(self.direction, dtype=np.float64)
        object.__setattr__(self, "direction", d / np.linalg.norm(d))
        f = self.direction if self.forward is None else np.asarray(self.forward, dtype=np.float64)
        object.__setattr__(self, "forward", f / np.linalg.norm(f))
        X = self.model.positions(self.model.rest)
        object.__setattr__(self, "length", body_length(X, self.direction))

    @property
    def dimension(self) -> int:
        return parameter_count(self.model.m, self.k)

    def sinusoids(self, x: np.ndarray) -> Sinusoids:
        return decode(x, self.model.m, self.k, self.amplitude_max, self.period_range)


def ground_under(model: LocomotionModel, normal: tuple[float, float, float] = (0.0, 0.0, 1.0), friction: float = 0.0):
    """The plane touching the rest shape's lowest vertex along ``normal``."""
    n = np.asarray(normal, dtype=np.float64)
    return GroundPlane(normal=tuple(n), height=float((model.positions(model.rest) @ n).min()), friction=friction)


@dataclass(frozen=True)
class Rollout:
    """com, forward: (steps+1, 3); objective J; iterations: total local-global iterations;
    unconverged / energy_rose: steps that hit the cap / stopped on a rise; final: the last State;
    Z: (steps+1, q, 3) every step's reduced coordinates when recorded (for output and checks), else None."""

    com: np.ndarray
    forward: np.ndarray
    objective: float
    iterations: int
    unconverged: int
    energy_rose: int
    final: State
    Z: np.ndarray | None = None


def rollout(problem: GaitProblem, sinusoids: Sinusoids, record: bool = False) -> Rollout:
    """Simulate ``problem.steps`` steps from rest under the given actuation; ``record`` keeps every Z."""
    model, s = problem.model, problem.settings
    stepper = Stepper(model, s, problem.ground)
    state = rest_state(model)
    com = np.empty((problem.steps + 1, 3))
    fwd = np.empty((problem.steps + 1, 3))
    com[0], fwd[0] = model.centre_of_mass(state.Z), problem.forward
    Zs = np.empty((problem.steps + 1, *state.Z.shape)) if record else None
    if Zs is not None:
        Zs[0] = state.Z
    iterations = unconverged = rose = 0
    for i in range(problem.steps):  # time steps are sequential; each costs O(q^2 + C q m)
        state, rep = stepper.step(state, actuation_at(i + 1, s.dt, sinusoids))
        iterations += rep.iterations
        unconverged += not rep.converged
        rose += rep.energy_rose
        com[i + 1] = model.centre_of_mass(state.Z)
        fwd[i + 1] = body_rotation(model, state.Z) @ problem.forward
        if Zs is not None:
            Zs[i + 1] = state.Z
        if not np.isfinite(com[i + 1]).all():
            return Rollout(com, fwd, -np.inf, iterations, unconverged, rose, state, Zs)
    if problem.task == "jump":
        J = jump_objective(com, np.asarray(problem.ground.normal, dtype=np.float64), problem.length)
    else:
        up = np.asarray(problem.ground.normal, dtype=np.float64)
        J = locomotion_objective(com, fwd, problem.direction, problem.length, up, problem.side)
    return Rollout(com, fwd, J, iterations, unconverged, rose, state, Zs)


@dataclass(frozen=True)
class Gait:
    """The best gait found: x (search vector), its sinusoids and objective (over the search's rollout);
    history: best J per generation, restarts one after another; evaluations (rollouts, the judge's
    included); seconds of wall time; judged: J of x over the judge's longer rollout (None without one)."""

    x: np.ndarray
    sinusoids: Sinusoids
    objective: float
    history: np.ndarray
    evaluations: int
    seconds: float
    judged: float | None = None


class GaitCancelled(SkinmodesError):
    """The gait search was stopped by its progress callback; nothing was found (no partial gait is returned:
    a search cut short would hand back a gait its judge never saw)."""


# Told (rollouts done, rollouts planned, best objective J so far; -inf before a finite one) after every
# CMA-ES generation and after the judge; returning False cancels the search (:class:`GaitCancelled`).
Progress = Callable[[int, int, float], bool | None]


def rollout_cost(problem: GaitProblem, x: np.ndarray) -> float:
    """What the search minimises for a search vector x (3 m k,): -J of its rollout, +inf when it blew up."""
    J = rollout(problem, problem.sinusoids(x)).objective
    return -J if np.isfinite(J) else np.inf


# A worker process's problem, set once by the pool's initializer (not sent with every candidate).
_WORKER: list[GaitProblem] = []


def _set_worker_problem(problem: GaitProblem) -> None:
    _WORKER[:] = [problem]


def _worker_objective(args: tuple[np.ndarray, int | None]) -> float:
    x, steps = args
    problem = _WORKER[0] if steps is None else replace(_WORKER[0], steps=steps)
    return rollout(problem, problem.sinusoids(x)).objective


@contextmanager
def rollouts(problem: GaitProblem, workers: int) -> Iterator[Callable[[np.ndarray, int | None], np.ndarray]]:
    """A function (candidates (c, n), steps or None: the problem's) -> their rollouts' J (c,), sequential for
    one worker, else over ``workers`` processes (spawned: safe inside a host that must not fork, e.g.
    Blender).  Each rollout is the same computation in either case, so the values are the same bit for bit
    on one machine (the workers' BLAS runs the same kernels; a rollout's matrices are q x q, q = 4 s)."""
    if workers <= 1:

        def here(X: np.ndarray, steps: int | None = None) -> np.ndarray:
            p = problem if steps is None else replace(problem, steps=steps)
            return np.array([rollout(p, p.sinusoids(x)).objective for x in X])

        yield here
        return
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_set_worker_problem, initargs=(problem,)) as pool:

        def spread(X: np.ndarray, steps: int | None = None) -> np.ndarray:
            return np.array(list(pool.map(_worker_objective, [(x, steps) for x in X])))

        yield spread


def planned_evaluations(
    population: int, generations: int, restarts: int, judge_steps: int | None, finalists: int
) -> int:
    """Rollouts a search makes: every generation's population, and (with a judge) up to ``finalists`` per restart."""
    return restarts * generations * population + (restarts * finalists if judge_steps is not None else 0)


def restart_seed(seed: int, restart: int) -> int:
    """The generator seed of one restart: restart 0 is ``seed`` itself (a single search is unchanged); the
    others come from a SeedSequence of (seed, restart), so seeds 0, 1, 2 never share a restart's stream."""
    if restart == 0:
        return seed
    return int(np.random.SeedSequence([seed, restart]).generate_state(1)[0])


def find_gait(
    problem: GaitProblem,
    generations: int = 20,
    population: int = 8,
    seed: int = 0,
    sigma0: float = 1.0,
    restarts: int = 1,
    judge_steps: int | None = None,
    finalists: int = 4,
    progress: Progress | None = None,
    workers: int = 1,
    x0: np.ndarray | None = None,
) -> Gait:
    """CMA-ES over the sinusoid parameters from a still start (zero amplitudes); same seed, same gait.

    restarts: independent seeded searches of ``generations`` each (a search that settles on a weak
    local optimum is one of several).  judge_steps: when given, every search's ``finalists`` best samples
    are replayed for that many steps and the one with the best J over it is returned: a short search
    rollout cannot see a gait that turns around or stalls later (measured: a quadruped facing 0.97 of the
    way at 3 s faced backwards at 10 s), so the gait is chosen on the horizon it is judged on.
    progress (:data:`Progress`): told after every generation; it only reads, so a search with one finds
    the same gait bit for bit as without; False from it raises :class:`GaitCancelled`.
    workers: processes a generation's rollouts (and the judge's) are spread over (:func:`rollouts`); the
    same gait bit for bit as one.  1 (the default) runs them here: on 2 shared cores the pool's start
    (about a second per worker) and the copies of the model cost more than they save at small meshes.
    x0 (3 m k,): where every restart's CMA-ES starts instead of the still start (e.g. a gait carried from a
    coarser mesh, refined here with a small sigma0: ``coarse.py``)."""
    start = np.zeros(problem.dimension) if x0 is None else np.asarray(x0, dtype=np.float64)
    if start.shape != (problem.dimension,):
        raise ValueError(f"x0 has shape {start.shape}; this problem's search vector is ({problem.dimension},)")
    with rollouts(problem, workers) as evaluate:
        return _search(
            problem, generations, population, seed, sigma0, restarts, judge_steps, finalists, progress, evaluate, start
        )


def _search(
    problem: GaitProblem,
    generations: int,
    population: int,
    seed: int,
    sigma0: float,
    restarts: int,
    judge_steps: int | None,
    finalists: int,
    progress: Progress | None,
    evaluate: Callable[[np.ndarray, int | None], np.ndarray],
    x0: np.ndarray,
) -> Gait:
    """find_gait's body, with its rollouts' evaluator and start x0 (n,)."""
    start = time.perf_counter()
    population = population or 4 + int(3 * np.log(problem.dimension))  # CMAES's default, to plan with
    planned = planned_evaluations(population, generations, restarts, judge_steps, finalists)
    tally = {"done": 0, "best": -np.inf}  # rollouts of the finished restarts; best J of all so far

    def told(done: int, best_value: float) -> bool:
        best = max(tally["best"], -best_value)
        if progress is not None and progress(int(tally["done"]) + done, planned, best) is False:
            return False
        return True

    def costs(X: np.ndarray) -> np.ndarray:
        J = evaluate(X, None)
        return np.where(np.isfinite(J), -J, np.inf)

    keep = finalists if judge_steps is not None else 1
    runs = []
    for r in range(restarts):
        res = minimize(
            lambda x: rollout_cost(problem, x),
            x0,
            sigma0,
            generations,
            population,
            restart_seed(seed, r),
            keep,
            told,
            costs,
        )
        if len(res.history) < generations:
            raise GaitCancelled(
                f"the gait search was cancelled after {tally['done'] + res.evaluations} of "
                f"{planned} rollouts; nothing was stored"
            )
        runs.append(res)
        tally["done"] += res.evaluations
        tally["best"] = max(tally["best"], -res.value)
    candidates = [(x, -v) for res in runs for x, v in zip(res.elite, res.elite_values) if np.isfinite(v)]
    evaluations = sum(res.evaluations for res in runs)
    judged = None
    if judge_steps is not None and candidates:
        scores = evaluate(np.array([x for x, _ in candidates]), judge_steps)
        evaluations += len(candidates)
        i = int(np.argmax(np.where(np.isfinite(scores), scores, -np.inf)))  # first best: deterministic
        (x, J), judged = candidates[i], float(scores[i])
        if progress is not None:
            progress(evaluations, planned, float(tally["best"]))  # the judge is the search's last step
    else:
        best = min(runs, key=lambda res: res.value)  # min is stable: the earliest restart wins a tie
        x, J = best.x, -best.value
    return Gait(
        x=x,
        sinusoids=problem.sinusoids(x),
        objective=J,
        history=-np.concatenate([res.history for res in runs]),
        evaluations=evaluations,
        seconds=time.perf_counter() - start,
        judged=judged,
    )
