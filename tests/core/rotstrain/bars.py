"""Small bars shared by the rotation-strain tests (built once per session: eigenmodes cost)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from core.geometry.primitives import bar_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.fem import lumped_mass
from core.model.materials import Material
from core.rotstrain.basis import ReducedFit, extended_basis, linear_modes
from core.rotstrain.coordinates import rs_vectors
from core.rotstrain.poisson import PoissonReconstruction


@dataclass(frozen=True)
class Bar:
    mesh: TetMesh
    material: Material
    masses: np.ndarray
    fixed: np.ndarray | None
    U: np.ndarray
    W: np.ndarray
    S: np.ndarray
    poisson: PoissonReconstruction
    fit: ReducedFit


def make_bar(
    modes: int,
    fixed: bool,
    X: np.ndarray | None = None,
    U: np.ndarray | None = None,
    youngs_modulus: float = 1e5,
    density: float = 1000.0,
) -> Bar:
    """A 2 m x 0.5 m bar (81 vertices, 192 tets), E = 1e5 Pa, nu = 0.3, rho = 1000; clamped at x = 0 if ``fixed``.

    X, U: rest positions and modes to use instead (the rotated problem of the equivariance tests).
    """
    X0, T = bar_tet_mesh(2.0, 0.5, 4)
    mesh = TetMesh.from_arrays(X0 if X is None else X, T)
    material = Material.uniform(mesh.t, youngs_modulus, 0.3, density)
    masses = lumped_mass(mesh, material.density)
    clamp = np.flatnonzero(X0[:, 0] < 1e-9) if fixed else None
    if U is None:
        U, _ = linear_modes(mesh, material, masses, modes, clamp)
    W, S = rs_vectors(mesh, U)
    poisson = PoissonReconstruction(mesh, clamp, masses)
    B = extended_basis(poisson, W, S, masses, free=not fixed)
    return Bar(mesh, material, masses, clamp, U, W, S, poisson, ReducedFit.build(mesh, B))


@cache
def bar(modes: int = 3, fixed: bool = True) -> Bar:
    return make_bar(modes, fixed)
