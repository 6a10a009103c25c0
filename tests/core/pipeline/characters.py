"""The two-sphere character the pipeline's tests share: a body and a head on a chain of three bones."""

import numpy as np

from core.model.rig import rig_parameters
from core.pipeline import CharacterInput, MaterialSettings, SubspaceSettings, prepare_character
from core.validation.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")
# The bones' rest segments (the physics skin pins around them).
HEADS = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [1.1, 0.0, 0.0]])
TAILS = np.array([[0.5, 0.0, 0.0], [1.1, 0.0, 0.0], [1.5, 0.0, 0.0]])


def two_spheres(segments: bool = False) -> CharacterInput:
    """Two joined spheres weighted to a chain of three bones along x; with their segments if asked."""
    V, F = join(uv_sphere(20, 0.5, (0, 0, 0)), uv_sphere(20, 0.4, (0.7, 0, 0)))
    W = chain_weights(V, np.array([-0.5, 0.5, 1.1]))
    if segments:
        return CharacterInput(rest=V, faces=F, bone_weights=W, bone_heads=HEADS, bone_tails=TAILS)
    return CharacterInput(rest=V, faces=F, bone_weights=W)


def prepare(character: CharacterInput, cache_dir):
    """The character prepared as every pipeline test prepares it (soft: 5 kPa)."""
    return prepare_character(character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=cache_dir)


def swing(t):
    """Three bones: the last two swing about z; rig parameters (36,)."""
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    a = 0.6 * np.sin(t / 4.0)
    c, s = np.cos(a), np.sin(a)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    for b in (1, 2):
        A[b, :, :3] = R
    return rig_parameters(A)


def _carried(velocity, swing_too=False):
    """The swing (or the rest pose) carried along at a constant velocity (m per frame)."""

    def rig(f):
        p = swing(f) if swing_too else rig_parameters(np.tile(np.eye(4)[:3], (3, 1, 1)))
        A = p.reshape(3, 3, 4).copy()
        A[:, :, 3] += np.asarray(velocity) * f
        return A.ravel()

    return rig


def _teleport(f):
    """The swing, with the whole rig jumping 3 m (about 2.5 sizes) at frame 10."""
    A = swing(f).reshape(3, 3, 4).copy()
    if f >= 10:
        A[:, 0, 3] += 3.0
    return A.ravel()


def _held(p, jerk):
    """The pose p held (same rotations) while the whole rig jerks sideways from frame 5."""

    def rig(f):
        A = p.reshape(-1, 3, 4).copy()
        if f >= 5:
            A[:, 1, 3] += jerk
        return A.ravel()

    return rig
