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
from ..model.constraint import constraint_basis, weight_space_constraint
from ..model.fem import corotational_weight_space_hessian
from ..model.materials import Material
from ..model.rig import Rig
from .eigensolve import constrained_eigenmodes


@dataclass(frozen=True)
class SkinningModes:
    """weights W: (n, m) M_w-orthonormal with J_w W = 0; eigenvalues: (m,) ascending."""

    weights: np.ndarray
    eigenvalues: np.ndarray
    constraint_rank: int
    seconds: float
    backend: str


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
) -> SkinningModes:
    """Solve eq. 22 for m material-aware, rig-complementary skinning weights.

    masses: (n,) lumped vertex masses (M_w); leak: (n,) momentum-leak field d.
    ``rig=None`` gives the unconstrained modes (the first is constant).
    shape: another tet mesh of the same tets (a posed shape) whose Hessian replaces
    ``mesh``'s; extra_rows (k x n): more weight-space constraint rows, stacked under the
    complementarity rows (contact, ``core.posespace.contact``).  Both are pose-space options.
    """
    start = time.perf_counter()
    Hw = corotational_weight_space_hessian(mesh if shape is None else shape, material.mu, material.lam)
    rows = None
    if rig is not None:
        d = np.ones(mesh.n) if leak is None else leak
        rows = weight_space_constraint(mesh.X, rig, masses, d)
    if extra_rows is not None and extra_rows.shape[0]:
        rows = extra_rows if rows is None else sp.vstack([rows, extra_rows]).tocsr()
    Y = np.zeros((mesh.n, 0)) if rows is None else constraint_basis(rows, masses)
    res = constrained_eigenmodes(Hw, masses, Y, m, coords=(mesh if shape is None else shape).X, backend=backend)
    return SkinningModes(
        weights=res.vectors,
        eigenvalues=res.eigenvalues,
        constraint_rank=Y.shape[1],
        seconds=time.perf_counter() - start,
        backend=res.backend,
    )
