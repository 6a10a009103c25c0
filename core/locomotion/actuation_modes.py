"""Actuation modes: the lowest non-rigid vibration modes of the rest shape (seed 002, eqs. 4-5).

The modes solve H D = M D Lambda for the co-rotational rest Hessian H (3n x 3n),
with the six rigid motions removed exactly by the constrained eigensolver (they
are H's null space; an actuation along them would be a rigid motion, not a
shape).  Each mode is rescaled so its largest vertex displacement is the
character's RMS radius: an actuation amplitude of 0.1 then means "a tenth of the
body's size" on any mesh, at any modelling scale.

Displacements are returned as (n, 3, m) arrays (vertex, coordinate, mode), not
interleaved vectors, because the covariance tensors consume them per vertex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..linalg.eigensolve import constrained_eigenmodes
from ..model.constraint import normalization
from ..model.fem import corotational_rest_hessian
from ..model.materials import Material


@dataclass(frozen=True)
class ActuationModes:
    """displacements: (n, 3, m), largest vertex norm = radius per mode; eigenvalues: (m,) ascending (1/s^2)."""

    displacements: np.ndarray
    eigenvalues: np.ndarray
    radius: float


def rigid_displacements(X: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """The six rigid velocity fields of X, M-orthonormal in interleaved layout: (3n, 6).

    X: (n, 3) positions; masses: (n,) vertex masses.  Three translations and
    three infinitesimal rotations about the centre of mass.
    """
    n = len(X)
    c = (masses @ X) / masses.sum()
    P = X - c
    R = np.zeros((n, 3, 6))
    R[:, :, :3] = np.eye(3)
    for k in range(3):  # omega_k x p for the three axes (three columns, not a loop over vertices)
        R[:, :, 3 + k] = np.cross(np.eye(3)[k], P)
    flat = R.reshape(3 * n, 6)
    m3 = np.repeat(masses, 3)
    # Gram-Schmidt in the M inner product via a Cholesky of the 6x6 Gram matrix.
    L = np.linalg.cholesky(flat.T @ (m3[:, None] * flat))
    return np.linalg.solve(L, flat.T).T


def vibration_modes(mesh: TetMesh, material: Material, masses: np.ndarray, m: int) -> ActuationModes:
    """The m lowest non-rigid vibration modes of the rest shape.

    mesh: n vertices, t tets; material: per-tet Lame fields; masses: (n,) lumped.
    Returns displacements (n, 3, m) scaled to the RMS radius and eigenvalues (m,)
    of the M-orthonormal modes (the scaling does not change them).
    """
    H = corotational_rest_hessian(mesh, material.mu, material.lam)
    m3 = np.repeat(masses, 3)
    rigid = rigid_displacements(mesh.X, masses)
    coords = np.repeat(mesh.X, 3, axis=0)  # one position per interleaved unknown, for the ordering
    res = constrained_eigenmodes(H, m3, rigid, m, coords=coords)
    D = res.vectors.reshape(mesh.n, 3, m)
    _, radius = normalization(mesh.X)
    D = D * (radius / np.linalg.norm(D, axis=1).max(axis=0))[None, None, :]
    return ActuationModes(displacements=D, eigenvalues=res.eigenvalues, radius=radius)
