"""Complementarity constraints (core/constraint.py)."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from core.model.constraint import (
    complementarity_matrix,
    constraint_basis,
    general_weight_space_constraint,
    lbs_weight_space_constraint,
    stick_rows,
)
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.validation.scenes import bar_scene


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=2, bones=3)
    masses = lumped_mass(s.mesh, 1000.0)
    d = default_leak_field(s.mesh)
    return s, masses, d


def row_space_angle(A, B):
    """Largest principal angle (radians) between the row spaces of A and B."""
    QA = sla.orth(np.asarray(A.todense() if sp.issparse(A) else A).T, rcond=1e-12)
    QB = sla.orth(np.asarray(B.todense() if sp.issparse(B) else B).T, rcond=1e-12)
    assert QA.shape[1] == QB.shape[1], (QA.shape, QB.shape)
    return float(np.max(sla.subspace_angles(QA, QB)))


def test_monomial_rows_span_the_same_space_as_eq_21(setup):
    s, masses, d = setup
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), masses, d)
    full = general_weight_space_constraint(s.mesh.X, Jc)  # 12 p = 432 rows
    mono = lbs_weight_space_constraint(s.mesh.X, s.rig.weights, masses, d)  # 30 rows
    assert full.shape[0] == 144 * 3 and mono.shape[0] == 30
    # Same row space: principal angles at round-off level.
    assert row_space_angle(full, mono) < 1e-7


def test_basis_is_mass_orthonormal_and_drops_redundant_rows(setup):
    s, masses, d = setup
    A = lbs_weight_space_constraint(s.mesh.X, s.rig.weights, masses, d)
    Y = constraint_basis(A, masses)
    assert np.abs(Y.T @ (masses[:, None] * Y) - np.eye(Y.shape[1])).max() < 1e-12
    doubled = sp.vstack([A, 2 * A, A[:5] + A[5:10]])
    Y2 = constraint_basis(doubled, masses)
    assert Y2.shape[1] == Y.shape[1]
    # Same constraint: W orthogonal to one basis is orthogonal to the other.
    W = np.random.default_rng(0).standard_normal((s.mesh.n, 4))
    W -= Y @ (Y.T @ (masses[:, None] * W))
    assert np.abs(A @ W).max() < 1e-10 * np.abs(A).max() * np.abs(W).max()
    assert constraint_basis(sp.csr_matrix((3, s.mesh.n)), masses).shape == (s.mesh.n, 0)


def test_stick_rows_hold_each_vertex_scaled_by_its_mass():
    masses = np.array([1.0, 2.0, 3.0, 4.0])
    R = stick_rows(np.array([3, 1]), masses)
    assert R.shape == (2, 4)
    assert np.array_equal(R.toarray(), [[0.0, 0.0, 0.0, 4.0], [0.0, 2.0, 0.0, 0.0]])
    assert stick_rows(np.zeros(0, dtype=np.int64), masses).shape == (0, 4)
