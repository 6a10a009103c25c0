"""fast-cody's skinning eigenmodes beside ours (bench-only interpreter), as shipped and with a full constraint.

    python bench/peers/fastcody_modes.py IN.npz

IN.npz: X (n,3), T (t,4), Wrig (n,b) rig weights, m modes, dt (its momentum-leak diffusion step).  Writes
IN.npz.out.npz with

- ``W_shipped`` (n, m): ``skinning_subspace`` on its own weight-space constraint
  (``lbs_weight_space_constraint``), the pipeline of its rig-animation app;
- ``W_full`` (n, m): the same call given an orthonormal basis of *all* the constraint's rows;
- ``d`` (n,): its momentum-leak field (``momentum_leaking_matrix``), to build ours on the same one;

and prints one JSON line: the rank of its constraint's rows (relative tolerance 1e-10) and the rank of the
rows its ``lbs_weight_space_constraint`` returns.

Why the second: fast-cody's ``orthonormalize`` keeps its input's k leading singular directions but returns
``U S[:, :k] Vh[:k, :k]``, the SVD rebuilt on the input's *first k columns*: a basis of those k rows only,
not of all of them.  The rows are ordered by coordinate, monomial and bone, so the first k cover one
coordinate's first bones (measured on the bench's grids with six bones: 15 of 30 directions at 343
vertices, 23 of 51 at 2,197), and its modes break the complementarity constraint it asked for.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import scipy.sparse as sp

from bench.peers.fastcody_runner import _import_fast_cody

# Singular values below this share of the largest are round-off: the rows' numerical rank.
RANK_TOL = 1e-10


def constraint_rows(fc, X: np.ndarray, C) -> np.ndarray:
    """(12 b * 12, n) the rows fast-cody's ``lbs_weight_space_constraint`` stacks (its loop), before it
    orthonormalises them: C^T P_i diag(X_j) and C^T P_i for each coordinate i and j."""
    n = len(X)
    Ct = sp.csr_matrix(C)  # (12b, 3n)
    out = []
    for i in range(3):
        Pd = sp.csr_matrix((np.ones(n), (np.arange(n) + i * n, np.arange(n))), shape=(3 * n, n))
        for j in range(3):
            out.append((Ct @ Pd @ sp.diags(X[:, j])).toarray())
        out.append((Ct @ Pd).toarray())
    return np.vstack(out)


def row_basis(A: np.ndarray) -> tuple[np.ndarray, int]:
    """(r, n) an orthonormal basis of A's rows and its rank r."""
    _, s, Vh = np.linalg.svd(A, full_matrices=False)
    r = int((s > RANK_TOL * s[0]).sum())
    return Vh[:r], r


def main(argv: list[str]) -> int:
    fc = _import_fast_cody()
    d = np.load(argv[0])
    X, T, Wr, m, dt = (
        np.asarray(d["X"]),
        np.asarray(d["T"]).astype(np.int32),
        np.asarray(d["Wrig"]),
        int(d["m"]),
        float(d["dt"]),
    )
    J = fc.lbs_jacobian(X, Wr)
    C = fc.complementary_constraint_matrix(X, T, J, dt=dt)
    shipped = np.asarray(fc.lbs_weight_space_constraint(X, C))
    full, rank = row_basis(constraint_rows(fc, X, C))
    shipped_rank = int(np.linalg.matrix_rank(shipped, tol=RANK_TOL * np.abs(shipped).max()))
    _, _, W_shipped = fc.skinning_subspace(X, T, m, 1, C=shipped, constraint_enforcement="optimal")
    _, _, W_full = fc.skinning_subspace(X, T, m, 1, C=full, constraint_enforcement="optimal")
    leak = fc.momentum_leaking_matrix(X, T, dt=dt).diagonal()[: len(X)]
    np.savez(argv[0] + ".out.npz", W_shipped=W_shipped, W_full=W_full, d=leak)
    print(json.dumps({"rank": rank, "shipped_rows": int(shipped.shape[0]), "shipped_rank": shipped_rank}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
