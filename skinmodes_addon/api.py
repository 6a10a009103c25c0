"""A small Python API for technical directors and pipelines.

    import skinmodes_api as api
    api.configure(obj, modes=24, wobble_hz=4.0, damping_ratio=0.3)
    api.set_poses(obj, [(40, "auto"), (75, "elbow_crease")])  # training poses: frame, contact
    summary = api.bake(obj, frames=(1, 120), output="PC2")
    summaries = api.bake_character(armature)  # every mesh the armature deforms, each its own cache
    api.clear_bake(obj)

``skinmodes_api`` is this module under a name that does not depend on the
repository the extension was installed from (its real name is
``bl_ext.<repository>.skinmodes.api``); it exists while the add-on is enabled.

Every function raises :class:`SkinmodesError` (one-line message) on bad input
and leaves the scene unchanged when it does.
"""

from __future__ import annotations

import numbers
from typing import Any

import bpy

from .bake.character_job import CharacterBake
from .bake.job import BakeJob
from .bake.outputs import clear_bake as _clear_bake
from .bake.outputs import clear_character as _clear_character
from .character import character_meshes as _character_meshes
from .core.errors import SkinmodesError
from .core.settings import CONTACT_AUTO, CONTACT_GROUP, CONTACT_NONE, CONTACT_ONE_SIDED, CONTACT_STICK, validate_all
from .core.settings import names as setting_names
from .props import scene_of
from .props import settings as _settings
from .session.session import build_session

# Every user setting of core/settings.py (the stage "ui" preset included).
SETTABLE = frozenset(setting_names())

__all__ = [
    "SETTABLE",
    "SkinmodesError",
    "bake",
    "bake_character",
    "character_meshes",
    "clear_bake",
    "clear_character",
    "compute_modes",
    "configure",
    "poses",
    "set_poses",
    "settings",
    "validate_poses",
]

# A training pose's contact: "auto", "none", or the name of a vertex group.
CONTACT_KINDS = {kind.lower(): kind for kind in (CONTACT_AUTO, CONTACT_NONE)}
# Blender's frames (MINAFRAME, MAXFRAME): a scene cannot be set to a frame outside them.
FRAME_LIMIT = 1_048_574
# The bake's outputs, as the API, the add-on and the command line spell them.
OUTPUT_SPELLINGS = {"pc2": "PC2", "shape_keys": "SHAPE_KEYS", "shapekeys": "SHAPE_KEYS"}


def check_frame(value: Any, what: str) -> int:
    """``value`` as a frame, or a one-line :class:`SkinmodesError` naming ``what`` and the limits."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SkinmodesError(f"{what} must be a whole number, got {value!r}")
    if not -FRAME_LIMIT <= int(value) <= FRAME_LIMIT:
        raise SkinmodesError(
            f"{what} {value} is outside Blender's frames ({-FRAME_LIMIT} to {FRAME_LIMIT}); give a frame inside them"
        )
    return int(value)


def check_frames(frames: Any) -> tuple[int, int] | None:
    """A bake's ``frames`` argument: None, or a (start, end) pair of frames (checked, one line if not)."""
    if frames is None:
        return None
    if isinstance(frames, (str, bytes)) or not isinstance(frames, (tuple, list)) or len(frames) != 2:
        raise SkinmodesError(f"frames must be a (start, end) pair of whole numbers, e.g. (1, 120), got {frames!r}")
    return check_frame(frames[0], "the start frame"), check_frame(frames[1], "the end frame")


def check_output(output: Any) -> str | None:
    """A bake's ``output`` argument: None, or "PC2" / "SHAPE_KEYS" however spelt (one line if neither)."""
    if output is None:
        return None
    if not isinstance(output, str) or output.lower() not in OUTPUT_SPELLINGS:
        raise SkinmodesError(f"output must be 'PC2' or 'SHAPE_KEYS' (or 'shapekeys'), got {output!r}")
    return OUTPUT_SPELLINGS[output.lower()]


def mesh_argument(obj: Any, call: str) -> bpy.types.Object:
    """``obj`` if it is a mesh object, else one line naming the call and what it was given (issue 39: None
    reached Blender's own attribute errors)."""
    if not isinstance(obj, bpy.types.Object) or obj.type != "MESH":
        got = (
            "None"
            if obj is None
            else (f"'{obj.name}' ({obj.type.lower()})" if isinstance(obj, bpy.types.Object) else type(obj).__name__)
        )
        raise SkinmodesError(f"skinmodes_api.{call} needs a mesh object, got {got}")
    return obj


