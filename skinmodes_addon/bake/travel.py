"""A gait's travel keyed on the object's transform (issue 26, Travel "On the Object"): a bake output
beside the point cache and the shape keys.

Per baked frame, the body's best-fit rigid motion (``LocomotionDrive.body_transform``: [R | t] in the
simulated mesh's frame, which is world-aligned and scaled by the scene's unit) becomes a world motion M
of the object, keyed on its location and rotation in an action skinmodes makes and names
(``skinmodes.travel.<stem>``); the cache keeps the rest, ``c' = (M W)^-1 W c`` for the cached positions c
that Travel "In the Cache" writes and the object's own world matrix W.  So the keyed transform times the
cached shape is the mesh "In the Cache" bakes, to float32 round-off (the keys are float32).

The safer of the two choices: an object whose transform is animated by the user (an action, NLA tracks,
drivers on its transform) or moved by constraints is refused in one line before any work, so skinmodes
never writes into, nor hides, the user's animation.  The location and rotation the object had before the
first such bake are recorded (``TRAVEL_PROPERTY``, saved with the .blend) and put back by Clear Bake, by a
bake "In the Cache", and while a later bake samples the object (:func:`keys_aside`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import bpy
import numpy as np
from mathutils import Euler, Matrix, Quaternion

from ..character import evaluated_coordinates, fcurves_of, matrix
from ..core.errors import SkinmodesError
from ..core.locomotion.drive import LocomotionDrive
from ..core.locomotion.step import State
from ..props import settings
from ..session.muting import SHAPE_KEY_PREFIX
from ..session.session import Session, playing_gait
from .naming import cache_stem
from .undo import Undo

# The object's location and rotation before skinmodes keyed it, and the action it keys (JSON).
TRAVEL_PROPERTY = "skinmodes_travel"
ACTION_PREFIX = SHAPE_KEY_PREFIX + "travel."
# What the user may animate on an object whose travel skinmodes keys: none of these.
TRANSFORM_PATHS = frozenset(
    {"location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale"}
    | {"delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale"}
)


def wants_keys(obj: bpy.types.Object) -> bool:
    """Whether a bake of ``obj`` keys its travel: Travel "On the Object" and a gait playing."""
    return settings(obj).gait_travel == "OBJECT" and bool(playing_gait(obj))


def travel_record(obj: bpy.types.Object) -> dict[str, Any]:
    """The object's record (its own transform and skinmodes' action), or {} when skinmodes keyed nothing."""
    text = cast(Any, obj).get(TRAVEL_PROPERTY)
    return dict(json.loads(str(text))) if text else {}


def _own_transform(obj: bpy.types.Object) -> dict[str, Any]:
    return {
        "location": [float(v) for v in cast(Any, obj.location)],
        "rotation_euler": [float(v) for v in cast(Any, obj.rotation_euler)],
        "rotation_quaternion": [float(v) for v in cast(Any, obj.rotation_quaternion)],
        "rotation_axis_angle": [float(v) for v in cast(Any, obj.rotation_axis_angle)],
    }


def _put_transform(obj: bpy.types.Object, values: dict[str, Any]) -> None:
    for name in ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle"):
        setattr(obj, name, values[name])


def _ours(obj: bpy.types.Object, ad: bpy.types.AnimData | None) -> bool:
    name = travel_record(obj).get("action", "")
    return ad is not None and ad.action is not None and bool(name) and ad.action.name == name


def refuse_animated_transform(obj: bpy.types.Object) -> None:
    """One line, before any work, when the user's own animation or constraints move the object."""
    ad = obj.animation_data
    why = ""
    if ad is not None and ad.action is not None and not _ours(obj, ad):
        why = f"its action '{ad.action.name}' animates it"
    elif ad is not None and len(ad.nla_tracks):
        why = "its NLA tracks animate it"
    elif ad is not None and any(d.data_path in TRANSFORM_PATHS for d in ad.drivers):
        why = "drivers move it"
    elif any(c.enabled for c in obj.constraints):
        why = "its constraints move it"
    if why:
        raise SkinmodesError(
            f"Travel On the Object keys the transform of '{obj.name}', but {why}; skinmodes will not touch your "
            "animation: set Travel to In the Cache, or move that animation to a parent"
        )


