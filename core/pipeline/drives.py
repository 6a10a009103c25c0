"""Which drive moves a prepared character: its rig, its training poses, or its physics skin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..dynamics.drive import Drive, RigDrive
from ..physskin.drive import PhysicsSkinDrive
from ..posespace.drive import PoseSpaceDrive
from .guards import guard_probes
from .prepare import PoseSpaceCharacter, PreparedCharacter, SolverSettings

POSES_UNUSED = "the training poses are not used with Physics Skin on: its shape, not the bones, drives the jiggle"


def character_drive(
    prepared: PreparedCharacter,
    solver: SolverSettings,
    rig: Callable[[int], np.ndarray],
    posespace: PoseSpaceCharacter | None = None,
) -> tuple[Drive[Any], list[str]]:
    """(the drive, what to tell the user about the choice) for a character and its solver settings.

    rig: LBS parameters (12 b,) at an integer frame.  Physics Skin on: its shape drives the
    jiggle (the training poses, if any, are left out, and a line says so); else the training
    poses (:func:`core.pipeline.poses.prepare_pose_space`) blend the subspace at each pose;
    else the bones' linear blend skinning drives it.
    """
    settings = solver.simulation()
    model = prepared.model
    probes = guard_probes(model.X)
    if solver.physics_skin:
        notes = [] if posespace is None else [POSES_UNUSED]
        physics = prepared.physics_rig(solver.pin_depth)
        emb, T, keep = prepared.embedding, prepared.mesh.T, prepared.keep
        drive = PhysicsSkinDrive(
            model, settings, rig, prepared.reconstructor, probes, physics, emb, T, keep, solver.secondary_motion
        )
        return drive, notes
    if posespace is not None:
        return PoseSpaceDrive(posespace.model, settings, rig, posespace.render, posespace.probes), []
    return RigDrive(model, settings, rig, prepared.reconstructor, probes), []
