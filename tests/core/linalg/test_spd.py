"""Sparse SPD solves (core/linalg/spd.py): the nested-dissection ordering and the factorisation."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.linalg.spd import factorize_spd, nested_dissection_order
from core.model.fem import lumped_mass, scalar_laplacian
from core.validation.scenes import bar_scene


@pytest.fixture(scope="module")
def problem():
    """A mesh Laplacian made definite by the mass: the kind of matrix every room factors."""
    s = bar_scene(cells_per_unit=3, bones=4)
    A = sp.csc_matrix(scalar_laplacian(s.mesh) + sp.diags(lumped_mass(s.mesh, 1000.0)))
    return s, A


def test_nested_dissection_is_a_permutation(problem):
    s, A = problem
    p = nested_dissection_order(A, s.mesh.X, leaf=8)
    assert np.array_equal(np.sort(p), np.arange(s.mesh.n))


@pytest.mark.parametrize("ordered", [True, False], ids=["nested-dissection", "superlu-ordering"])
def test_the_factor_solves_many_right_hand_sides(problem, ordered):
    """Residual of a few ulps times the condition of a mesh Laplacian (1e-10 relative)."""
    s, A = problem
    solver = factorize_spd(A, s.mesh.X if ordered else None)
    assert solver.backend == ("superlu-nd" if ordered else "superlu")
    B = np.random.default_rng(0).standard_normal((s.mesh.n, 3))
    X = solver.solve(B)
    assert np.linalg.norm(A @ X - B) <= 1e-10 * np.linalg.norm(B)


def test_an_unknown_backend_is_refused(problem):
    s, A = problem
    with pytest.raises(ValueError, match="unknown factorisation backend"):
        factorize_spd(A, s.mesh.X, backend="pardiso")