@contextmanager
def keys_aside(obj: bpy.types.Object) -> Iterator[None]:
    """While a bake reads the object: skinmodes' travel action unassigned and the object's own transform back,
    so the rig, the rest frame and the cache are the ones the user's transform gives; restored after."""
    ad = obj.animation_data
    if not _ours(obj, ad):
        yield
        return
    assert ad is not None
    action, slot = ad.action, getattr(ad, "action_slot", None)
    keyed = _own_transform(obj)
    ad.action = None
    _put_transform(obj, travel_record(obj)["transform"])
    try:
        yield
    finally:
        ad.action = action
        if slot is not None:
            cast(Any, ad).action_slot = slot  # Blender 4.4+: the slot the action animated
        _put_transform(obj, keyed)  # the next frame change evaluates the keys again


@dataclass
class TravelKeys:
    """The travel keys of a bake being made: per frame, the object's location (3,) and rotation (3,) or (4,)
    in its rotation mode, and the cache positions relative to them."""

    unit: float
    mode: str
    scale: tuple[float, float, float]
    frames: list[int] = field(default_factory=list)
    location: list[np.ndarray] = field(default_factory=list)
    rotation: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def of(cls, obj: bpy.types.Object, session: Session) -> TravelKeys:
        return cls(session.binding.unit, str(obj.rotation_mode), tuple(obj.scale))  # type: ignore[arg-type]

    def _rotation(self, q: Quaternion) -> tuple[np.ndarray, Matrix]:
        """The keyed values (float32) in the object's rotation mode, and the rotation (3, 3) they give."""
        if self.mode == "QUATERNION":
            values = np.array(q, dtype=np.float32)
            return values, Quaternion(values.tolist()).normalized().to_matrix()
        if self.mode == "AXIS_ANGLE":
            axis, angle = q.to_axis_angle()
            values = np.array([angle, *axis], dtype=np.float32)
            return values, Quaternion(values[1:].tolist(), float(values[0])).to_matrix()
        previous = Euler(self.rotation[-1].tolist(), self.mode) if self.rotation else None
        euler = q.to_euler(self.mode, previous) if previous is not None else q.to_euler(self.mode)
        values = np.array(euler, dtype=np.float32)
        return values, Euler(values.tolist(), self.mode).to_matrix()

    def frame(self, f: int, world: np.ndarray, basis: np.ndarray, body: np.ndarray, cached: np.ndarray) -> np.ndarray:
        """Key frame ``f`` and return the cache's positions (k, 3) float32 relative to the keys.

        world, basis (4, 4): the object's own world and basis matrices at f; body (3, 4): [R | t] in the mesh's
        frame; cached (k, 3): the object-space positions Travel "In the Cache" bakes at f.
        """
        R, t = body[:, :3], body[:, 3] / self.unit
        origin = world[:3, 3]
        M = np.eye(4)
        M[:3, :3], M[:3, 3] = R, origin + t - R @ origin  # the body's motion about the object's origin, world
        parent = world @ np.linalg.inv(basis)  # parent and parent inverse: W = P B
        loc, q, _ = Matrix(np.linalg.inv(parent) @ M @ world).decompose()
        location = np.array(loc, dtype=np.float32)
        rotation, turn = self._rotation(q)
        keyed = np.eye(4)  # T R S, as Blender composes the keyed values
        keyed[:3, :3], keyed[:3, 3] = np.asarray(turn, dtype=np.float64) @ np.diag(self.scale), location
        moved = parent @ keyed
        self.frames.append(f)
        self.location.append(location)
        self.rotation.append(rotation)
        to_cache = np.linalg.inv(moved) @ world
        return (cached.astype(np.float64) @ to_cache[:3, :3].T + to_cache[:3, 3]).astype(np.float32)


