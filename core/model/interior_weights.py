"""Bone weights inside the volume, from weights painted on the surface.

The tet mesh's boundary vertices take the painted weights of their closest
point on the render surface (barycentric interpolation of the triangle's
three painted vertices); the interior is the harmonic extension (Laplace's
equation with those Dirichlet values, cotangent Laplacian), as the authors'
code does.  Harmonic extension preserves partition of unity exactly; the
cotangent Laplacian is not an M-matrix on every tet mesh, so tiny negative
values can appear: they are clamped to zero and rows renormalised, which
keeps both partition of unity and non-negativity.
"""

from __future__ import annotations

import numpy as np

from ..geometry.surface import closest_surface_points
from ..geometry.tetmesh import TetMesh, boundary_faces
from ..linalg.spd import factorize_spd
from .fem import scalar_laplacian
from .rig import normalize_weights


def transfer_to_points(V: np.ndarray, F: np.ndarray, W: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Painted per-vertex values W (k, b) of surface (V, F) at points P (p, 3), via their closest surface points."""
    _, face, bary = closest_surface_points(V, F, P)
    return np.einsum("pj,pjb->pb", bary, W[F[face]])


def harmonic_extension(mesh: TetMesh, fixed: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Solve L u = 0 inside with u = values (f, b) at vertices ``fixed`` (f,): (n, b)."""
    n = mesh.n
    free = np.setdiff1d(np.arange(n), fixed)
    out = np.zeros((n, values.shape[1]))
    out[fixed] = values
    if len(free):
        L = scalar_laplacian(mesh).tocsr()
        Lff = L[free][:, free]
        rhs = -(L[free][:, fixed] @ values)
        out[free] = factorize_spd(Lff, mesh.X[free]).solve(rhs)
    return out


def volume_bone_weights(
    X: np.ndarray, T: np.ndarray, V_surf: np.ndarray, F_surf: np.ndarray, W_surf: np.ndarray
) -> np.ndarray:
    """Bone weights (n, b) for tet vertices X (n, 3) from painted surface weights W_surf (k, b).

    Rows sum to one and are non-negative; on the tet boundary they equal the
    painted weights at the closest surface point.  Unskinned rows, painted or
    extended (see :func:`normalize_weights`), are zero.
    """
    mesh = TetMesh.from_arrays(X, T)
    W_surf = normalize_weights(W_surf)
    bnd = np.unique(boundary_faces(mesh.T))
    Wb = transfer_to_points(
        np.asarray(V_surf, dtype=np.float64), np.asarray(F_surf, dtype=np.int64), W_surf, mesh.X[bnd]
    )
    W = harmonic_extension(mesh, bnd, Wb)
    return normalize_weights(np.clip(W, 0.0, None))
