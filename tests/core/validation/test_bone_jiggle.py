"""The bone-jiggle reference (core/validation/bone_jiggle.py): the add-ons' spring-on-bone idea.

A tail of three jiggle bones on a root bone that does not jiggle, stacked along +Y and
connected, at 24 fps with Wiggle 2's defaults.  What must hold for it to be a fair
reference for complementary dynamics: no motion at rest, none from a rig at constant
velocity once the start's transient is gone, a swing that stops dies out, bone lengths
kept, and the whole problem rotated gives the result rotated.
"""

import numpy as np
import pytest

from core.validation.bone_jiggle import (
    JiggleSettings,
    bone_tails,
    jiggle_bones,
    lever_points,
    normalised,
    rest_levers,
    skin,
)

FPS = 24.0
LENGTHS = np.array([1.0, 0.8, 0.8, 0.8])
PARENTS = np.array([-1, 0, 1, 2])
JIGGLE = np.array([False, True, True, True])


def rest_chain(scale: float = 1.0) -> np.ndarray:
    """(b, 4, 4) bones stacked along +Y, each head on its parent's tail, under a uniform scale."""
    M = np.tile(np.eye(4), (4, 1, 1))
    M[:, 1, 3] = np.concatenate([[0.0], np.cumsum(LENGTHS[:-1])]) * scale
    M[:, :3, :3] *= scale
    return M


def rot_z(a: float) -> np.ndarray:
    R = np.eye(4)
    c, s = np.cos(a), np.sin(a)
    R[:2, :2] = [[c, -s], [s, c]]
    return R


def carried(roots: list[np.ndarray], rest: np.ndarray) -> np.ndarray:
    """(F, b, 4, 4): the rest chain carried rigidly by each frame's root transform (4, 4)."""
    return np.stack([root @ rest for root in roots])


def tip_offset(J: np.ndarray, A: np.ndarray) -> np.ndarray:
    """(F,) distance between the jiggled and the animated tip."""
    return np.linalg.norm(bone_tails(J, LENGTHS)[:, -1] - bone_tails(A, LENGTHS)[:, -1], axis=1)


def test_a_rig_at_rest_stays_at_rest():
    A = carried([np.eye(4)] * 40, rest_chain())
    J = jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS)
    assert np.abs(J - A).max() < 1e-12


def test_a_rig_at_constant_velocity_carries_the_tail_without_lag():
    """Galilean invariance: after the start's transient (the particles start at rest) no lag is left."""
    roots = []
    for n in range(120):
        T = np.eye(4)
        T[:3, 3] = [0.3 * n, 0.0, 0.1 * n]  # 7.2 units/s sideways: far more than the tail's length
        roots.append(T)
    A = carried(roots, rest_chain())
    off = tip_offset(jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS), A)
    assert off[:10].max() > 0.05  # the start is a jolt: the tail lags it
    assert off[-20:].max() < 1e-6 * LENGTHS.sum(), off[-20:].max()
    # Wiggle 2's own drag damps world velocity: the same rig leaves a steady lag behind it.
    world = tip_offset(jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS, JiggleSettings(world_drag=True)), A)
    assert world[-20:].min() > 1e-3


def swing_then_stop(frames: int = 120, stop: int = 24) -> np.ndarray:
    """The root swings 40° about Z at 1.5 Hz for ``stop`` frames, then holds its last pose."""
    angles = [np.radians(40.0) * np.sin(2 * np.pi * 1.5 * min(n, stop) / FPS) for n in range(frames)]
    return carried([rot_z(a) for a in angles], rest_chain())


def test_a_stopped_swing_overshoots_then_dies_out():
    A = swing_then_stop(frames=24 + 96)
    off = tip_offset(jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS), A)
    peak = off.max()
    assert peak > 0.1 * LENGTHS[1:].sum()  # the tail follows through visibly
    assert off[25:35].max() > 0.1 * peak  # it keeps moving after the rig stops
    assert off[24 + 48 :].max() < 1e-2 * peak  # two seconds later it has all but stopped
    assert off[24 + 72 :].max() < 1e-4 * peak  # and it dies out rather than creeping


