"""Which drive moves a prepared character: its rig, its training poses, or its physics skin; and, for an
object moved by its own transform, rotation-strain coordinates (:func:`rotstrain_drive`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import numpy as np

from ..dynamics.drive import Drive, RigDrive
from ..dynamics.simulator import SimulationSettings, uses_arap
from ..dynamics.wobble import stiffness_scale
from ..errors import SimulationError
from ..locomotion.drive import LocomotionDrive
from ..locomotion.stored import StoredGait
from ..model.fibers import FIBER_CONTRAST, FIBER_HZ
from ..physskin.drive import PhysicsSkinDrive
from ..physskin.rig import GRAVITY
from ..posespace.drive import PoseSpaceDrive
from ..rotstrain.drive import RotStrainDrive, RSBody, RSDriveState
from .guards import guard_probes
from .prepare import PoseSpaceCharacter, PreparedCharacter, SolverSettings, physical_scale

# Rotation-strain coordinates come from at most this many linear modes: the precomputed map's cost
# grows as modes^5 (r + r (r + 1) / 2 basis vectors times r^4 coefficients, per tet).
RS_MODES = 8

POSES_UNUSED = "the training poses are not used with Physics Skin on: its shape, not the bones, drives the jiggle"
ALL_PINNED = (
    "Physics Skin pins every vertex here (each is weighted to one bone alone), so the object follows its bones "
    "without a physics skin; turn Pin Rigidly Bound off to let its flesh bulge and sag"
)


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
    else the bones' linear blend skinning drives it.  The bones and the training poses both take
    the ground and colliders of ``solver.obstacles()`` when there are any (:mod:`core.contact`),
    and Skin on Skin (on too where a training pose's contact is one-sided); with Physics Skin they push
    its free surface out as well (:mod:`core.physskin.contact`).
    """
    settings = solver.simulation()
    model = prepared.model
    probes = guard_probes(model.X)
    obstacles = solver.obstacles()
    at = obstacles.at if obstacles else None
    friction = solver.contact_friction
    if solver.physics_skin:
        notes = [] if posespace is None else [POSES_UNUSED]
        physics = prepared.physics_rig(solver.pin_depth, solver.pin_rigid, solver.physics_skin_from == "bones")
        if not len(physics.skin.free_vertices):  # a prop bound to one bone: nothing left to solve
            notes.append(ALL_PINNED)
        gravity = GRAVITY / physical_scale(prepared, solver) if solver.physics_gravity else None  # E / rho as set
        physics.set_gravity(gravity, prepared.material.density)
        emb, T, keep = prepared.embedding, prepared.mesh.T, prepared.keep
        drive = PhysicsSkinDrive(
            model, settings, rig, prepared.reconstructor, probes, physics, emb, T, keep, solver.secondary_motion,
            at, friction, solver.self_contact,
        )  # fmt: skip
        return drive, notes
    if posespace is not None:
        pairs = solver.self_contact or posespace.model.one_sided_contact
        ps, render, pose_probes = posespace.model, posespace.render, posespace.probes
        return PoseSpaceDrive(ps, settings, rig, render, pose_probes, at, friction, pairs), []
    settings = replace(settings, fiber_scale=fiber_scale(prepared, settings, solver))
    if not (obstacles or solver.self_contact):
        return RigDrive(model, settings, rig, prepared.reconstructor, probes), []
    return RigDrive(model, settings, rig, prepared.reconstructor, probes, at, friction, solver.self_contact), []


def fiber_scale(prepared: PreparedCharacter, settings: SimulationSettings, solver: SolverSettings) -> float:
    """kappa_f of the model's fibers (core/model/fibers.py): as stiff as its flesh would be at FIBER_HZ, whatever
    the material's units, but at most sqrt(FIBER_CONTRAST) times the Wobble (in frequency mode; the Wobble as set,
    not as animated): at Wobble 0.3 Hz fibers at 10 Hz were 1,100 x the flesh, and the Newton solve stopped at its
    cap on most steps (the floppy-hop and Poisson-maximum bakes).  0 for a model without fibers."""
    model = prepared.model
    if model.fiber is None or not np.any(model.fiber):
        return 0.0
    omega = prepared.slowest_frequency(uses_arap(settings.material, model))
    hz = FIBER_HZ
    if solver.stiffness_mode == "frequency":
        hz = min(hz, float(np.sqrt(FIBER_CONTRAST)) * solver.wobble_hz)
    return stiffness_scale(omega, hz)


def rotstrain_drive(
    prepared: PreparedCharacter, solver: SolverSettings, rig: Callable[[int], np.ndarray], modes: int
) -> RotStrainDrive:
    """Rotation-strain coordinates from ``modes`` (at most RS_MODES) free linear modes of the character's tet
    mesh, carried by its one rigid motion ``rig`` (12,) per frame (an object's own transform,
    :mod:`core.rotstrain.drive`).

    Refused, in one line, for a rig of several bones: RS has one moving frame.  In frequency mode the
    frame loop's stiffness scale, calibrated on the skinning model's slowest motion, is mapped onto the
    RS body's (the ratio of their squared frequencies).
    """
    bones = prepared.tet_bone_weights.shape[1]
    if bones != 1:
        raise SimulationError(
            f"Rotation-Strain moves an object by its own transform, one rigid motion, and this rig has {bones} "
            "bones; set Subspace to Skinning Eigenmodes"
        )
    body = RSBody.build(prepared.mesh, prepared.material, min(int(modes), RS_MODES))
    skin = prepared.slowest_frequency(RotStrainDrive.arap)
    ratio = (skin / body.omega0) ** 2 if solver.stiffness_mode == "frequency" else 1.0
    probes = guard_probes(prepared.model.X)
    h = 1.0 / (solver.fps * solver.substeps)
    drive: Drive[RSDriveState] = RotStrainDrive(
        body, rig, prepared.embedding, prepared.keep, probes, h, solver.iterations, ratio, solver.tolerance
    )  # annotated so that mypy proves it is a Drive
    return cast(RotStrainDrive, drive)


def locomotion_drive(
    prepared: PreparedCharacter, solver: SolverSettings, gait: StoredGait, start: int, name: str = "the character"
) -> LocomotionDrive:
    """A stored gait (:mod:`core.locomotion.stored`) played on a prepared mesh without an armature, from frame
    ``start`` (the first simulated frame: time 0 of the gait).

    Refused in one line when the gait was found on another tet mesh or at another solver step (frame rate
    and sub-steps).  The locomotion model is rebuilt from the prepared tet mesh and the gait's settings
    (seconds at tens of thousands of vertices); the render vertices follow through the prepared embedding.
    """
    gait.check_mesh(prepared.mesh, name)
    problem = gait.problem(prepared.mesh, steps=1)  # the drive steps as the frame loop asks
    probes = guard_probes(prepared.mesh.X)
    T, emb = prepared.mesh.T, prepared.embedding
    sinusoids = problem.sinusoids(gait.x)
    return LocomotionDrive.from_problem(problem, sinusoids, T, emb, probes, solver.fps, solver.substeps, start)
