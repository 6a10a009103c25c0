"""Signatures of what a session was built from: the rest mesh, the settings, the animated controls'
keys, the training poses and the armature's rest pose.  A session whose signatures no longer match
the object is stale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import bpy
import numpy as np

from ..character import armature_modifier, character_candidates, stack_signature, vertex_positions
from ..core.settings import CONTACT_GROUP
from ..core.settings import names as setting_names
from ..props import SkinmodesSettings
from .colliders import colliders_signature
from .core_settings import control_curves


def bones_signature(obj: bpy.types.Object) -> bytes:
    """The rest pose of the armature deforming ``obj`` (every bone's head and tail, armature space):
    moving a bone in Edit Mode moves the physics skin's pins, so the session must notice."""
    mod = armature_modifier(obj)
    if mod is None or mod.object is None:
        return b""
    bones = mod.object.data.bones
    buf = np.empty(6 * len(bones), dtype=np.float32)
    heads, tails = buf[: 3 * len(bones)], buf[3 * len(bones) :]
    bones.foreach_get("head_local", heads)
    bones.foreach_get("tail_local", tails)
    return buf.tobytes()


def controls_signature(obj: bpy.types.Object) -> tuple[object, ...]:
    """The animated controls' keys, so a session notices when the animator re-keys them."""
    curves = control_curves(obj)
    if curves is None:
        return ()
    sig: list[object] = []
    for name in sorted(curves):
        pts = curves[name].keyframe_points
        co = np.zeros(6 * len(pts), dtype=np.float32)
        for attr, k in (("co", 0), ("handle_left", 1), ("handle_right", 2)):
            part = np.zeros(2 * len(pts), dtype=np.float32)
            pts.foreach_get(attr, part)
            co[2 * k * len(pts) : 2 * (k + 1) * len(pts)] = part
        sig.append((name, co.tobytes(), tuple(p.interpolation for p in pts)))
    return tuple(sig)


def poses_signature(s: SkinmodesSettings) -> tuple[object, ...]:
    """The training poses as the settings hold them: what makes a session's pose-space modes stale."""
    return tuple(
        (int(p.frame), str(p.contact), str(p.contact_group) if p.contact == CONTACT_GROUP else "", str(p.contact_mode))
        for p in s.poses
    )


def settings_snapshot(s: SkinmodesSettings) -> tuple[object, ...]:
    """Every setting that shapes the prepared character, the animated controls' keys, the training
    poses, the armature's rest pose and the colliders.

    The character's settings come from core/settings.py (stage "character");
    the solver's are compared through :func:`solver_settings`.
    """
    return (
        *(getattr(s, name) for name in setting_names("character")),
        controls_signature(s.id_data),
        poses_signature(s),
        bones_signature(s.id_data),
        colliders_signature(s.id_data, s.colliders),  # their meshes and keys: the contact's input (issue 29)
    )


@dataclass(frozen=True, eq=False)  # compared with matches(), never with == (it holds an array)
class Geometry:
    """The rest mesh as the session saw it: float32 positions (k, 3), the face count, and the settings
    of the modifiers above the Armature modifier (they shape the simulated mesh, see character.py)."""

    positions: np.ndarray
    faces: int
    stack: tuple[object, ...] = ()
    # A whole character's other meshes (issue 38), by name: the body changes when one of them does; and the
    # armature's meshes that could join it (character_candidates): it changes when one joins or leaves.
    members: tuple[tuple[str, Geometry], ...] = ()
    candidates: tuple[str, ...] = ()

    @classmethod
    def of(cls, obj: bpy.types.Object, members: tuple[str, ...] = ()) -> Geometry:
        mesh = cast(bpy.types.Mesh, obj.data)
        others = tuple((n, cls.of(bpy.data.objects[n])) for n in members if n != obj.name)
        return cls(vertex_positions(mesh), len(mesh.polygons), stack_signature(obj), others, _candidates(obj))

    def matches(self, obj: bpy.types.Object) -> bool:
        """Same mesh?  Checked on every previewed frame: one copy and one compare (~20 us at 10k vertices)."""
        mesh = cast(bpy.types.Mesh, obj.data)
        return (
            len(mesh.polygons) == self.faces
            and len(mesh.vertices) == len(self.positions)
            and np.array_equal(vertex_positions(mesh), self.positions)
            and stack_signature(obj) == self.stack
            and self._same_members(obj)
        )

    def _same_members(self, obj: bpy.types.Object) -> bool:
        """Checked on every previewed frame: names and the members' own meshes, no geometry test."""
        if _candidates(obj) != self.candidates:
            return False
        return all(n in bpy.data.objects and g.matches(bpy.data.objects[n]) for n, g in self.members)


def _candidates(obj: bpy.types.Object) -> tuple[str, ...]:
    s = getattr(obj, "skinmodes", None)
    return tuple(o.name for o in character_candidates(obj, s is None or bool(s.whole_character)))
