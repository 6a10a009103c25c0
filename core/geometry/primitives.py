"""Deterministic tet meshes of simple solids, for tests, benchmarks and the lattice fallback."""

from __future__ import annotations

import itertools

import numpy as np


def _freudenthal_cube() -> np.ndarray:
    """The six positively oriented tets of the unit cube's Freudenthal split.

    Returns (6, 4) indices into the cube corners numbered ``dx + 2 dy + 4 dz``.
    Every tet runs from corner 0 to corner 7 along the cube diagonal, so
    neighbouring cubes split their shared faces identically (conforming).
    """
    tets = []
    for perm in itertools.permutations(range(3)):
        corner = np.zeros(3, dtype=int)
        path = [0]
        for axis in perm:
            corner[axis] = 1
            path.append(int(corner[0] + 2 * corner[1] + 4 * corner[2]))
        pts = np.array([[c & 1, (c >> 1) & 1, (c >> 2) & 1] for c in path], dtype=float)
        if np.linalg.det(pts[1:] - pts[0]) < 0:
            path[1], path[2] = path[2], path[1]
        tets.append(path)
    return np.array(tets)


CUBE_TETS = _freudenthal_cube()


def box_tet_mesh(
    cells: tuple[int, int, int],
    size: tuple[float, float, float] = (1.0, 1.0, 1.0),
    origin: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> tuple[np.ndarray, np.ndarray]:
    """A box of nx*ny*nz cubes, 6 tets each.

    Returns X: ((nx+1)(ny+1)(nz+1), 3) and T: (6 nx ny nz, 4), positively oriented.
    """
    nx, ny, nz = (int(c) for c in cells)
    if min(nx, ny, nz) < 1:
        raise ValueError(f"a box needs at least one cell per axis, got {cells}")
    axes = [np.linspace(o, o + s, c + 1) for o, s, c in zip(origin, size, (nx, ny, nz))]
    gx, gy, gz = np.meshgrid(*axes, indexing="ij")
    X = np.c_[gx.ravel(), gy.ravel(), gz.ravel()]

    def vid(i: np.ndarray, j: np.ndarray, k: np.ndarray) -> np.ndarray:
        return (i * (ny + 1) + j) * (nz + 1) + k

    ci, cj, ck = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    corners = np.stack([vid(ci + (c & 1), cj + ((c >> 1) & 1), ck + ((c >> 2) & 1)) for c in range(8)], axis=1)
    T = corners[:, CUBE_TETS].reshape(-1, 4)
    return X, T


def bar_tet_mesh(length: float = 4.0, width: float = 1.0, cells_per_unit: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A bar along x of the given length and square cross-section, centred at the origin in y and z."""
    nx = max(1, round(length * cells_per_unit))
    nw = max(1, round(width * cells_per_unit))
    return box_tet_mesh((nx, nw, nw), (length, width, width), (0.0, -width / 2, -width / 2))
