"""The simulation subspace: unconstrained skinning eigenmodes (seed 002, App. A).

Locomotion needs the whole body to translate, turn and shear, so the weights W
(n x s) solve the skinning eigenproblem *without* the rig-complementarity
constraint (``skinning_eigenmodes(..., rig=None)``: the first weight is
constant).  This basis is kept apart from the rig-complementary one the jiggle
uses: the two answer different questions and must never share a cache entry.

As in ``core.subspace.reduced``, B = I_3 (x) Y is never formed: positions are
``x = Y Z`` with the scalar skinning basis Y = W (.) [Xn | 1] (n x q, q = 4s)
and Z (q x 3) the affine matrices of the s modes.  The constant weight makes
every affine map, and so the rest shape X itself, exactly representable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..model.constraint import normalization
from ..model.materials import Material
from ..model.rig import lbs_basis
from ..subspace.skinning_modes import skinning_eigenmodes


@dataclass(frozen=True)
class SimulationSubspace:
    """weights W (n, s); basis Y (n, q = 4s); rest Z0 (q, 3) with Y Z0 = X; eigenvalues (s,)."""

    weights: np.ndarray
    basis: np.ndarray
    rest: np.ndarray
    eigenvalues: np.ndarray


def rest_coordinates(Y: np.ndarray, masses: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Z0 (q, 3) minimising ||Y Z0 - X||_M: exact (to round-off) when Y spans the affine maps.

    Y: (n, q) scalar basis; masses: (n,); X: (n, 3).
    """
    A = Y.T @ (masses[:, None] * Y)
    return np.linalg.solve(A, Y.T @ (masses[:, None] * X))


def simulation_subspace(mesh: TetMesh, material: Material, masses: np.ndarray, s: int) -> SimulationSubspace:
    """s unconstrained skinning eigenmodes and their scalar LBS basis on the normalised rest shape.

    mesh: n vertices; masses: (n,) lumped.  Normalising X (centre, RMS radius)
    keeps Y's columns commensurate at any modelling scale.
    """
    modes = skinning_eigenmodes(mesh, material, masses, rig=None, leak=None, m=s)
    centre, scale = normalization(mesh.X)
    Y = lbs_basis(modes.weights, (mesh.X - centre) / scale)
    return SimulationSubspace(
        weights=modes.weights,
        basis=Y,
        rest=rest_coordinates(Y, masses, mesh.X),
        eigenvalues=modes.eigenvalues,
    )
