"""The displacement-mode baseline (Benchekroun et al. 2023, eq. 11), for validation only.

Classical vibration modes of the full 3n x 3n rest Hessian under the same
rig-complementarity constraint.  The benchmark's Table 1 and the tests compare
skinning eigenmodes against them; the extension never ships this module.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..geometry.tetmesh import TetMesh
from ..linalg.eigensolve import constrained_eigenmodes
from ..model.constraint import complementarity_matrix, constraint_basis
from ..model.fem import corotational_rest_hessian
from ..model.materials import Material
from ..model.rig import Rig


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