@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_bone_lengths_are_kept_and_heads_stay_on_their_parents_tails(scale):
    A = swing_then_stop()
    A = np.einsum("ij,fbjk->fbik", np.diag([scale, scale, scale, 1.0]), A)  # an armature object at x scale
    J = jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS)
    heads, tails = J[..., :3, 3], bone_tails(J, LENGTHS)
    assert np.allclose(np.linalg.norm(tails - heads, axis=2), scale * LENGTHS, rtol=1e-12)
    assert np.abs(heads[:, 1:] - tails[:, :-1]).max() < 1e-9 * scale  # connected bones stay connected
    # Every bone stays a rotation of its rest frame (times the object scale): no shear or stretch.
    R = J[..., :3, :3] / scale
    assert np.abs(np.einsum("fbji,fbjk->fbik", R, R) - np.eye(3)).max() < 1e-10
    assert tip_offset(J / np.array([scale, scale, scale, 1.0])[None, None, :, None], A / scale).max() > 0.1


def test_rotating_the_whole_problem_rotates_the_result():
    A = swing_then_stop(frames=60)
    Q = np.eye(4)
    Q[:3, :3] = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0]
    J = jiggle_bones(A, PARENTS, LENGTHS, JIGGLE, FPS)
    JQ = jiggle_bones(Q @ A, PARENTS, LENGTHS, JIGGLE, FPS)
    assert np.abs(JQ - Q @ J).max() < 1e-9


def test_skinning_moves_points_with_their_bones():
    rest = rest_chain()
    A = swing_then_stop(frames=30)
    points = np.array([[0.1, 0.5, 0.0], [0.0, 2.9, 0.2], [0.2, 1.8, 0.0]])
    W = normalised(np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]]))
    x = skin(points, W, rest, A)
    assert np.abs(x[0] - points).max() < 1e-12  # the first frame is the rest pose
    # A point bound to one bone moves rigidly with it.
    S = A[:, 3] @ np.linalg.inv(rest[3])
    assert np.abs(x[:, 1] - (S[:, :3, :3] @ points[1] + S[:, :3, 3])).max() < 1e-12
    # A half-and-half point is the mean of its two bones' images.
    y1 = (A[:, 1] @ np.linalg.inv(rest[1]))[:, :3] @ np.append(points[2], 1.0)
    y2 = (A[:, 2] @ np.linalg.inv(rest[2]))[:, :3] @ np.append(points[2], 1.0)
    assert np.abs(x[:, 2] - 0.5 * (y1 + y2)).max() < 1e-12


def test_unconnected_bones_that_point_away_from_their_children_stay_calm():
    """glTF imports connect no bone, often point one away from its child (the Fox's tail) and
    make some a sliver of their segment (the T-Rex's): the particles ride the child heads, and
    a chain correction turns the parent by the child head's swing."""
    rest = rest_chain()
    rest[1:, :3, :3] = rot_z(np.pi / 2)[:3, :3]  # each tail bone's +Y points along -X, the heads go up +Y
    slivers = np.array([1.0, 1e-3, 1e-3, 1e-3])
    levers = rest_levers(rest, PARENTS, slivers, JIGGLE)
    # Bones 1 and 2 reach their child's head (0.8 up = +X of their own frame); the last keeps
    # its own direction, as long as its parent's lever.
    assert np.allclose(levers[1:3], [[0.8, 0.0, 0.0]] * 2) and np.allclose(levers[3], [0.0, 0.8, 0.0])
    assert np.allclose(levers[0], [0.0, 1.0, 0.0])
    angles = [np.radians(40.0) * np.sin(2 * np.pi * 1.5 * min(n, 24) / FPS) for n in range(120)]
    A = carried([rot_z(a) for a in angles], rest)
    J = jiggle_bones(A, PARENTS, levers, JIGGLE, FPS)
    off = np.linalg.norm(lever_points(J, levers)[:, 1:] - lever_points(A, levers)[:, 1:], axis=2)
    # As much as the same swing gives the well-formed chain (connected, each bone along its segment).
    well_formed = tip_offset(jiggle_bones(swing_then_stop(), PARENTS, LENGTHS, JIGGLE, FPS), swing_then_stop())
    assert 0.5 * well_formed.max() < off.max() < 1.5 * well_formed.max()
    assert off[24 + 72 :].max() < 1e-4 * off.max()
    # The same chain through its slivers' own tails flings them about (the T-Rex's reference rang at
    # half the body's size): that is what the levers are for.
    J_tails = jiggle_bones(A, PARENTS, slivers, JIGGLE, FPS)
    heads = np.linalg.norm(J_tails[:, 2:, :3, 3] - A[:, 2:, :3, 3], axis=2)
    assert heads.max() > off.max()