def settings(obj: bpy.types.Object) -> Any:
    """The object's settings (a PropertyGroup saved with the .blend)."""
    mesh_argument(obj, "settings")
    return _settings(obj)


def configure(obj: bpy.types.Object, **values: Any) -> None:
    """Set several settings at once.

    Every value is checked first (names, types, ranges: one line naming the
    setting and its range); nothing changes unless all are valid.  The
    preset is applied first, so explicit values given with it win.
    """
    mesh_argument(obj, "configure")
    checked = validate_all(values)
    s = _settings(obj)
    for name in sorted(checked, key=lambda n: n != "material_preset"):
        setattr(s, name, checked[name])


# How a pose's contact acts, as the API and the command line spell it (the panel's Contact Mode).
POSE_MODES = {"stick": CONTACT_STICK, "one-sided": CONTACT_ONE_SIDED}
Pose = tuple[int, str] | tuple[int, str, str]


def poses(obj: bpy.types.Object) -> list[Pose]:
    """The object's training poses as :func:`set_poses` takes them: (frame, contact) for a Stick pose,
    (frame, contact, "one-sided") for a One-Sided one; contact is "auto", "none" or a vertex group's name."""
    mesh_argument(obj, "poses")
    out: list[Pose] = []
    for p in _settings(obj).poses:
        contact = p.contact_group if p.contact == CONTACT_GROUP else p.contact.lower()
        out.append(
            (int(p.frame), contact, "one-sided") if p.contact_mode == CONTACT_ONE_SIDED else (int(p.frame), contact)
        )
    return out


def set_poses(obj: bpy.types.Object, new: list[Pose]) -> None:
    """Replace the object's training poses (the Pose-Space panel's list) by ``new``: (frame, contact) pairs,
    or (frame, contact, mode) triples.

    contact: "auto" (skin the pose presses together is held still), "none", or a vertex group of
    ``obj`` (its vertices above 0.5 are).  mode: "stick" (the default: the touching skin is held in the
    pose's modes) or "one-sided" (Skin on Skin keeps it apart there; it may separate and slide).  Checked
    first (whole frames, each once, existing groups); nothing changes unless all are valid.  The rest
    frame is refused when the modes are computed.
    """
    mesh_argument(obj, "set_poses")
    checked = validate_poses(obj, new)
    s = _settings(obj)
    s.poses.clear()
    for frame, kind, group, mode in checked:
        pose = s.poses.add()
        pose.frame, pose.contact, pose.contact_group, pose.contact_mode = frame, kind, group, mode


def _pose_mode(item: tuple[Any, ...], frame: int) -> str:
    """The CONTACT_STICK / CONTACT_ONE_SIDED id of a pose's optional third element (stick when absent)."""
    if len(item) == 2:
        return CONTACT_STICK
    mode = item[2]
    if not isinstance(mode, str) or mode.lower() not in POSE_MODES:
        raise SkinmodesError(
            f"the contact mode of the pose at frame {frame} must be 'stick' or 'one-sided', got {mode!r}"
        )
    return POSE_MODES[mode.lower()]


def validate_poses(obj: bpy.types.Object, new: list[Pose]) -> list[tuple[int, str, str, str]]:
    """Check training poses for :func:`set_poses` without changing anything: (frame, CONTACT, group, MODE) each."""
    mesh_argument(obj, "validate_poses")
    if not isinstance(new, (list, tuple)):
        raise SkinmodesError(f"training poses are a list of (frame, contact) pairs, got {type(new).__name__}")
    checked: list[tuple[int, str, str, str]] = []
    seen: set[int] = set()
    for item in new:
        if not (isinstance(item, (tuple, list)) and len(item) in (2, 3)):
            raise SkinmodesError(f"a training pose is a (frame, contact) pair or (frame, contact, mode), got {item!r}")
        frame, contact = item[0], item[1]
        frame = check_frame(frame, "a training pose's frame")
        mode = _pose_mode(tuple(item), frame)
        if frame in seen:
            raise SkinmodesError(f"frame {frame} is given twice as a training pose; give each frame once")
        seen.add(frame)
        if not isinstance(contact, str) or not contact:
            raise SkinmodesError(f"the contact of the pose at frame {frame} must be 'auto', 'none' or a vertex group")
        if contact.lower() in CONTACT_KINDS:
            checked.append((frame, CONTACT_KINDS[contact.lower()], "", mode))
        elif obj.vertex_groups.get(contact) is not None:
            checked.append((frame, CONTACT_GROUP, contact, mode))
        else:
            raise SkinmodesError(
                f"the contact '{contact}' of the pose at frame {frame} is neither 'auto', 'none' nor a vertex "
                f"group of '{obj.name}'"
            )
    return checked