def rotation_path(mode: str) -> str:
    return {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(mode, "rotation_euler")


def _write_action(obj: bpy.types.Object, keys: TravelKeys, name: str) -> bpy.types.Action:
    """Assign a new action named ``name`` to the object and key every frame of ``keys`` into it (linear)."""
    action = bpy.data.actions.new(name)
    obj.animation_data.action = action
    path = rotation_path(keys.mode)
    for f, loc, rot in zip(keys.frames, keys.location, keys.rotation, strict=True):
        obj.location = loc.tolist()
        setattr(obj, path, rot.tolist())
        obj.keyframe_insert("location", frame=f)
        obj.keyframe_insert(path, frame=f)
    for fc in fcurves_of(action):
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"  # the point cache interpolates linearly between frames too
    return action


def put_travel_keys(obj: bpy.types.Object, keys: TravelKeys | None, name: str, undo: Undo) -> str:
    """Replace skinmodes' travel keys on ``obj`` with ``keys`` (None: none), each step recorded in ``undo``;
    returns the old action's name, for :func:`drop_travel_action` once the bake is in place."""
    record = travel_record(obj)
    ad = obj.animation_data
    old = ""
    if _ours(obj, ad):
        assert ad is not None
        action, slot, keyed = ad.action, getattr(ad, "action_slot", None), _own_transform(obj)
        old = action.name

        def reassign() -> None:
            ad.action = action
            if slot is not None:
                cast(Any, ad).action_slot = slot  # Blender 4.4+: the slot the action animated
            _put_transform(obj, keyed)

        ad.action = None
        undo.add(reassign)
    own = record.get("transform") or _own_transform(obj)
    if record:
        _put_transform(obj, own)
    previous = cast(Any, obj).get(TRAVEL_PROPERTY)
    undo.add(lambda: _restore_property(obj, previous))
    cast(Any, obj).pop(TRAVEL_PROPERTY, None)
    if keys is None:
        return old
    if obj.animation_data is None:
        obj.animation_data_create()
        undo.add(obj.animation_data_clear)
    made = _write_action(obj, keys, name)

    def unmake() -> None:
        bpy.data.actions.remove(made)
        _put_transform(obj, own)

    undo.add(unmake)
    obj[TRAVEL_PROPERTY] = json.dumps({"action": made.name, "transform": own})
    return old


def _restore_property(obj: bpy.types.Object, value: object) -> None:
    if value is None:
        cast(Any, obj).pop(TRAVEL_PROPERTY, None)
    else:
        obj[TRAVEL_PROPERTY] = value


def drop_travel_action(name: str) -> None:
    """Remove skinmodes' old travel action once nothing uses it (after the new bake is in place)."""
    action = bpy.data.actions.get(name) if name else None
    if action is not None and action.users == 0:
        bpy.data.actions.remove(action)


def settle_travel_action(obj: bpy.types.Object, old: str) -> None:
    """After the swap: the old travel action removed, and the new one named as wanted when the old held it."""
    drop_travel_action(old)
    record = travel_record(obj)
    action = bpy.data.actions.get(record.get("action", ""))
    wanted = action_name(obj)
    if action is not None and action.name != wanted and bpy.data.actions.get(wanted) is None:
        action.name = wanted
        obj[TRAVEL_PROPERTY] = json.dumps({**record, "action": action.name})


def action_name(obj: bpy.types.Object) -> str:
    """The name of the action skinmodes keys the object's travel into."""
    return f"{ACTION_PREFIX}{cache_stem(obj)}"


def travel_cache(
    keys: TravelKeys,
    obj: bpy.types.Object,
    session: Session,
    f: int,
    depsgraph: bpy.types.Depsgraph,
    offsets: np.ndarray,
) -> np.ndarray:
    """Key frame ``f`` of a bake and return its offsets (k, 3) float32 relative to the keys: from the mesh
    the rig gives to the cache's shape.  offsets (k, 3): what Travel "In the Cache" adds to that mesh."""
    sim = session.ensure_simulation()
    drive = sim.drive
    if not isinstance(drive, LocomotionDrive):  # wants_keys saw a gait playing: the session plays it
        raise SkinmodesError(f"'{obj.name}' plays no gait, so it has no travel to key; bake again")
    rig = evaluated_coordinates(obj, depsgraph)
    world, basis = world_and_basis(obj, depsgraph)
    body = drive.body_transform(cast(State, sim.state(f)))
    return keys.frame(f, world, basis, body, rig + offsets) - rig


def clear_travel_keys(obj: bpy.types.Object) -> None:
    """Clear Bake: skinmodes' travel action off the object and removed, the object's own transform back."""
    record = travel_record(obj)
    if not record:
        return
    ad = obj.animation_data
    if _ours(obj, ad):
        assert ad is not None
        ad.action = None
    _put_transform(obj, record["transform"])
    cast(Any, obj).pop(TRAVEL_PROPERTY, None)
    drop_travel_action(str(record.get("action", "")))


def world_and_basis(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph) -> tuple[np.ndarray, np.ndarray]:
    """The object's evaluated world matrix and its basis (4, 4) each, at the depsgraph's frame."""
    ob = obj.evaluated_get(depsgraph)
    return matrix(ob.matrix_world), matrix(ob.matrix_basis)
