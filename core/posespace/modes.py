"""Skinning eigenmodes for a training pose (Xu & Barbič, §5: a reduced model per pose).

The seed treats each pose's rig-deformed shape as a rest shape of its own and takes
that shape's low-energy modes.  This product's solver does not: its elastic energy
is measured from the rest shape, and its ARAP Hessian (the weight-space Hessian of
eq. 22) does not depend on the pose.  The rest modes therefore stay the energy's
eigenmodes on every pose, and measurement agrees (``core/validation/bent_limb.py``,
bench section 8): modes of the posed shape's Hessian (``hessian="pose"``, the seed's
reading) are no closer to the full-space reference on a limb bent 90-120° (mean error
0.187 against the rest modes' 0.176), and they cannot be computed at all where
linear blend skinning collapses tets, which is where skin meets skin.  What does
change with the pose is the constraint: skin-on-skin contact (:mod:`contact`) holds
the contact vertices still.  So by default a pose's modes are the rest eigenproblem
under the rest complementarity constraint plus that pose's stick rows.

Mass and complementarity constraint are pose-independent (the seed keeps M
constant, §5.2; an LBS rig's Jacobian is linear in the rig parameters).  The
common constraint is what lets blends of the per-pose bases keep complementarity
exactly: J_w (Σ_i w_i W_i) Υ = 0 whenever every J_w W_i = 0.
"""

from __future__ import annotations

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..model.constraint import stick_rows
from ..model.materials import Material
from ..model.rig import Rig
from ..subspace.skinning_modes import SkinningModes, skinning_eigenmodes


def posed_skinning_modes(
    mesh: TetMesh,
    posed: np.ndarray | None,
    material: Material,
    masses: np.ndarray,
    rig: Rig,
    leak: np.ndarray | None,
    m: int,
    backend: str = "superlu",
    stick: np.ndarray | None = None,
) -> SkinningModes:
    """m skinning eigenmodes (n, m) for a pose, complementary to ``rig`` at rest.

    mesh: the rest tet mesh (n vertices); posed (n, 3): the pose's shape, whose Hessian
    replaces the rest one (the seed's reading, see the module doc), or None for the rest
    Hessian; masses (n,) lumped masses; leak (n,) the momentum-leak field (None: 1);
    stick: vertex indices that must not move in this pose (skin-on-skin contact,
    :mod:`contact`): every weight vanishes there.  Raises :class:`core.errors.MeshError`
    when ``posed`` inverts tets (a collapsed shape has no elastic energy to take modes of).
    """
    shape = None if posed is None else TetMesh.from_arrays(np.asarray(posed, dtype=np.float64), mesh.T)
    rows = None if stick is None or len(stick) == 0 else stick_rows(stick, masses)
    return skinning_eigenmodes(mesh, material, masses, rig, leak, m, backend, shape=shape, extra_rows=rows)
