"""The physics skin's scalar factors: the cheaper of a banded Cholesky and SuperLU (issue 30).

A frame of the physics skin is mostly back-substitutions with the scalar
Laplacian's factor (about 30 at 6k vertices with smooth weights: the
preconditioner of every conjugate-gradient iteration), so their cost is the
frame's.  A limb or a long body renumbered by reverse Cuthill-McKee has a narrow
band: LAPACK's banded Cholesky (dpbtrf/dpbtrs) stores n (w + 1) entries and
solves in one dense sweep each way, where SuperLU (nested dissection, symmetric
mode) stores L and U and walks its supernodes.  Measured on the 5,929-vertex
bench limb (5,823 free vertices, 3 right-hand sides, one thread): band 157,
0.92 M entries, 0.82 ms a solve; SuperLU 1.17 M entries (L + U), 1.33 ms.  A
compact character has a wide band, so the choice is made per matrix by stored
entries (about the same time per entry), deterministically: the same mesh
always gets the same factor.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..linalg.spd import SPDSolver, nested_dissection_order

# Leaves of the nested dissection: 16 left 7 % less fill than 64 (the library's default) on the limb.
LEAF = 16


def bandwidth(A: sp.csr_matrix) -> int:
    """The largest |i - j| over A's stored entries (A square)."""
    coo = A.tocoo()
    return int(np.abs(coo.row - coo.col).max()) if coo.nnz else 0


def banded_upper(A: sp.spmatrix, w: int) -> np.ndarray:
    """A symmetric A (n x n) of bandwidth w in LAPACK's upper banded storage (w + 1, n): ab[w + i - j, j] = A[i, j]."""
    coo = sp.triu(A).tocoo()
    ab = np.zeros((w + 1, A.shape[0]), order="F")
    ab[w + coo.row - coo.col, coo.col] = coo.data
    return ab


def factorize_scalar(A: sp.spmatrix, coords: np.ndarray) -> SPDSolver:
    """Factor an SPD scalar mesh matrix A (n x n) with node coordinates (n, 3): a banded Cholesky in
    reverse Cuthill-McKee order where its band stores fewer entries than SuperLU's L and U (nested
    dissection), SuperLU otherwise.  The solver takes (n,) or (n, k) right-hand sides."""
    A = sp.csr_matrix(A)
    n = A.shape[0]
    if n == 0:  # nothing free (every vertex pinned: a prop bound to one bone): nothing to solve for
        return SPDSolver("empty", lambda B: np.zeros_like(np.asarray(B, dtype=np.float64)))
    nd = nested_dissection_order(A, coords, LEAF)
    lu = spla.splu(A[nd][:, nd].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    rcm = reverse_cuthill_mckee(A, symmetric_mode=True).astype(np.int64)
    P = A[rcm][:, rcm]
    w = bandwidth(P)
    if n * (w + 1) < lu.L.nnz + lu.U.nnz:
        c = sla.cholesky_banded(banded_upper(P, w), lower=False, check_finite=False)
        return SPDSolver("banded", _permuted(lambda B: sla.cho_solve_banded((c, False), B, check_finite=False), rcm))
    return SPDSolver("superlu-nd", _permuted(lu.solve, nd))


def _permuted(solve, perm: np.ndarray):  # type: ignore[no-untyped-def]
    """B -> P^T solve(P B) for the ordering perm (n,): the factor's unknowns are the matrix's renumbered."""
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))

    def apply(B: np.ndarray) -> np.ndarray:
        return solve(np.asfortranarray(np.asarray(B)[perm]))[inv]

    return apply
