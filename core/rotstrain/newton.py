"""Newton's method with a backtracking line search, shared by the fixed and the floating RS solvers.

Every accepted iterate lowers the incremental potential (Armijo), so what the
solver returns is a descent result, not wherever it stopped.  The stop is
scale-free: the accepted step moved the object by at most ``tolerance`` times
its size (mass-weighted RMS); the iteration cap is a safety net that reports
itself through ``converged``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import scipy.linalg as sla

State = TypeVar("State")

# Armijo's sufficient-decrease share, and the smallest step tried before giving up.
ARMIJO = 1e-4
MIN_STEP = 1e-10


@dataclass(frozen=True)
class NewtonReport:
    """iterations, converged (stopped on the tolerance, not the cap), and the energy after each iteration."""

    iterations: int
    converged: bool
    energies: tuple[float, ...]


@dataclass(frozen=True)
class Problem(Generic[State]):
    """What Newton needs: E, (g, H) at a state, moving a state along a direction, and how far a move went (m)."""

    energy: Callable[[State], float]
    derivatives: Callable[[State], tuple[np.ndarray, np.ndarray]]
    move: Callable[[State, np.ndarray], State]
    distance: Callable[[State, State], float]


def solve_spd(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """-H^-1 g for a symmetric positive definite H (k, k); a tiny diagonal shift if round-off made it singular."""
    Hs = 0.5 * (H + H.T)
    try:
        return -sla.solve(Hs, g, assume_a="pos")
    except (sla.LinAlgError, ValueError):
        shift = 1e-12 * float(np.abs(np.diag(Hs)).max())
        return -sla.solve(Hs + shift * np.eye(len(Hs)), g, assume_a="sym")


def minimize(
    problem: Problem[State], start: State, tolerance: float, max_iterations: int
) -> tuple[State, NewtonReport]:
    """Minimise from ``start``; stop when a step moved less than ``tolerance`` (m) or at the cap."""
    state, e = start, problem.energy(start)
    energies = [e]
    converged = False
    it = 0
    for it in range(1, max_iterations + 1):
        g, H = problem.derivatives(state)
        d = solve_spd(H, g)
        slope = float(g @ d)
        if slope >= 0.0:  # no descent left at round-off level
            converged = True
            break
        alpha = 1.0
        while True:
            cand = problem.move(state, alpha * d)
            e_new = problem.energy(cand)
            if e_new <= e + ARMIJO * alpha * slope:
                break
            alpha *= 0.5
            if alpha < MIN_STEP:
                # No decrease measurable in floating point: converged only if the full step was negligible anyway.
                converged = problem.distance(problem.move(state, d), state) <= tolerance
                break
        if alpha < MIN_STEP:
            break
        moved = problem.distance(cand, state)
        state, e = cand, e_new
        energies.append(e)
        if moved <= tolerance:
            converged = True
            break
    return state, NewtonReport(iterations=it, converged=converged, energies=tuple(energies))
