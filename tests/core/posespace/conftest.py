"""A bar at rest and bent, with skinning eigenmodes computed at both shapes."""

import numpy as np
import pytest

from core.model.fem import lumped_mass
from core.model.materials import Material
from core.model.rig import rig_parameters
from core.posespace.modes import posed_skinning_modes
from core.validation.scenes import bar_scene, rotated_transforms, rotation_z

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


class Swing:
    """A 3-bone bar bending ±1 rad per joint, with pose-space modes at both extremes (and rest),
    each from its posed shape's Hessian.

    ``rotation``: rotate the rest mesh and every pose by this matrix, on the same subspaces.
    """

    H = 1.0 / 48.0
    AMPLITUDE = 2.0

    def __init__(self, poisson):
        from core.posespace.model import build_pose_space
        from core.subspace.reduced import build_reduced_model

        self.scene = bar_scene(cells_per_unit=3, bones=3)
        self.material = Material.uniform(self.scene.mesh.t, 5e4, poisson, 1000.0)
        self.rest = build_reduced_model(self.scene.mesh, self.material, self.scene.rig, m=8, r=40)
        self.training = np.array([self.pose(0.25), self.pose(0.75)])
        # The posed shapes' Hessians ("pose"), so every pose has a basis of its own and the
        # blend is exercised; with the rest Hessian and no contact the poses would share the rest modes.
        self.model = build_pose_space(self.rest, self.material, self.training, hessian="pose")

    def pose(self, t, rotate=None, **kw):
        """Rig parameters at time t (s) of the swing (1 Hz), optionally for the rotated problem."""
        A = self.scene.transforms(t, amplitude=kw.pop("amplitude", self.AMPLITUDE), frequency=1.0, **kw)
        if rotate is not None:
            A = rotated_transforms(A, rotate)  # x' = R x for rest X' = R X
        return rig_parameters(A)


@pytest.fixture(scope="package", params=[0.0, 0.35], ids=["arap", "corotational"])
def swing(request):
    return Swing(request.param)


def own_model(swing, i):
    """The ordinary reduced model on training pose i's aligned basis (what the blend must equal there)."""
    from core.model.rig import LBSRig
    from core.subspace.reduced import assemble_model

    return assemble_model(
        swing.scene.mesh,
        swing.material,
        swing.rest.masses,
        swing.rest.leak,
        LBSRig(swing.scene.rig.weights),
        swing.model.alignment.bases[i],
        swing.rest.eigenvalues,
        swing.rest.labels,
    )
