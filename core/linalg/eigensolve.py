"""Constrained generalised eigenproblems: smallest modes of H x = lam M x with C x = 0.

The subspace of Benchekroun et al. 2023 (eq. 22) and the displacement-mode baseline (eq. 11)
are both of this form, with a diagonal (lumped) M and a constraint given as
an M-orthonormal basis Y of the forbidden directions (``Y^T M x = 0``, see
``constraint.constraint_basis``).

Method (the choices were measured on large grids with a 20-bone constraint;
``bench/REPORT.md`` keeps the current figures):

* shift-invert Lanczos (ARPACK ``eigsh``) with a negative shift, so
  ``H - sigma M`` is SPD even when H is singular (no pins, no constraint);
* the constraint enters the shift-invert operator through a Schur complement
  on the k constraint directions: one block solve of k right-hand sides at
  set-up, then one sparse solve and a k x k correction per Lanczos step;
* the SPD factorisation is :func:`spd.factorize_spd` (SuperLU with a
  geometric nested-dissection ordering, or CHOLMOD for the benchmark peer).
  LOBPCG with a smoothed-aggregation AMG preconditioner and the constraint as
  LOBPCG's ``Y`` did not reach 1e-6 in 300 iterations on a 9k-vertex version
  of that problem, so it is not used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SubspaceError
from .spd import factorize_spd


@dataclass(frozen=True)
class EigenResult:
    """eigenvalues: (k,) ascending; vectors: (n, k), M-orthonormal, satisfying the constraint."""

    eigenvalues: np.ndarray
    vectors: np.ndarray
    backend: str


def canonical_signs(V: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Flip each column so its mass-weighted third moment is positive.

    Deterministic and invariant under rotations of the mesh, unlike the sign
    of any particular entry.
    """
    s = np.sign(mass @ V**3)
    s[s == 0] = 1.0
    return V * s


def constrained_eigenmodes(
    H: sp.spmatrix,
    mass: np.ndarray,
    Y: np.ndarray,
    k: int,
    coords: np.ndarray | None = None,
    backend: str = "superlu",
    tol: float = 1e-10,
    seed: int = 0,
) -> EigenResult:
    """The k smallest eigenpairs of H x = lam M x subject to Y^T M x = 0.

    H: (n x n) symmetric PSD sparse; mass: (n,) diagonal of M; Y: (n x c)
    M-orthonormal; coords: (n, 3) node positions for the ordering.
    Raises :class:`SubspaceError` when k exceeds the constrained dimension.
    """
    H = sp.csc_matrix(H)
    n = H.shape[0]
    c = Y.shape[1]
    free = n - c
    if k < 1:
        raise SubspaceError("ask for at least one mode")
    if k >= free:
        raise SubspaceError(
            f"{k} modes requested but the rig leaves only {free} free directions on this mesh; "
            "lower the number of modes or use a finer tet mesh"
        )
    M = sp.diags(mass)
    # A negative shift keeps H - sigma M positive definite even if H is singular;
    # its size only needs to dominate round-off, relative to H's own scale.
    sigma = -1e-8 * float(H.diagonal().mean() / mass.mean())
    solver = factorize_spd(H - sigma * M, coords, backend)
    if c:
        MY = mass[:, None] * Y
        Z = solver.solve(MY)  # (n, c)  H_s^-1 M Y
        S = MY.T @ Z
        S_chol = sla.cho_factor(0.5 * (S + S.T))

        def op(v: np.ndarray) -> np.ndarray:
            x = solver.solve(np.asarray(v).ravel())
            return x - Z @ sla.cho_solve(S_chol, MY.T @ x)
    else:

        def op(v: np.ndarray) -> np.ndarray:
            return solver.solve(np.asarray(v).ravel())

    rng = np.random.default_rng(seed)
    v0 = rng.standard_normal(n)
    if c:
        v0 -= Y @ (Y.T @ (mass * v0))
    OPinv = spla.LinearOperator((n, n), matvec=op, dtype=np.float64)
    ncv = min(free - 1, max(2 * k + 1, k + 20))
    try:
        _, V = spla.eigsh(H, k=k, M=M, sigma=sigma, OPinv=OPinv, which="LM", v0=v0, tol=tol, ncv=ncv)
    except spla.ArpackNoConvergence as exc:  # pragma: no cover - reported, not expected
        raise SubspaceError(f"the eigensolver did not converge ({exc}); try fewer modes") from exc
    # Clean-up: remove round-off drift out of the constraint space, then a
    # Rayleigh-Ritz step makes V exactly M-orthonormal with sorted eigenvalues.
    if c:
        V -= Y @ (Y.T @ (mass[:, None] * V))
    SH = V.T @ (H @ V)
    SM = V.T @ (mass[:, None] * V)
    lam, Q = sla.eigh(0.5 * (SH + SH.T), 0.5 * (SM + SM.T))
    V = canonical_signs(V @ Q, mass)
    lam = np.maximum(lam, 0.0)
    return EigenResult(eigenvalues=lam, vectors=V, backend=solver.backend)
