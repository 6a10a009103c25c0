"""Newton with a line search: every iteration descends, the stop is the tolerance, the cap reports itself."""

import numpy as np

from core.rotstrain.newton import Problem, minimize


def rosenbrock_problem():
    def energy(z):
        return float((1 - z[0]) ** 2 + 100 * (z[1] - z[0] ** 2) ** 2)

    def derivatives(z):
        g = np.array([-2 * (1 - z[0]) - 400 * z[0] * (z[1] - z[0] ** 2), 200 * (z[1] - z[0] ** 2)])
        # Gauss-Newton Hessian of the two squared residuals: positive definite
        Jr = np.array([[-1.0, 0.0], [-20 * z[0], 10.0]])
        return g, 2 * Jr.T @ Jr

    return Problem(energy, derivatives, lambda z, d: z + d, lambda a, b: float(np.linalg.norm(a - b)))


def test_every_iteration_lowers_the_energy_and_the_tolerance_stops_it():
    z, report = minimize(rosenbrock_problem(), np.array([-1.2, 1.0]), 1e-12, 200)
    assert report.converged
    assert np.all(np.diff(report.energies) <= 0.0)
    assert np.allclose(z, [1.0, 1.0], atol=1e-8)


def test_the_cap_is_reported_as_not_converged():
    _, report = minimize(rosenbrock_problem(), np.array([-1.2, 1.0]), 1e-12, 2)
    assert report.iterations == 2 and not report.converged
