"""The built-in tetrahedraliser: a lattice of the region inside the surface.

It never fails on any input: open, non-manifold, self-intersecting and
multi-part surfaces all have winding numbers.  The bounding box is filled
with Freudenthal cubes (six positive tets each, conforming); a tet is kept
when |w| > 0.5 at its centroid; then boundary vertices are pulled onto the
surface (closest point) as far as every incident tet stays well shaped, which
brings the enclosed volume within a percent or two at ordinary resolutions.
Pure numpy/scipy.
"""

from __future__ import annotations

import numpy as np

from .errors import MeshError
from .primitives import box_tet_mesh
from .surface import closest_surface_points
from .tetmesh import boundary_faces, signed_volumes
from .winding import winding_numbers

# A snapped tet must keep at least this fraction of its lattice volume; the
# Freudenthal tets start with every dihedral angle >= 45 degrees.
MIN_VOLUME_FRACTION = 0.25
SNAP_ROUNDS = 8
# About 1 GB of lattice tets and winding-number queries.
MAX_CELLS = 3_000_000


def lattice_cells(lo: np.ndarray, hi: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
    """Lattice origin (3,), size (3,) and cell counts covering [lo, hi] padded by one cell."""
    origin = lo - cell
    dims = np.maximum(1, np.ceil((hi + cell - origin) / cell).astype(np.int64))
    return origin, dims * cell, (int(dims[0]), int(dims[1]), int(dims[2]))


def lattice_tet_mesh(V: np.ndarray, F: np.ndarray, cell: float, snap: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Tets (X (n, 3), T (t, 4)) filling the inside of surface (V, F) at lattice spacing ``cell``."""
    origin, size, dims = lattice_cells(V.min(axis=0), V.max(axis=0), cell)
    if float(np.prod(dims)) > MAX_CELLS:
        raise MeshError(f"a lattice of {np.prod(dims):.3g} cells would not fit in memory; lower the tet resolution")
    X, T = box_tet_mesh(dims, tuple(size), tuple(origin))
    inside = classify_tets(X, T, V, F, cell)
    if not inside.any():
        raise MeshError("no volume found inside the surface at this resolution; raise the tet resolution")
    T = T[inside]
    used = np.unique(T)
    remap = np.full(len(X), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    X, T = X[used], remap[T]
    if snap:
        X = snap_to_surface(X, T, V, F)
    return X, T


def classify_tets(X: np.ndarray, T: np.ndarray, V: np.ndarray, F: np.ndarray, cell: float) -> np.ndarray:
    """(t,) True where |w| > 0.5 at the tet centroid.

    Tets come six per cube (box_tet_mesh order).  Cubes whose centre is more
    than a cell from every surface sample cannot be cut by the surface, so
    their six tets share the centre's winding number; only near-surface cubes
    are evaluated per tet, about five times fewer queries.
    """
    from scipy.spatial import cKDTree

    cent = X[T].mean(axis=1)
    cubes = cent.reshape(-1, 6, 3).mean(axis=1)
    samples = np.vstack([V, V[F].mean(axis=1)])
    # Edge midpoints too, so long triangles are sampled densely enough.
    samples = np.vstack(
        [samples, 0.5 * (V[F[:, 0]] + V[F[:, 1]]), 0.5 * (V[F[:, 1]] + V[F[:, 2]]), 0.5 * (V[F[:, 2]] + V[F[:, 0]])]
    )
    max_edge = float(np.linalg.norm(V[F[:, 0]] - V[F[:, 1]], axis=1).max())
    dist, _ = cKDTree(samples).query(cubes)
    near = dist < cell + 0.5 * max_edge
    inside = np.repeat(np.abs(winding_numbers(V, F, cubes[~near])) > 0.5, 6)
    out = np.empty(len(T), dtype=bool)
    mask = np.repeat(near, 6)
    out[~mask] = inside
    out[mask] = np.abs(winding_numbers(V, F, cent[mask])) > 0.5
    return out


def snap_to_surface(X: np.ndarray, T: np.ndarray, V: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Move boundary vertices of tet mesh (X, T) toward their closest surface points.

    Each round moves every boundary vertex by its remaining allowance; tets
    that would shrink below MIN_VOLUME_FRACTION of their lattice volume (or
    invert) have their vertices' moves halved, until no tet is bad.
    """
    bnd = np.unique(boundary_faces(T))
    target, _, _ = closest_surface_points(V, F, X[bnd])
    step = np.ones(len(bnd))
    vol0 = signed_volumes(X, T)
    pos_in_bnd = np.full(len(X), -1, dtype=np.int64)
    pos_in_bnd[bnd] = np.arange(len(bnd))
    for round_ in range(SNAP_ROUNDS + 8):
        Y = X.copy()
        Y[bnd] = X[bnd] + step[:, None] * (target - X[bnd])
        bad = signed_volumes(Y, T) < MIN_VOLUME_FRACTION * vol0
        if not bad.any():
            return Y
        verts = pos_in_bnd[T[bad].ravel()]
        verts = verts[verts >= 0]
        # Halve first; the last stubborn vertices keep their lattice position.
        step[verts] = 0.5 * step[verts] if round_ < SNAP_ROUNDS else 0.0
    return X
