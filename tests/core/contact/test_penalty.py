"""Contact rows (core/contact/penalty.py): energy, gradient and the exact global step.

The global step is checked against a general-purpose minimiser (1e-7 relative:
that minimiser's own tolerance); gradients against central differences (1e-6).
"""

import numpy as np
import pytest
from scipy.optimize import minimize

from core.contact.penalty import ContactRows, concatenate
from core.contact.sample_rows import stacked_rows


def problem(seed=0, q=6, a=12):
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((a, q))
    d = rng.standard_normal((a, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    J = stacked_rows(Y, np.arange(a), d)
    one = np.arange(a) < a - 4
    rows = ContactRows(J, rng.standard_normal(a), rng.uniform(10.0, 100.0, a), one)
    B = rng.standard_normal((q, q))
    return rows, B @ B.T + q * np.eye(q), rng.standard_normal((3, q))


def test_gradient_matches_differences():
    rows, _, z = problem()
    g = rows.gradient(z).ravel()
    e = 1e-6

    def at(v):
        return rows.energy((z.ravel() + v).reshape(z.shape))

    num = [(at(e * v) - at(-e * v)) / (2 * e) for v in np.eye(z.size)]
    assert np.allclose(g, num, rtol=1e-6, atol=1e-6 * np.abs(g).max())


@pytest.mark.parametrize("seed", range(4))
def test_minimise_is_the_minimiser(seed):
    if True:
        rows, H, z0 = problem(seed)
        q = H.shape[0]
        Hb = np.kron(np.eye(3), H)

        def f(z):
            d = z - z0.ravel()
            return 0.5 * d @ Hb @ d + rows.energy(z.reshape(3, q))

        def grad(z):
            return Hb @ (z - z0.ravel()) + rows.gradient(z.reshape(3, q)).ravel()

        ours = rows.minimise(H, z0, np.zeros_like(z0)).ravel()
        ref = minimize(f, np.zeros(3 * q), jac=grad, method="BFGS", options={"gtol": 1e-12}).x
        assert f(ours) <= f(ref) + 1e-7 * abs(f(ref))
        assert np.linalg.norm(grad(ours)) <= 1e-8 * np.linalg.norm(Hb @ z0.ravel())


def test_one_sided_rows_let_go():
    rows, H, z0 = problem()
    free = ContactRows(rows.J, np.full(len(rows), -1e9), rows.w, np.ones(len(rows), dtype=bool))
    assert free.energy(z0) == 0.0 and np.allclose(free.minimise(H, z0, z0), z0)


def test_hessian_is_the_active_rows():
    rows, _, z = problem()
    on = rows.active(z)
    assert np.allclose(rows.hessian(z), rows.J[on].T @ np.diag(rows.w[on]) @ rows.J[on])
    assert len(concatenate([rows, rows])) == 2 * len(rows)
    assert (rows.forces(z) >= 0).all()
