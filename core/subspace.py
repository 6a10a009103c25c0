"""Skinning eigenmodes (seed 000 §4) and the displacement-mode baseline (eq. 11).

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

from .constraint import complementarity_matrix, constraint_basis, weight_space_constraint
from .eigensolve import constrained_eigenmodes
from .fem import corotational_rest_hessian, corotational_weight_space_hessian
from .materials import Material
from .rig import Rig
from .tetmesh import TetMesh


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
) -> SkinningModes:
    """Solve eq. 22 for m material-aware, rig-complementary skinning weights.

    masses: (n,) lumped vertex masses (M_w); leak: (n,) momentum-leak field d.
    ``rig=None`` gives the unconstrained modes (the first is constant).
    """
    start = time.perf_counter()
    Hw = corotational_weight_space_hessian(mesh, material.mu, material.lam)
    if rig is None:
        Y = np.zeros((mesh.n, 0))
    else:
        d = np.ones(mesh.n) if leak is None else leak
        Y = constraint_basis(weight_space_constraint(mesh.X, rig, masses, d), masses)
    res = constrained_eigenmodes(Hw, masses, Y, m, coords=mesh.X, backend=backend)
    return SkinningModes(
        weights=res.vectors,
        eigenvalues=res.eigenvalues,
        constraint_rank=Y.shape[1],
        seconds=time.perf_counter() - start,
        backend=res.backend,
    )


@dataclass(frozen=True)
class DisplacementModes:
    """vectors U: (3n, k) interleaved, M-orthonormal with Jc^T U = 0; eigenvalues: (k,)."""

    vectors: np.ndarray
    eigenvalues: np.ndarray
    seconds: float


def displacement_modes(
    mesh: TetMesh,
    material: Material,
    masses: np.ndarray,
    rig: Rig | None,
    leak: np.ndarray | None,
    k: int,
    backend: str = "superlu",
) -> DisplacementModes:
    """The classical baseline (eq. 11) under the same complementarity constraint.

    Eigenvectors of the full 3n x 3n rest Hessian; the constraint is
    ``Jc^T u = 0`` with ``Jc = D M J``.
    """
    start = time.perf_counter()
    H = corotational_rest_hessian(mesh, material.mu, material.lam)
    mass3 = np.repeat(masses, 3)
    if rig is None:
        Y = np.zeros((3 * mesh.n, 0))
    else:
        d = np.ones(mesh.n) if leak is None else leak
        Jc = complementarity_matrix(rig.jacobian(mesh.X), masses, d)
        Y = constraint_basis(sp.csr_matrix(Jc.T), mass3)
    coords = np.repeat(mesh.X, 3, axis=0)
    res = constrained_eigenmodes(H, mass3, Y, k, coords=coords, backend=backend)
    return DisplacementModes(vectors=res.vectors, eigenvalues=res.eigenvalues, seconds=time.perf_counter() - start)
