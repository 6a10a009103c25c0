"""A bar at rest and bent, with skinning eigenmodes computed at both shapes."""

import numpy as np
import pytest

from core.model.fem import lumped_mass
from core.model.materials import Material
from core.model.rig import rig_parameters
from core.posespace.modes import posed_skinning_modes
from core.validation.scenes import bar_scene, rotation_z

M_MODES = 6


def bend(scene, degrees):
    """Rig parameters (12 b,) turning the last bone by ``degrees`` about z around the middle joint."""
    b = scene.rig.weights.shape[1]
    A = np.tile(np.eye(4)[:3], (b, 1, 1))
    R, c = rotation_z(np.radians(degrees)), np.array([scene.joints[1], 0.0, 0.0])
    A[-1, :, :3], A[-1, :, 3] = R, c - R @ c
    return rig_parameters(A)


class Bent:
    def __init__(self):
        self.scene = bar_scene(4.0, 1.0, 3, bones=3)
        mesh = self.scene.mesh
        self.material = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
        self.masses = lumped_mass(mesh, 1000.0)
        self.poses = [bend(self.scene, 0.0), bend(self.scene, 90.0)]
        self.shapes = [self.scene.rig.positions(mesh.X, p).reshape(-1, 3) for p in self.poses]
        self.modes = [
            posed_skinning_modes(mesh, x, self.material, self.masses, self.scene.rig, None, M_MODES)
            for x in self.shapes
        ]


@pytest.fixture(scope="package")
def bent():
    return Bent()
