"""The momentum-leak field d in [0, 1] (Benchekroun et al. 2023, §8.1; Zhang et al. 2020).

The complementarity constraint is weighted per vertex by ``d``: where d = 1
the secondary motion carries no rig momentum (it moves with the rig), where
d = 0 momentum may leak from the rig into the flesh.  The default leaks at
the surface and holds the core: a short heat diffusion from the boundary into
the interior, renormalised to [0, 1], gives d = 0 on the skin rising to 1 a
few tets deep.  That is what produces follow-through and overlap.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import MeshError
from ..geometry.tetmesh import TetMesh
from .fem import lumped_mass, scalar_laplacian


def diffuse_from_boundary(mesh: TetMesh, time: float | None = None) -> np.ndarray:
    """phi (n,): one implicit heat step from phi = 1 on the boundary, phi free inside.

    Solves (M + time L) phi = 0 on interior vertices with phi = 1 on boundary
    vertices.  ``time`` defaults to the squared mean edge length: the surface
    signal spreads about one tet ring per unit of diffusion length.  The
    system is SPD and dominated by M, so Jacobi-preconditioned CG converges
    in a few dozen iterations at any mesh size.
    """
    boundary = mesh.boundary_vertices()
    if time is None:
        edges = mesh.X[mesh.T[:, [0, 0, 0, 1, 1, 2]]] - mesh.X[mesh.T[:, [1, 2, 3, 2, 3, 3]]]
        time = float(np.mean(np.linalg.norm(edges, axis=2)) ** 2)
    Q = (sp.diags(lumped_mass(mesh, 1.0)) + time * scalar_laplacian(mesh)).tocsr()
    interior = np.setdiff1d(np.arange(mesh.n), boundary)
    phi = np.ones(mesh.n)
    if interior.size:
        Qii = Q[interior][:, interior]
        rhs = -(Q[interior][:, boundary] @ np.ones(boundary.size))
        pre = sp.diags(1.0 / Qii.diagonal())
        sol, info = spla.cg(Qii, rhs, rtol=1e-12, atol=0.0, M=pre, maxiter=10_000)
        if info != 0:  # pragma: no cover - SPD and well conditioned by construction
            sol = spla.spsolve(Qii.tocsc(), rhs)
        phi[interior] = sol
    return phi


def default_leak_field(mesh: TetMesh, time: float | None = None) -> np.ndarray:
    """d (n,) in [0, 1]: 0 on the surface (momentum leaks), rising to 1 inside."""
    phi = diffuse_from_boundary(mesh, time)
    lo, hi = phi.min(), phi.max()
    if hi - lo <= 1e-12:
        # Every vertex is on the surface (a one-tet-thick shell): leak everywhere.
        return np.zeros(mesh.n)
    return 1.0 - (phi - lo) / (hi - lo)


def validate_leak_field(d: np.ndarray, n: int) -> np.ndarray:
    """Check a user field (e.g. a painted vertex group): (n,) finite values in [0, 1]."""
    d = np.asarray(d, dtype=np.float64)
    if d.shape != (n,):
        raise MeshError(f"the momentum-leak field needs one value per vertex ({n}), got shape {d.shape}")
    if not np.isfinite(d).all():
        raise MeshError("the momentum-leak mask contains NaN values; repaint the vertex group")
    if (d < -1e-9).any() or (d > 1 + 1e-9).any():
        raise MeshError("the momentum-leak mask must lie in [0, 1]; clamp the vertex group weights")
    return np.clip(d, 0.0, 1.0)
