"""Which drive a prepared character gets (core/pipeline/drives.py): rig, training poses or physics skin."""

import numpy as np

from core.dynamics.drive import RigDrive
from core.physskin.drive import PhysicsSkinDrive
from core.pipeline import FrameSimulation, SolverSettings, prepare_pose_space
from core.posespace.drive import PoseSpaceDrive
from tests.core.pipeline.characters import swing


def test_physics_skin_leaves_the_poses_out_and_says_so(skinned):
    ps = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9])
    sim = FrameSimulation(skinned, SolverSettings(physics_skin=True), 1, 5, swing, posespace=ps)
    assert isinstance(sim.drive, PhysicsSkinDrive) and any("training poses are not used" in w for w in sim.warnings)


def test_the_rig_drives_unless_poses_or_the_physics_skin_do(prepared, skinned):
    """No poses, no physics skin: the rig; training poses: their blend; Physics Skin: its shape, with or
    without the jiggle on top (Secondary Motion)."""
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9])
    assert type(FrameSimulation(prepared, SolverSettings(), 1, 5, swing).drive) is RigDrive
    assert type(FrameSimulation(prepared, SolverSettings(), 1, 5, swing, posespace=ps).drive) is PoseSpaceDrive
    for jiggle in (True, False):
        solver = SolverSettings(physics_skin=True, secondary_motion=jiggle)
        sim = FrameSimulation(skinned, solver, 1, 5, swing)
        assert type(sim.drive) is PhysicsSkinDrive and sim.drive.jiggles is jiggle and sim.warnings == []
