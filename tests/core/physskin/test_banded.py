"""The physics skin's scalar factors: banded where the band is narrow, SuperLU elsewhere, both exact."""

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.fem import scalar_laplacian
from core.physskin.banded import banded_upper, bandwidth, factorize_scalar
from testkit.limb import cylinder_mesh


def grounded(mesh: TetMesh) -> sp.csr_matrix:
    """The mesh's Laplacian with its first vertex's row and column dropped (SPD)."""
    L = scalar_laplacian(mesh, np.ones(mesh.t))
    return sp.csr_matrix(L[1:][:, 1:])


def check_solves(mesh: TetMesh, backend: str) -> None:
    A = grounded(mesh)
    solver = factorize_scalar(A, mesh.X[1:])
    assert solver.backend == backend
    rng = np.random.default_rng(0)
    B = rng.standard_normal((A.shape[0], 3))
    exact = spla.spsolve(A.tocsc(), B)
    assert np.abs(solver.solve(B) - exact).max() < 1e-9 * np.abs(exact).max()
    b = B[:, 0].copy()
    assert np.abs(solver.solve(b) - exact[:, 0]).max() < 1e-9 * np.abs(exact).max()


def test_a_long_limb_gets_the_banded_cholesky():
    check_solves(cylinder_mesh(24, 4), "banded")


def test_a_compact_block_gets_superlu():
    X, T = box_tet_mesh((16, 16, 16), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    check_solves(TetMesh.from_arrays(X, T), "superlu-nd")


def test_banded_storage_and_bandwidth():
    A = sp.csr_matrix(np.array([[4.0, 1.0, 0.0], [1.0, 5.0, 2.0], [0.0, 2.0, 6.0]]))
    assert bandwidth(A) == 1
    ab = banded_upper(A, 1)
    assert np.array_equal(ab, [[0.0, 1.0, 2.0], [4.0, 5.0, 6.0]])
