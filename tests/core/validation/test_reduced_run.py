"""The reduced run that measures the seed's claim (core/validation/reduced_run.py).

The measurement itself is checked here: with a full basis of the constraint's null space, a
reduced run is the full-space reference to round-off, so any error the claim's table shows
comes from the subspace, not from the solver.
"""

import numpy as np
import pytest

from core.validation.posespace_claim import ClaimScene, ClaimSetup
from core.validation.reduced_run import (
    constraint_projector,
    mass_orthonormal,
    reference_run,
    relative_errors,
    run_reduced,
)

SMALL = ClaimSetup(length=2.0, cells=3, swing_s=0.2, steps=6)


@pytest.fixture(scope="module")
def small():
    cs = ClaimScene(SMALL)
    _, x, _ = cs.frames(SMALL.swing_s, SMALL.steps)
    return cs, x


def test_the_projector_lands_on_the_constraint_and_is_idempotent(small):
    cs, _ = small
    P = constraint_projector(cs.ref)
    V = np.random.default_rng(0).standard_normal((3 * cs.scene.mesh.n, 5))
    PV = P(V)
    assert np.abs(cs.ref.C.T @ PV).max() < 1e-10 * np.abs(cs.ref.C.T @ V).max()
    assert np.allclose(P(PV), PV, atol=1e-12)


def test_mass_orthonormal_spans_the_input_and_drops_dependent_columns(small):
    cs, _ = small
    m3 = cs.ref.m3
    V = np.random.default_rng(1).standard_normal((len(m3), 4))
    U = mass_orthonormal(np.hstack([V, V[:, :1] + V[:, 1:2]]), m3)
    assert U.shape[1] == 4
    assert np.allclose(U.T @ (m3[:, None] * U), np.eye(4), atol=1e-12)
    c = np.linalg.lstsq(U, V, rcond=None)[0]
    assert np.allclose(U @ c, V, atol=1e-10)


def test_relative_errors_per_step():
    u_ref = np.ones((2, 3, 3))
    u = u_ref.copy()
    u[1] *= 1.5
    assert np.allclose(relative_errors(u, u_ref), [0.0, 0.5])


@pytest.mark.slow
def test_a_full_basis_reproduces_the_full_space_reference_to_the_solvers_tolerance(small):
    """Both runs stop Newton once a step moves the flesh by at most the reference's tolerance (1e-9 of the
    size), so they agree to about that, not to round-off: measured 1.4 tolerances (3.4e-9) here.  10
    tolerances leaves room for the BLAS and numpy the lanes use.  The first step, from rest, is one Newton
    solve apart: 4e-15 relative with threaded BLAS, 7.8e-9 with one thread (where one of the two takes one
    more iteration under the same stop); so 1e-7 relative there, 100 times the stop's 1e-9 of the size."""
    cs, x = small
    n3 = 3 * cs.scene.mesh.n
    U = mass_orthonormal(constraint_projector(cs.ref)(np.eye(n3)), cs.ref.m3)
    assert U.shape[1] == n3 - cs.ref.C.shape[1]
    u_ref, _ = reference_run(cs.ref, x, SMALL.steps)
    run = run_reduced(cs.ref, lambda k: U, x, SMALL.steps)
    assert np.abs(u_ref).max() > 1e-3  # the bend moves the flesh
    assert np.abs(run.u - u_ref).max() <= 10 * cs.ref.tol
    assert relative_errors(run.u, u_ref)[0] < 1e-7  # the first step, from rest
