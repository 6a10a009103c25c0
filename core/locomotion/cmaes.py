"""A small CMA-ES (Hansen 2016, "The CMA Evolution Strategy: A Tutorial"), numpy only, seeded.

(mu/mu_w, lambda)-CMA-ES with cumulative step-size adaptation and rank-one plus
rank-mu covariance updates, the tutorial's default constants.  Minimises.
The same seed gives the same sequence of samples, bit for bit, on one machine
and numpy version (one generator, fixed call order, a symmetric eigensolve).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class CMAES:
    """State of the search in n dimensions.  mean (n,), sigma, C (n, n); population lambda."""

    mean: np.ndarray
    sigma: float
    population: int = 0
    seed: int = 0
    C: np.ndarray = field(init=False)
    generation: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        n = len(self.mean)
        self.mean = np.asarray(self.mean, dtype=np.float64).copy()
        lam = self.population or 4 + int(3 * np.log(n))
        self.population = lam
        mu = lam // 2
        w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        self.weights = w / w.sum()
        self.mu = mu
        self.mu_eff = 1.0 / (self.weights**2).sum()
        me = self.mu_eff
        self.c_sigma = (me + 2) / (n + me + 5)
        self.d_sigma = 1 + 2 * max(0.0, np.sqrt((me - 1) / (n + 1)) - 1) + self.c_sigma
        self.c_c = (4 + me / n) / (n + 4 + 2 * me / n)
        self.c_1 = 2 / ((n + 1.3) ** 2 + me)
        self.c_mu = min(1 - self.c_1, 2 * (me - 2 + 1 / me) / ((n + 2) ** 2 + me))
        self.chi_n = np.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n**2))
        self.p_sigma = np.zeros(n)
        self.p_c = np.zeros(n)
        self.C = np.eye(n)
        self.B = np.eye(n)
        self.D = np.ones(n)
        self.rng = np.random.default_rng(self.seed)

    def ask(self) -> np.ndarray:
        """lambda candidates (lambda, n)."""
        z = self.rng.standard_normal((self.population, len(self.mean)))
        self._y = (z * self.D) @ self.B.T  # y ~ N(0, C)
        return self.mean + self.sigma * self._y

    def tell(self, values: np.ndarray) -> None:
        """Update from the candidates' objective values (lambda,), smaller is better."""
        n = len(self.mean)
        order = np.argsort(values, kind="stable")
        y = self._y[order[: self.mu]]
        y_w = self.weights @ y
        self.mean = self.mean + self.sigma * y_w
        # C^-1/2 y_w = B diag(1/D) B^T y_w
        c_inv_half_y = self.B @ ((self.B.T @ y_w) / self.D)
        cs, cc = self.c_sigma, self.c_c
        self.p_sigma = (1 - cs) * self.p_sigma + np.sqrt(cs * (2 - cs) * self.mu_eff) * c_inv_half_y
        self.generation += 1
        norm_ps = np.linalg.norm(self.p_sigma)
        h_sigma = norm_ps / np.sqrt(1 - (1 - cs) ** (2 * self.generation)) < (1.4 + 2 / (n + 1)) * self.chi_n
        self.p_c = (1 - cc) * self.p_c + h_sigma * np.sqrt(cc * (2 - cc) * self.mu_eff) * y_w
        rank_mu = (self.weights[:, None] * y).T @ y
        delta = (1 - h_sigma) * cc * (2 - cc)
        self.C = (
            (1 - self.c_1 - self.c_mu) * self.C
            + self.c_1 * (np.outer(self.p_c, self.p_c) + delta * self.C)
            + self.c_mu * rank_mu
        )
        self.sigma *= np.exp((cs / self.d_sigma) * (norm_ps / self.chi_n - 1))
        self.C = 0.5 * (self.C + self.C.T)
        d2, self.B = np.linalg.eigh(self.C)
        self.D = np.sqrt(np.maximum(d2, 1e-30))


@dataclass(frozen=True)
class SearchResult:
    """best x (n,), its value, best value per generation (g,), evaluations made; elite (e, n): the e best
    samples seen, best first (x is elite[0]), with their values (e,)."""

    x: np.ndarray
    value: float
    history: np.ndarray
    evaluations: int
    elite: np.ndarray
    elite_values: np.ndarray


def minimize(
    f: Callable[[np.ndarray], float],
    x0: np.ndarray,
    sigma0: float,
    generations: int,
    population: int = 0,
    seed: int = 0,
    keep: int = 1,
    after: Callable[[int, float], bool] | None = None,
    evaluate: Callable[[np.ndarray], np.ndarray] | None = None,
) -> SearchResult:
    """Minimise f from x0 for a number of generations; returns the best sample seen and the ``keep`` best.

    after: told (evaluations so far, best value so far) after every generation; False stops the search
    there (the result then holds the generations done).  It only reads: the samples do not depend on it.
    evaluate: f over a whole generation at once, (lambda, n) -> (lambda,) (e.g. over processes); it must
    return what f would, value for value, so the search is the same."""
    es = CMAES(np.asarray(x0, dtype=np.float64), sigma0, population, seed)
    elite, elite_v = np.asarray(x0, dtype=np.float64)[None], np.array([np.inf])
    history = []
    for _ in range(generations):
        X = es.ask()
        # each f is a whole rollout; the population is small
        values = np.array([f(x) for x in X]) if evaluate is None else np.asarray(evaluate(X), dtype=np.float64)
        es.tell(values)
        # stable sort with the elite first: a tie keeps the earlier sample, as a strict "<" would
        order = np.argsort(np.concatenate([elite_v, values]), kind="stable")[:keep]
        elite, elite_v = np.concatenate([elite, X])[order], np.concatenate([elite_v, values])[order]
        history.append(float(elite_v[0]))
        if after is not None and after(len(history) * es.population, float(elite_v[0])) is False:
            break
    return SearchResult(
        elite[0].copy(), float(elite_v[0]), np.array(history), len(history) * es.population, elite, elite_v
    )
