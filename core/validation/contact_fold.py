"""Skin pressed on skin: a bar folded into a U whose arms touch, and a fast snap of one arm onto the
other (the contact case of issue 16, pose-space subspaces).

A 4 x 1 bar of 5 bones: the two outer bones of each side turn 90° at the joints
x = 1.5 and x = 2.5, so the arms' inner faces meet on the plane x = 2.  From
rest on that pose the left arm swings away sideways and snaps back at 3 Hz: the
rig itself never penetrates, but flesh overshooting the snap does.  Penetration
is how far a left-arm contact vertex gets past its nearest right-arm contact
vertex along x (the rig's own is at most 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ..model.materials import Material
from ..model.rig import lbs_positions, rig_parameters
from ..posespace.model import detect_contacts
from ..subspace.reduced import ReducedModel, build_reduced_model
from .scenes import BarScene, bar_scene, rotation_z

H = 1.0 / 48.0
SNAP = 0.25  # how far the left arm swings away (length units)
SNAP_HZ = 3.0


def folded(snap_t: float | None = None) -> np.ndarray:
    """Bone maps (5, 3, 4) of the U; with snap_t (s) > 0, the left arm swung away sideways and back."""
    A = np.tile(np.eye(4)[:3], (5, 1, 1))
    for b, (degrees, pivot) in {0: (-90, 1.5), 1: (-90, 1.5), 3: (90, 2.5), 4: (90, 2.5)}.items():
        R, c = rotation_z(np.radians(degrees)), np.array([pivot, 0.0, 0.0])
        A[b, :, :3], A[b, :, 3] = R, c - R @ c
    if snap_t is not None and snap_t > 0:
        A[0:2, 0, 3] -= SNAP * (1.0 - np.cos(2.0 * np.pi * SNAP_HZ * snap_t))
    return A


@dataclass
class Fold:
    """The folded bar: scene, material, rest model, the fold's rig parameters (60,) and tet positions
    (n, 3), its contact vertices (c,), and the facing pairs (left (q,), right (q,)) penetration is
    measured on."""

    scene: BarScene
    material: Material
    rest: ReducedModel
    pose: np.ndarray
    posed: np.ndarray
    contacts: np.ndarray
    left: np.ndarray
    facing: np.ndarray


def build_fold(cells: int = 3, m: int = 12, r: int = 60) -> Fold:
    scene = bar_scene(length=4.0, cells_per_unit=cells, bones=5)
    material = Material.uniform(scene.mesh.t, 2e4, 0.0, 1000.0)
    rest = build_reduced_model(scene.mesh, material, scene.rig, m=m, r=r)
    pose = rig_parameters(folded())
    posed = lbs_positions(scene.mesh.X, scene.rig.weights, folded())
    C = detect_contacts(rest, pose[None])[0]
    X = scene.mesh.X
    left, right = C[X[C, 0] < 2.0], C[X[C, 0] > 2.0]
    facing = right[cKDTree(posed[right]).query(posed[left])[1]]
    return Fold(scene, material, rest, pose, posed, C, left, facing)


def penetration(fold: Fold, sim, steps: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """Penetration per step (steps,) with the secondary motion of ``sim``, and the rig's own (steps,).

    sim: a Simulator or PoseSpaceSimulator of ``fold.rest``'s mesh.
    """
    s = fold.scene
    state = sim.initial_state(fold.pose, p_prev=fold.pose)
    depth, rig = np.zeros(steps), np.zeros(steps)
    for k in range(1, steps + 1):
        A = folded(k * H)
        x = lbs_positions(s.mesh.X, s.rig.weights, A)
        state, _ = sim.step(state, rig_parameters(A))
        u = sim.displacement(state)
        depth[k - 1] = ((x[fold.left, 0] + u[fold.left, 0]) - (x[fold.facing, 0] + u[fold.facing, 0])).max()
        rig[k - 1] = (x[fold.left, 0] - x[fold.facing, 0]).max()
    return depth, rig
