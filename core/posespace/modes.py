"""Skinning eigenmodes at a training pose (Xu & Barbič, §5: a reduced model per pose).

The seed treats each pose's rig-deformed shape as a rest shape of its own and
computes that shape's low-energy modes.  Here the same is done for skinning
eigenmodes (Benchekroun et al., eq. 22): the weight-space Hessian is assembled on
the posed tet positions, so a bent elbow's modes follow the bent geometry, while
the mass and the complementarity constraint stay those of the rest shape.  Both
are pose-independent in this product: the lumped masses because the seed keeps
M constant (§5.2), the constraint because an LBS rig's Jacobian is linear in the
rig parameters.  A common constraint is what lets blends of the per-pose bases
keep complementarity exactly: J_w (Σ_i w_i W_i) Υ = 0 whenever every J_w W_i = 0.
"""

from __future__ import annotations

import time

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..model.constraint import constraint_basis, weight_space_constraint
from ..model.fem import corotational_weight_space_hessian
from ..model.materials import Material
from ..model.rig import Rig
from ..subspace.eigensolve import constrained_eigenmodes
from ..subspace.skinning_modes import SkinningModes


def posed_skinning_modes(
    mesh: TetMesh,
    posed: np.ndarray,
    material: Material,
    masses: np.ndarray,
    rig: Rig,
    leak: np.ndarray | None,
    m: int,
    backend: str = "superlu",
) -> SkinningModes:
    """m skinning eigenmodes (n, m) of the shape ``posed`` (n, 3), complementary to ``rig`` at rest.

    mesh: the rest tet mesh (n vertices); masses (n,) its lumped masses; leak (n,) the
    momentum-leak field (None: 1).  Raises :class:`core.errors.MeshError` when the pose
    inverts tets (the posed shape has no elastic energy to take modes of).
    """
    start = time.perf_counter()
    shape = TetMesh.from_arrays(np.asarray(posed, dtype=np.float64), mesh.T)
    Hw = corotational_weight_space_hessian(shape, material.mu, material.lam)
    d = np.ones(mesh.n) if leak is None else leak
    Y = constraint_basis(weight_space_constraint(mesh.X, rig, masses, d), masses)
    res = constrained_eigenmodes(Hw, masses, Y, m, coords=shape.X, backend=backend)
    return SkinningModes(
        weights=res.vectors,
        eigenvalues=res.eigenvalues,
        constraint_rank=Y.shape[1],
        seconds=time.perf_counter() - start,
        backend=res.backend,
    )
