"""Reading an object, its settings and its training poses out of Blender into a request (main thread).

A :class:`SessionRequest` holds plain Python and numpy data only, so it can
be handed to a worker thread (see ``jobs``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import bpy
import numpy as np

from ..character import (
    RigBinding,
    armature_input,
    check_object,
    check_stable_topology,
    is_object_rig,
    nan_weights_error,
    rig_notes,
    sample_rig,
    vertex_group_weights,
)
from ..core.errors import CacheError, SkinmodesError
from ..core.io.pc2 import check_writable
from ..core.pipeline import CharacterInput, MaterialSettings, SolverSettings, SubspaceSettings, check_frame_range
from ..core.posespace.rbf import REACH
from ..core.settings import CONTACT_AUTO, CONTACT_GROUP, CONTACT_ONE_SIDED
from ..object_rig import check_subspace_method, object_subspace, read_rig
from ..props import SkinmodesSettings, settings
from .cache_paths import cache_folder
from .colliders import read_colliders
from .core_settings import material_settings, solver_settings, subspace_settings
from .muting import busy, outputs_muted
from .staleness import Geometry, settings_snapshot


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class PoseRequest:
    """A training pose as read on the main thread: its frame, rig parameters (12 b,), contact kind
    ("AUTO", "GROUP", "NONE") and the contact as the pipeline takes it ("auto", a mask (k,), None)."""

    frame: int
    p: np.ndarray
    kind: str
    contact: str | np.ndarray | None
    one_sided: bool = False  # its contact is One-Sided (core.settings.POSE_CONTACT_MODES), else Stick


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class SessionRequest:
    """Everything :func:`prepare` needs, read out of Blender on the main thread.

    Plain Python and numpy data only, so it can be handed to a worker thread:
    bpy is not thread-safe, and nothing after :func:`read_request` touches it
    until :func:`install_session`.
    """

    object_name: str
    object_uid: int
    character: CharacterInput
    binding: RigBinding
    subspace: SubspaceSettings
    material: MaterialSettings
    cache: Path | None  # None: the cache folder is not writable
    cache_note: str  # why there is no cache, or ""
    solver: SolverSettings
    start: int
    end: int
    geometry: Geometry
    snapshot: tuple[object, ...]
    poses: tuple[PoseRequest, ...] = ()
    pose_reach: float = 0.0  # > 0: the contact poses' RBF weights get local support (Local Blend)
    notes: tuple[str, ...] = ()  # what the reader found worth saying (character.rig_notes)


def read_poses(
    obj: bpy.types.Object, s: SkinmodesSettings, scene: bpy.types.Scene, binding: RigBinding, start: int
) -> tuple[PoseRequest, ...]:
    """The object's training poses: the rig sampled at each pose's frame, and its contact (main thread;
    the caller has muted skinmodes' outputs and restores the frame).  Refuses, in one line naming the
    pose, a frame used twice, the rest frame and a missing or NaN contact group."""
    out: list[PoseRequest] = []
    seen: set[int] = set()
    for pose in s.poses:
        f = int(pose.frame)
        if f in seen:
            raise SkinmodesError(f"frame {f} is a training pose twice; remove one of them in the Pose-Space panel")
        if f == start:
            raise SkinmodesError(
                f"frame {f} is the rest frame (the start of the frame range; pre-roll comes before it), "
                "always pose 0; remove it from the training poses"
            )
        seen.add(f)
        contact: str | np.ndarray | None = None
        if pose.contact == CONTACT_AUTO:
            contact = CONTACT_AUTO.lower()
        elif pose.contact == CONTACT_GROUP:
            name = pose.contact_group
            if not name or obj.vertex_groups.get(name) is None:
                raise SkinmodesError(
                    f"the contact group '{name}' of the pose at frame {f} is not a vertex group of '{obj.name}'; "
                    "pick one or set its contact to Automatic"
                )
            with armature_input(obj) as obj_in:
                contact = vertex_group_weights(obj_in, [name])[:, 0]
            if not np.isfinite(contact).all():
                raise nan_weights_error(obj, name, f"the contact group of the pose at frame {f}")
        scene.frame_set(f)
        p, _ = sample_rig(obj, binding, bpy.context.evaluated_depsgraph_get())
        one_sided = pose.contact_mode == CONTACT_ONE_SIDED
        out.append(PoseRequest(frame=f, p=p, kind=str(pose.contact), contact=contact, one_sided=one_sided))
    return tuple(out)


# The object's stored gait (JSON, core.locomotion.stored; written by skinmodes_addon/locomotion), saved with
# the .blend as a custom property of the object.
GAIT_PROPERTY = "skinmodes_gait"


def stored_gait_text(obj: bpy.types.Object) -> str:
    """The object's stored gait (JSON), or "" (Any: the stubs type an ID property's ``get`` as None)."""
    return str(cast(Any, obj).get(GAIT_PROPERTY) or "")


def check_gait(obj: bpy.types.Object, s: SkinmodesSettings) -> None:
    """Refuse, in one line, Locomotion on with no stored gait: the bake would otherwise play plain jiggle and
    say nothing (issue 39, item 2).  A gait is found for a mesh without an armature; a rigged character has
    none to play."""
    if not s.locomotion or stored_gait_text(obj):
        return
    if is_object_rig(obj):
        raise SkinmodesError(
            f"Locomotion is on but '{obj.name}' has no stored gait; press Find Gait (or run `skinmodes gait`) "
            "first, or turn Locomotion off"
        )
    raise SkinmodesError(
        f"Locomotion plays a gait found for a mesh without an armature, and '{obj.name}' is rigged (it has none); "
        "turn Locomotion off"
    )


def read_request(
    obj: bpy.types.Object, scene: bpy.types.Scene, frames: tuple[int, int] | None = None, searching: bool = False
) -> SessionRequest:
    """Read the character and its settings (main thread).

    frames: the range to simulate (default: the object's settings); searching: read for Find Gait, which
    needs no stored gait (it finds one), so Locomotion without one is not refused (:func:`check_gait`).  Sets the
    scene to the first frame while reading (the rest frame is the object's
    transform there) and restores the frame after.  Creates nothing on disk:
    the cache folder is made when the first cache file is written.
    """
    check_object(obj)
    s = settings(obj)
    check_subspace_method(obj, s)
    if not searching:
        check_gait(obj, s)
    start, end = check_frame_range(*(frames if frames is not None else s.frame_range(scene)))
    original = scene.frame_current
    with busy():
        try:
            with outputs_muted(obj):
                # Refused up front, before any heavy work; ends on the start frame, the rest frame.
                check_stable_topology(obj, scene, (end, (start + end) // 2, start))
                scene.frame_set(start)
                inp, binding = read_rig(obj, s, scene, start)
                poses = read_poses(obj, s, scene, binding, start)
                solver = solver_settings(s, scene)
                tracks = read_colliders(obj, s.colliders, scene, start - solver.preroll, end, binding.unit)
                solver = replace(solver, collider_tracks=tracks, world_unit=binding.unit)
        finally:
            scene.frame_set(original)
    cache: Path | None = cache_folder(s)
    note = ""
    try:
        check_writable(cast(Path, cache), create=False)
    except CacheError:
        note = f"cache folder {cache} is not writable; modes are not cached"
        cache = None
    return SessionRequest(
        object_name=obj.name,
        object_uid=obj.session_uid,
        character=inp,
        binding=binding,
        subspace=subspace_settings(s) if binding.armature else object_subspace(subspace_settings(s)),
        material=material_settings(s),
        cache=cache,
        cache_note=note,
        solver=solver,
        start=start,
        end=end,
        geometry=Geometry.of(obj, binding.members),
        snapshot=settings_snapshot(s),
        poses=poses,
        pose_reach=REACH if s.pose_local_blend else 0.0,
        notes=tuple(rig_notes(obj, binding)),
    )
