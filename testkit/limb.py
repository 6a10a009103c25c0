"""The twisted limb of the physics-skin benchmark and of the README's picture: a bar bound to two bones.

A 4 x 1 bar of (nx, nw, nw) cubes, 6 tets each, its square section mapped onto
the disk of radius 0.5, bound to two bones (heads (0, 0, 0) and (2, 0, 0)) by
hat weights that blend over x in [1, 3].  ``bench/physskin.py`` times and
measures it; ``tools/physskin_picture.py`` draws it.
"""

from __future__ import annotations

import numpy as np

from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.materials import Material
from core.physskin.rig import PhysicsRig
from core.settings import core_default
from core.validation.scenes import chain_weights

HEADS = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
TAILS = np.array([[2.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
JOINTS = np.array([1.0, 3.0])  # the bones' weight centres: the weights blend over x in [1, 3]
LENGTH = 4.0
YOUNGS = 1e4  # Pa; a static solve without forces does not depend on it
POISSON = 0.45


def cylinder_mesh(cells_along: int, cells_across: int, length: float = LENGTH) -> TetMesh:
    """A bar of length ``length`` along x, its square 1 x 1 section mapped onto the disk of radius 0.5."""
    X, T = box_tet_mesh((cells_along, cells_across, cells_across), (length, 1.0, 1.0), (0.0, -0.5, -0.5))
    u, v = 2.0 * X[:, 1], 2.0 * X[:, 2]
    X = X.copy()
    X[:, 1], X[:, 2] = 0.5 * u * np.sqrt(1 - v * v / 2), 0.5 * v * np.sqrt(1 - u * u / 2)
    return TetMesh.from_arrays(X, T)


def limb_pose(bend_deg: float, twist_deg: float) -> np.ndarray:
    """Bone transforms (2, 3, 4): bone 1 twisted about x, then bent about z, both through the joint."""
    b, t = np.radians(bend_deg), np.radians(twist_deg)
    bend = np.array([[np.cos(b), -np.sin(b), 0.0], [np.sin(b), np.cos(b), 0.0], [0.0, 0.0, 1.0]])
    twist = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(t), -np.sin(t)], [0.0, np.sin(t), np.cos(t)]])
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    A[1, :, :3] = bend @ twist
    A[1, :, 3] = HEADS[1] - A[1, :, :3] @ HEADS[1]
    return A


def build_rig(mesh: TetMesh, poisson: float) -> PhysicsRig:
    """The pipeline's physics skin of the limb: chain weights, the default Pin Depth."""
    mat = Material.uniform(mesh.t, YOUNGS, poisson, 1000.0)
    W = chain_weights(mesh.X, JOINTS)
    return PhysicsRig.build(mesh, W, HEADS, TAILS, mat.mu, mat.lam, float(core_default("pin_depth")))
