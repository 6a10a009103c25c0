"""Skinning eigenmodes (Benchekroun et al. 2023, §4).

Skinning eigenmodes are scalar weights W (n x m) minimising tr(W^T H_w W)
subject to W^T M_w W = I and the weight-space complementarity constraint
J_w W = 0 (eq. 22).  Each weight spans 12 affine degrees of freedom, so the
LBS subspace B(W) (3n x 12m) is closed under rotations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..geometry.tetmesh import TetMesh
from ..linalg.eigensolve import canonical_signs, constrained_eigenmodes
from ..model.constraint import constraint_basis, weight_space_constraint
from ..model.fem import corotational_weight_space_hessian
from ..model.materials import Material
from ..model.rig import Rig

# An extra weight keeps to the subspace when at least this share of its M-norm lies outside the
# eigenmodes and the constraint: below it the column would be round-off.
AUGMENT_FLOOR = 0.05
# An appendage chain is missed by the modes when none of its bones' flesh gets more than this
# share of the modes' body-average amplitude (:func:`modal_reach`).  Measured at 16 modes: the
# stag's tail 0.0001-0.0002 on every bone; every chain the modes move has a bone at >= 1 (fox
# tail 3.4, T-Rex tail 31 and arms 15-22, CesiumMan's arms 11, the creature's tail 8.6, the
# robot's thumb 33 and legs 11), so the threshold sits 100 x from both.
MISSED_REACH = 0.01


@dataclass(frozen=True)
class SkinningModes:
    """weights W: (n, m) M_w-orthonormal with J_w W = 0; eigenvalues: (m,) ascending."""

    weights: np.ndarray
    eigenvalues: np.ndarray
    constraint_rank: int
    seconds: float
    backend: str
    extra_used: np.ndarray | None = None  # (k,) bool: the extra weights of chains the modes missed


def skinning_eigenmodes(
    mesh: TetMesh,
    material: Material,
    masses: np.ndarray,
    rig: Rig | None,
    leak: np.ndarray | None,
    m: int,
    backend: str = "superlu",
    shape: TetMesh | None = None,
    extra_rows: sp.spmatrix | None = None,
    extra_weights: np.ndarray | None = None,
    extra_groups: np.ndarray | None = None,
    held: np.ndarray | None = None,
) -> SkinningModes:
    """Solve eq. 22 for m material-aware, rig-complementary skinning weights.

    masses: (n,) lumped vertex masses (M_w); leak: (n,) momentum-leak field d.
    ``rig=None`` gives the unconstrained modes (the first is constant).
    shape: another tet mesh of the same tets (a posed shape) whose Hessian replaces
    ``mesh``'s; extra_rows (k x n): more weight-space constraint rows, stacked under the
    complementarity rows (contact, ``core.posespace.contact``).  Both are pose-space options.
    extra_weights (n x k): candidate weights (the rig's own weights of appendage bones) and
    extra_groups (k,): their chain; a chain no mode reaches joins the modes
    (:func:`augment_weights`), so m grows by up to k.
    held: tet vertex indices every mode vanishes at, eliminated from the problem (Dirichlet): the same
    modes as stick rows on them (:func:`core.model.planted.planted_rows`), for the cost of a smaller
    problem instead of a constraint row each (thousands for a character's legs).
    """
    start = time.perf_counter()
    Hw = corotational_weight_space_hessian(mesh if shape is None else shape, material.mu, material.lam)
    free = free_vertices(mesh.n, held)
    Y = weight_space_basis(mesh.X, rig, masses, leak, extra_rows, free)
    coords = (mesh if shape is None else shape).X
    sub = Hw if free is None else Hw[free][:, free]
    res = constrained_eigenmodes(
        sub,
        masses if free is None else masses[free],
        Y if free is None else Y[free],
        m,
        coords=coords if free is None else coords[free],
        backend=backend,
    )
    W, lam, used = scatter(res.vectors, free, mesh.n), res.eigenvalues, None
    if extra_weights is not None and np.shape(extra_weights)[1]:
        extra = np.asarray(extra_weights, dtype=np.float64)
        groups = np.arange(extra.shape[1]) if extra_groups is None else np.asarray(extra_groups)
        used = missed_chains(modal_reach(W, masses, extra), groups)
        if used.any():
            W, lam = augment_weights(W, lam, extra[:, used], Hw, masses, Y)
    return SkinningModes(
        weights=W,
        eigenvalues=lam,
        constraint_rank=Y.shape[1],
        seconds=time.perf_counter() - start,
        backend=res.backend,
        extra_used=used,
    )


def free_vertices(n: int, held: np.ndarray | None) -> np.ndarray | None:
    """Sorted indices (f,) of the n vertices not in ``held``, or None when nothing is held."""
    if held is None or not len(held):
        return None
    keep = np.ones(n, dtype=bool)
    keep[np.asarray(held, dtype=np.int64)] = False
    return np.flatnonzero(keep)


def scatter(V: np.ndarray, free: np.ndarray | None, n: int) -> np.ndarray:
    """(n, k) with the rows of V (f, k) at ``free`` and zeros elsewhere (V itself when free is None)."""
    if free is None:
        return V
    out = np.zeros((n, V.shape[1]))
    out[free] = V
    return out


def weight_space_basis(
    X: np.ndarray,
    rig: Rig | None,
    masses: np.ndarray,
    leak: np.ndarray | None,
    extra_rows: sp.spmatrix | None = None,
    free: np.ndarray | None = None,
) -> np.ndarray:
    """Y (n, c): an M-orthonormal basis of the directions the weights must be M-orthogonal to (J_w W = 0
    and the extra rows), zero on vertices outside ``free`` (held ones, where every weight is 0 anyway).

    X: (n, 3) rest positions; leak: (n,) d (None: 1); extra_rows: (k, n) more rows (contact);
    free: (f,) indices of the vertices kept (None: all).
    """
    n = len(X)
    rows = None
    if rig is not None:
        d = np.ones(n) if leak is None else leak
        rows = weight_space_constraint(X, rig, masses, d)
    if extra_rows is not None and extra_rows.shape[0]:
        rows = extra_rows if rows is None else sp.vstack([rows, extra_rows]).tocsr()
    if rows is None:
        return np.zeros((n, 0))
    if free is None:
        return constraint_basis(rows, masses)
    return scatter(constraint_basis(sp.csr_matrix(rows)[:, free], masses[free]), free, n)


def modal_reach(W: np.ndarray, masses: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """(k,) how much the modes W (n, m) move the flesh of each weight in extra (n, k).

    The modes' squared amplitude sum_i W_vi^2, averaged with the weight's mass m_v w_v^2, over
    its body average m / sum(m) (W is M-orthonormal): 1 for flesh the modes move like the rest
    of the body, 0 for flesh no mode reaches.  Scale-free and rotation-invariant.
    """
    M = np.asarray(masses, dtype=np.float64)
    amp = np.sum(W * W, axis=1)
    mw = M[:, None] * extra**2
    return (amp @ mw) / np.maximum(mw.sum(axis=0), 1e-300) * M.sum() / W.shape[1]


def missed_chains(reach: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(k,) bool: the columns of chains (groups (k,) ids) whose every bone's reach (k,) is below MISSED_REACH.

    A chain, not a bone: the bones at an appendage's base are held by the body's constraint in
    every character (reach 0.002-0.05) even when the modes swing its tip.
    """
    best = np.zeros(int(groups.max()) + 1 if len(groups) else 0)
    np.maximum.at(best, groups, reach)
    return best[groups] < MISSED_REACH


def augment_weights(
    W: np.ndarray, eigenvalues: np.ndarray, extra: np.ndarray, Hw: sp.spmatrix, masses: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Modes W (n, m) with eigenvalues (m,) and extra weights (n, k) -> (n, m + j) weights and eigenvalues.

    Why: an appendage a few tets long (the stag's tail: 1.5 tet edges, 12 tets) holds too little
    mass for any of the m lowest eigenmodes to reach it, so it cannot move at all.  Its bone's
    own weight, with its 12 affine dofs, is exactly the swing a bone-jiggle spring gives it; here
    it is simulated by the same elastic energy as the rest.  Each extra column is M-projected off
    the constraint's forbidden directions Y (n, c) (so J_w W = 0 still holds) and off the modes,
    columns that keep less than :data:`AUGMENT_FLOOR` of their M-norm (the modes hold them
    already) are dropped, and a Rayleigh-Ritz step on Hw (n, n) over the rest gives j <= k new
    M-orthonormal weights.  The modes are exact eigenvectors, so W^T Hw E = 0 for the new E:
    the first m weights and the slowest frequency (the wobble calibration) are unchanged.
    The result is sorted by eigenvalue.
    """
    M = np.asarray(masses, dtype=np.float64)
    E = extra[:, (M @ extra**2) > 0]
    norm0 = np.sqrt(M @ E**2)
    for _ in range(2):  # twice: one Gram-Schmidt pass leaves O(eps * cond) of the removed directions
        if Y.shape[1]:
            E = E - Y @ (Y.T @ (M[:, None] * E))
        E = E - W @ (W.T @ (M[:, None] * E))
    E = E[:, np.sqrt(M @ E**2) >= AUGMENT_FLOOR * norm0]
    if not E.shape[1]:
        return W, eigenvalues
    # Ritz on span(E): an M-orthonormal basis (rank-revealing through the Gram matrix), then Hw.
    G = E.T @ (M[:, None] * E)
    g, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = g > 1e-10 * g.max()
    B, mu = ritz(E @ (V[:, keep] / np.sqrt(g[keep])), Hw, M)
    lam = np.concatenate([eigenvalues, mu])
    order = np.argsort(lam, kind="stable")
    return np.concatenate([W, B], axis=1)[:, order], lam[order]


def ritz(W: np.ndarray, Hw: sp.spmatrix, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rayleigh-Ritz on span(W): M-orthonormal W (n, k), Hw (n, n) -> Ritz vectors (n, k), values (k,) ascending.

    The span, hence the constraint J_w W = 0, is unchanged; signs are canonical (rotation-invariant).
    """
    S = W.T @ (Hw @ W)
    lam, Q = np.linalg.eigh(0.5 * (S + S.T))
    return canonical_signs(W @ Q, np.asarray(masses, dtype=np.float64)), np.maximum(lam, 0.0)
