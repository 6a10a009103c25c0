"""Constrained generalised eigenproblems (core/linalg/eigensolve.py)."""

import numpy as np
import pytest
import scipy.linalg as sla

from core.errors import SubspaceError
from core.linalg.eigensolve import constrained_eigenmodes
from core.model.constraint import constraint_basis, lbs_weight_space_constraint
from core.model.fem import corotational_weight_space_hessian, lumped_mass
from core.model.leak import default_leak_field
from core.validation.scenes import bar_scene, chain_weights


@pytest.fixture(scope="module")
def problem():
    s = bar_scene(cells_per_unit=3, bones=4)
    masses = lumped_mass(s.mesh, 1000.0)
    H = corotational_weight_space_hessian(s.mesh, 1e4, 0.0)
    A = lbs_weight_space_constraint(s.mesh.X, s.rig.weights, masses, default_leak_field(s.mesh))
    return s, masses, H, constraint_basis(A, masses)


def test_matches_a_dense_solve_in_the_constraint_null_space(problem):
    s, masses, H, Y = problem
    res = constrained_eigenmodes(H, masses, Y, 6, coords=s.mesh.X)
    # Dense reference: eigenproblem of H restricted to the M-orthogonal complement of Y.
    N = sla.null_space((masses[:, None] * Y).T)
    lam_ref = sla.eigh(N.T @ H.toarray() @ N, N.T @ (masses[:, None] * N), eigvals_only=True)[:6]
    assert np.allclose(res.eigenvalues, lam_ref, rtol=1e-8)
    V = res.vectors
    assert np.abs(V.T @ (masses[:, None] * V) - np.eye(6)).max() < 1e-10
    # Eigen-residual, measured against the size of H V, within the constraint space.
    R = H @ V - masses[:, None] * V * res.eigenvalues
    R -= masses[:, None] * (Y @ (Y.T @ R))
    assert np.linalg.norm(R) <= 1e-8 * np.linalg.norm(H @ V)


def test_singular_hessian_without_constraint_gives_the_constant_mode(problem):
    s, masses, H, _ = problem
    res = constrained_eigenmodes(H, masses, np.zeros((s.mesh.n, 0)), 4, coords=s.mesh.X)
    assert res.eigenvalues[0] == pytest.approx(0.0, abs=1e-8 * res.eigenvalues[1])
    w0 = res.vectors[:, 0]
    assert np.abs(w0 - w0.mean()).max() < 1e-8 * np.abs(w0).max()


def test_many_bones_are_handled(problem):
    """A 60-bone rig: 600 constraint rows, many of them redundant on a coarse bar."""
    s, masses, H, _ = problem
    W = chain_weights(s.mesh.X, np.linspace(0, s.length, 60))
    A = lbs_weight_space_constraint(s.mesh.X, W, masses, np.ones(s.mesh.n))
    Y = constraint_basis(A, masses)
    assert Y.shape[1] < 600
    res = constrained_eigenmodes(H, masses, Y, 8, coords=s.mesh.X)
    assert np.abs(A @ res.vectors).max() < 1e-9 * np.abs(A).max() * np.abs(res.vectors).max()


def test_too_many_modes_is_a_clear_error(problem):
    s, masses, H, Y = problem
    with pytest.raises(SubspaceError, match="free directions"):
        constrained_eigenmodes(H, masses, Y, s.mesh.n - Y.shape[1], coords=s.mesh.X)


def test_same_inputs_same_modes(problem):
    s, masses, H, Y = problem
    a = constrained_eigenmodes(H, masses, Y, 5, coords=s.mesh.X)
    b = constrained_eigenmodes(H, masses, Y, 5, coords=s.mesh.X)
    assert np.array_equal(a.vectors, b.vectors)