def compute_modes(obj: bpy.types.Object, scene: bpy.types.Scene | None = None) -> dict[str, float]:
    """Tetrahedralise and compute the modes (or load them from the cache); returns the statistics."""
    mesh_argument(obj, "compute_modes")
    session = build_session(obj, scene or scene_of(bpy.context))
    return dict(session.prepared.stats)


def bake(
    obj: bpy.types.Object,
    frames: tuple[int, int] | None = None,
    output: str | None = None,
    keep_previous_file: bool = False,
) -> dict[str, Any]:
    """Bake ``obj``; returns a summary (frames, seconds, files, output, the training poses used).

    keep_previous_file: a test bake that will not be saved; its point cache gets a name of its own,
    and the file the saved .blend plays is neither overwritten nor deleted.
    """
    mesh_argument(obj, "bake")
    checked_frames, checked_output = check_frames(frames), check_output(output)
    job = BakeJob(bpy.context, obj, output=checked_output, frames=checked_frames, keep_previous=keep_previous_file)
    job.run()
    return bake_summary(job)


def bake_summary(job: BakeJob) -> dict[str, Any]:
    """What :func:`bake` returns for a finished job (and :func:`bake_character` for each mesh)."""
    ps = job.session.prepared.posespace
    return {
        "object": job.obj.name,
        "output": job.output.lower(),
        "frames": [job.start, job.end],
        "frames_baked": job.frames_done,
        "seconds": round(job.seconds, 3),
        "files": job.files,
        "messages": job.messages,
        "warnings": job.warnings,
        "max_offset_percent": round(100.0 * job.max_offset, 3),
        # The size every share above is of (the panel's Character Size): twice the largest distance of
        # the simulated volume from its centre, in scene units; it does not change as the character turns.
        "character_size": float(job.simulation.size),
        # Solver iterations per step (mean, max, at the cap) and the frames whose steps stopped unconverged
        # (a character's meshes report the one simulation of their body).
        "solver": job.simulation.solver_stats(),
        # The training poses the bake blended: frame and the tet vertices held still there.
        "poses": [] if ps is None else [[f, c] for f, c in zip(ps.frames[1:], ps.contacts[1:])],
    }


def clear_bake(obj: bpy.types.Object) -> None:
    """Remove the object's bake (modifier, shape keys and the files skinmodes wrote for it)."""
    mesh_argument(obj, "clear_bake")
    _clear_bake(obj)


def character_meshes(obj: Any) -> list[bpy.types.Object]:
    """The meshes of ``obj``'s character, by name (issue 38): for an armature, every mesh of the scene whose
    Armature modifier uses it; for a mesh, those of its armature (or the mesh alone, without one)."""
    if not (isinstance(obj, bpy.types.Object) and obj.type == "ARMATURE"):
        mesh_argument(obj, "character_meshes")
    return _character_meshes(obj)


def bake_character(
    obj: Any, frames: tuple[int, int] | None = None, output: str | None = None, keep_previous_file: bool = False
) -> list[dict[str, Any]]:
    """Bake every mesh of ``obj``'s character (:func:`character_meshes`), each into its own cache, from the
    one body they are simulated as (Whole Character); returns each mesh's :func:`bake` summary.
    keep_previous_file: as for :func:`bake`, for every mesh.

    One transaction (``bake/character_job.py``): every mesh simulates first, then all commit; a failure
    while any simulates leaves every mesh as it was, and says which mesh failed.
    """
    meshes = character_meshes(obj)
    bake = CharacterBake(
        bpy.context, meshes, output=check_output(output), frames=check_frames(frames), keep_previous=keep_previous_file
    ).run()
    return [bake_summary(job) for job in bake.jobs]


def clear_character(obj: Any) -> list[str]:
    """Clear the bake of every mesh of ``obj``'s character that has one (:func:`character_meshes`); returns
    their names."""
    if not (isinstance(obj, bpy.types.Object) and obj.type == "ARMATURE"):
        mesh_argument(obj, "clear_character")
    return _clear_character(obj)
