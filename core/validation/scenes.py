"""Deterministic synthetic characters and rig animations.

Used by the test suite, the benchmarks and the README demo, so every figure
is reproducible from a seed: bars with a bone chain, bending and swinging
motions, random heterogeneous materials.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry.primitives import bar_tet_mesh, box_tet_mesh
from ..geometry.tetmesh import TetMesh
from ..model.materials import Material
from ..model.rig import LBSRig, lbs_positions, rig_parameters


def chain_weights(X: np.ndarray, joints: np.ndarray, axis: int = 0) -> np.ndarray:
    """Smooth bone weights (n, b) for a chain of bones centred at ``joints`` along ``axis``.

    Hat functions in the axis coordinate, normalised: every vertex is
    influenced by its one or two nearest bones, like a painted chain.
    """
    c = X[:, axis : axis + 1]
    spacing = np.diff(joints).min() if len(joints) > 1 else 1.0
    W = np.maximum(0.0, 1.0 - np.abs(c - joints[None, :]) / spacing)
    W[W.sum(axis=1) == 0, np.argmin(np.abs(c - joints[None, :]), axis=1)[W.sum(axis=1) == 0]] = 1.0
    return W / W.sum(axis=1, keepdims=True)


def rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rotated_transforms(A: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Bone maps (b, 3, 4) of the same rig motion for the problem rotated by R (3, 3): rest X' = R X,
    so x' = R x and A' = R A R^T (as 4 x 4 maps)."""
    R4 = np.eye(4)
    R4[:3, :3] = R
    A4 = np.concatenate([A, np.tile([[[0.0, 0.0, 0.0, 1.0]]], (len(A), 1, 1))], axis=1)
    return (R4 @ A4 @ R4.T)[:, :3, :]


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random rotation matrix (3, 3)."""
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q *= np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] *= -1
    return q


@dataclass
class BarScene:
    """A bar along x with a chain of bones and a bending/swinging animation."""

    mesh: TetMesh
    rig: LBSRig
    joints: np.ndarray
    length: float

    def transforms(self, t: float, amplitude: float = 1.0, frequency: float = 1.0, spin: float = 0.0) -> np.ndarray:
        """Per-bone affine transforms (b, 3, 4) at time t.

        Each joint bends about z (angle ``amplitude / (bones - 1)`` at most),
        compounding along the chain; ``spin`` turns the whole chain about the
        y axis through its middle by up to that angle, a large rig rotation.
        """
        b = len(self.joints)
        A = np.tile(np.eye(4)[:3], (b, 1, 1))
        M = np.eye(4)
        if spin:
            turn = spin * np.sin(np.pi * frequency * t)
            c, s_ = np.cos(turn), np.sin(turn)
            Ry = np.array([[c, 0.0, s_], [0.0, 1.0, 0.0], [-s_, 0.0, c]])
            mid = np.array([0.5 * self.length, 0.0, 0.0])
            M[:3, :3] = Ry
            M[:3, 3] = mid - Ry @ mid
            A[0] = M[:3]
        for k in range(1, b):
            angle = amplitude / (b - 1) * np.sin(2 * np.pi * frequency * t)
            pivot = np.array([0.5 * (self.joints[k - 1] + self.joints[k]), 0.0, 0.0])
            step = np.eye(4)
            step[:3, :3] = rotation_z(angle)
            step[:3, 3] = pivot - rotation_z(angle) @ pivot
            M = M @ step
            A[k] = M[:3]
        return A

    def parameters(self, t: float, **kw: float) -> np.ndarray:
        return rig_parameters(self.transforms(t, **kw))

    def positions(self, t: float, **kw: float) -> np.ndarray:
        return lbs_positions(self.mesh.X, self.rig.weights, self.transforms(t, **kw))


def bar_scene(length: float = 4.0, width: float = 1.0, cells_per_unit: int = 3, bones: int = 3) -> BarScene:
    """A bar tet mesh (about (L c + 1)(W c + 1)^2 vertices) with a chain of ``bones`` bones."""
    X, T = bar_tet_mesh(length, width, cells_per_unit)
    mesh = TetMesh.from_arrays(X, T)
    joints = np.linspace(0.0, length, bones)
    return BarScene(mesh=mesh, rig=LBSRig.from_weights(chain_weights(X, joints)), joints=joints, length=length)


def grid_scene(vertices_per_axis: int, bones: int, size: float = 1.0) -> BarScene:
    """A cube of about ``vertices_per_axis^3`` vertices with a bone chain along x (benchmarks)."""
    c = vertices_per_axis - 1
    X, T = box_tet_mesh((c, c, c), (size, size, size), (0.0, -size / 2, -size / 2))
    mesh = TetMesh.from_arrays(X, T)
    joints = np.linspace(0.0, size, bones)
    return BarScene(mesh=mesh, rig=LBSRig.from_weights(chain_weights(X, joints)), joints=joints, length=size)


def random_material(t: int, seed: int = 0, arap: bool = False) -> Material:
    """Heterogeneous per-tet material: E in [5e3, 5e4] Pa, nu in [0.1, 0.45], rho in [900, 1200]."""
    rng = np.random.default_rng(seed)
    E = 10 ** rng.uniform(np.log10(5e3), np.log10(5e4), t)
    nu = np.zeros(t) if arap else rng.uniform(0.1, 0.45, t)
    return Material.from_fields(E, nu, rng.uniform(900, 1200, t))


def jitter(X: np.ndarray, amount: float, seed: int = 0) -> np.ndarray:
    """Randomly displaced vertex positions (n, 3), for meshes that are not regular grids."""
    return X + amount * np.random.default_rng(seed).uniform(-1.0, 1.0, X.shape)
