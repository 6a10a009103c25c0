"""The actuation signal: a sum of k sinusoids per actuation mode (seed 002, eq. 6).

    a_i(t) = sum_j A[i, j] sin(2 pi (t / T[i, j] + theta[i, j]))

The optimiser searches an unbounded vector; :func:`decode` maps it to bounded
parameters (amplitudes in (-A_max, A_max), periods in (T_min, T_max)), so any
sample CMA-ES draws is a gait the simulator can run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sinusoids:
    """amplitude, period (s), phase (cycles): each (m, k)."""

    amplitude: np.ndarray
    period: np.ndarray
    phase: np.ndarray


def actuation_signal(t: np.ndarray, s: Sinusoids) -> np.ndarray:
    """a (len(t), m) at times t (steps,) in seconds."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    arg = 2.0 * np.pi * (t[:, None, None] / s.period[None] + s.phase[None])
    return (s.amplitude[None] * np.sin(arg)).sum(axis=2)


def actuation_at(step: int, dt: float, s: Sinusoids) -> np.ndarray:
    """abar (m+1,) = [a(step dt); 1] for one step: the one place a step's actuation is computed,
    so a rollout and the locomotion drive feed the solver the same floats."""
    return np.append(actuation_signal(np.array([step * dt]), s)[0], 1.0)


def parameter_count(m: int, k: int) -> int:
    """Length of the search vector: amplitude, period and phase for each of m modes x k sinusoids."""
    return 3 * m * k


def decode(x: np.ndarray, m: int, k: int, amplitude_max: float, period_range: tuple[float, float]) -> Sinusoids:
    """Bounded sinusoids from a search vector x (3 m k,): amplitudes by tanh, periods by a logistic."""
    x = np.asarray(x, dtype=np.float64).reshape(3, m, k)
    lo, hi = period_range
    return Sinusoids(
        amplitude=amplitude_max * np.tanh(x[0]),
        period=lo + (hi - lo) / (1.0 + np.exp(-x[1])),
        phase=x[2],
    )
