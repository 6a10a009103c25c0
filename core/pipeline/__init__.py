"""From a skinned character to secondary motion per frame: preparing it, the drive that moves it,
the frame loop (FrameSimulation) and its guards."""

from .drives import character_drive, locomotion_drive, rotstrain_drive
from .frames import CHECKPOINT, STATE_BUDGET, ControlFrames, FrameSimulation, RigFrames, check_frame_range
from .guards import CUT_RATIO, CUT_WINDOW, GUARD_PROBES, JUMP_WARNING, OFFSET_WARNING, frame_ranges, guard_probes
from .poses import (
    CONTACT_MASK_LEVEL,
    ContactSpec,
    interpolate_mask_to_tets,
    pose_contacts,
    prepare_pose_space,
)
from .prepare import (
    Cancelled,
    CharacterInput,
    MaterialSettings,
    PoseSpaceCharacter,
    PreparedCharacter,
    SolverSettings,
    SubspaceSettings,
    character_key,
    physical_scale,
    prepare_character,
)

__all__ = [
    "CHECKPOINT",
    "CONTACT_MASK_LEVEL",
    "CUT_RATIO",
    "CUT_WINDOW",
    "GUARD_PROBES",
    "JUMP_WARNING",
    "OFFSET_WARNING",
    "STATE_BUDGET",
    "Cancelled",
    "CharacterInput",
    "ContactSpec",
    "ControlFrames",
    "FrameSimulation",
    "MaterialSettings",
    "PoseSpaceCharacter",
    "PreparedCharacter",
    "RigFrames",
    "SolverSettings",
    "SubspaceSettings",
    "character_drive",
    "character_key",
    "check_frame_range",
    "frame_ranges",
    "guard_probes",
    "interpolate_mask_to_tets",
    "locomotion_drive",
    "physical_scale",
    "pose_contacts",
    "prepare_character",
    "prepare_pose_space",
    "rotstrain_drive",
]
