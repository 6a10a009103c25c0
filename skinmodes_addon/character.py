"""Reading a rigged character out of Blender, and sampling its rig per frame.

Coordinates.  Dynamics run in world space, in metres (object motion leaks
momentum too).  The simulation rest shape is the mesh's rest coordinates
mapped by ``G = unit * L0``, where L0 is the linear part of the mesh object's
world matrix at the first simulated frame and ``unit`` the scene's unit
scale, so the tet mesh has its physical size whatever the object scale.
Each deforming bone b contributes the world transform

    T_b(f) = unit * W_arm(f) B_b(f) W_arm(f)^-1 W_mesh(f) * G^-1,
    B_b = pose_bone.matrix @ bone.matrix_local^-1           (armature space)

which is exactly what the Armature modifier applies to object-space rest
coordinates (vertices with no bone weight follow the object: a "root"
column with T = unit * W_mesh(f) G^-1).  Offsets come back to object space
through ``(unit * L(f))^-1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import bpy
import numpy as np

from .core.errors import RigError, SkinmodesError
from .core.pipeline import CharacterInput
from .props import SkinmodesSettings

# Blender's Armature modifier ignores vertices whose weights sum below this.
BLENDER_MIN_CONTRIB = 1e-4


def armature_modifier(obj: bpy.types.Object) -> bpy.types.ArmatureModifier | None:
    """The first enabled Armature modifier that has an armature object."""
    if obj is None or obj.type != "MESH":
        return None
    for mod in obj.modifiers:
        if mod.type == "ARMATURE":
            arm = cast(bpy.types.ArmatureModifier, mod)
            if arm.object is not None and arm.object.type == "ARMATURE":
                return arm
    return None


def check_object(obj: bpy.types.Object | None) -> bpy.types.ArmatureModifier:
    """Raise a one-line SkinmodesError unless ``obj`` is a skinned mesh we can simulate."""
    if obj is None:
        raise SkinmodesError("no active object; select the character's mesh")
    if obj.type != "MESH":
        kind = obj.type.lower().replace("_", " ")
        article = "an" if kind[:1] in "aeiou" else "a"
        raise SkinmodesError(f"'{obj.name}' is {article} {kind}, not a mesh; select the character's mesh")
    if len(obj.data.vertices) == 0 or len(obj.data.polygons) == 0:
        raise SkinmodesError(f"'{obj.name}' has no faces; secondary motion needs a surface")
    mod = armature_modifier(obj)
    if mod is None:
        raise RigError(
            f"'{obj.name}' has no Armature modifier with an armature; parent it with Ctrl+P > With Automatic Weights"
        )
    if not mod.use_vertex_groups:
        raise RigError(
            f"the Armature modifier of '{obj.name}' does not use vertex groups; enable Bind To > Vertex Groups"
        )
    deform = [b.name for b in mod.object.data.bones if b.use_deform]
    if not deform:
        raise RigError(
            f"armature '{mod.object.name}' has no deforming bones; enable Deform on the bones that move the mesh"
        )
    if not any(obj.vertex_groups.get(name) is not None for name in deform):
        raise RigError(
            f"'{obj.name}' has no vertex groups named after deforming bones of '{mod.object.name}'; "
            "paint weights or parent with automatic weights"
        )
    return mod


@dataclass(frozen=True)
class RigBinding:
    """Which bones drive the simulation, in weight-column order, and the rest-frame map G (4 x 4)."""

    armature: str
    bones: tuple[str, ...]
    root: bool
    rest_map: np.ndarray
    unit: float


def vertex_group_weights(obj: bpy.types.Object, names: list[str]) -> np.ndarray:
    """(k, len(names)) weights of the named vertex groups (0 where a vertex is not in a group).

    Blender exposes vertex-group membership only per vertex, so this walks the
    vertices once, at load time; nothing per frame depends on it.
    """
    mesh = obj.data
    out = np.zeros((len(mesh.vertices), len(names)))
    column = {obj.vertex_groups[n].index: c for c, n in enumerate(names) if obj.vertex_groups.get(n) is not None}
    if not column:
        return out
    rows, cols, vals = [], [], []
    for v in mesh.vertices:
        for g in v.groups:
            c = column.get(g.group)
            if c is not None:
                rows.append(v.index)
                cols.append(c)
                vals.append(g.weight)
    out[np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)] = np.array(vals)
    return out


def vertex_positions(mesh: bpy.types.Mesh, out: np.ndarray | None = None) -> np.ndarray:
    """Vertex positions (k, 3) float32, as Blender stores them.

    Read through the "position" attribute: for a float32 buffer that is one
    memory copy (about 5 us for 10k vertices), where ``vertices.foreach_get("co")``
    goes element by element (about 1 ms into float64).
    """
    k = len(mesh.vertices)
    if out is None or out.size != 3 * k or out.dtype != np.float32:
        out = np.empty(3 * k, dtype=np.float32)
    flat = out.reshape(-1)
    attr = mesh.attributes.get("position")
    if attr is not None and attr.data_type == "FLOAT_VECTOR" and attr.domain == "POINT" and len(attr.data) == k:
        attr.data.foreach_get("vector", flat)
    else:
        mesh.vertices.foreach_get("co", flat)
    return out.reshape(-1, 3)


def rest_coordinates(obj: bpy.types.Object) -> np.ndarray:
    """Object-space rest positions of the mesh vertices (k, 3), float64 (exact copies of the float32 data)."""
    return vertex_positions(cast(bpy.types.Mesh, obj.data)).astype(np.float64)


def triangles(obj: bpy.types.Object) -> np.ndarray:
    mesh = obj.data
    mesh.calc_loop_triangles()
    tri = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tri)
    return tri.reshape(-1, 3).astype(np.int64)


def matrix(m: object) -> np.ndarray:
    return np.array(m, dtype=np.float64)


def read_character(
    obj: bpy.types.Object, settings: SkinmodesSettings, scene: bpy.types.Scene, start_frame: int
) -> tuple[CharacterInput, RigBinding]:
    """The character at rest as core input, plus how to sample its rig.

    Reads the mesh world matrix at ``start_frame`` from the current depsgraph
    (the caller sets the frame) to fix the simulation's rest frame.
    """
    mod = check_object(obj)
    arm = mod.object
    bones = [b.name for b in arm.data.bones if b.use_deform and obj.vertex_groups.get(b.name) is not None]
    W = vertex_group_weights(obj, bones)
    total = W.sum(axis=1)
    if not (total > BLENDER_MIN_CONTRIB).any():
        raise RigError(f"all bone weights of '{obj.name}' are zero; paint weights or parent with automatic weights")
    if not np.isfinite(W).all():
        raise RigError(f"'{obj.name}' has NaN bone weights; run Weights > Clean on the vertex groups")
    unbound = total <= BLENDER_MIN_CONTRIB
    root = bool(unbound.any())
    if root:
        W = np.hstack([W, unbound[:, None].astype(np.float64)])
    depsgraph = bpy.context.evaluated_depsgraph_get()
    L0 = matrix(obj.evaluated_get(depsgraph).matrix_world)[:3, :3]
    unit = float(scene.unit_settings.scale_length) or 1.0
    G = np.eye(4)
    G[:3, :3] = unit * L0
    rest = rest_coordinates(obj) @ G[:3, :3].T
    faces = triangles(obj)
    s = settings

    def group(name: str) -> np.ndarray | None:
        if not name:
            return None
        if obj.vertex_groups.get(name) is None:
            raise SkinmodesError(f"vertex group '{name}' not found on '{obj.name}'; pick an existing group or clear it")
        return vertex_group_weights(obj, [name])[:, 0]

    leak = group(s.leak_group) if s.leak_mode == "GROUP" else None
    inp = CharacterInput(
        rest=rest,
        faces=faces,
        bone_weights=W,
        stiffness=group(s.stiffness_group),
        density=group(s.density_group),
        leak=leak,
    )
    return inp, RigBinding(armature=arm.name, bones=tuple(bones), root=root, rest_map=G, unit=unit)


def sample_rig(
    obj: bpy.types.Object, binding: RigBinding, depsgraph: bpy.types.Depsgraph
) -> tuple[np.ndarray, np.ndarray]:
    """Rig parameters (12 b,) for the simulation rest frame, and the world-to-object linear map (3, 3).

    Reads the evaluated armature pose and object matrices of the depsgraph's frame.
    """
    obj_e = obj.evaluated_get(depsgraph)
    arm_e = bpy.data.objects[binding.armature].evaluated_get(depsgraph)
    W_mesh = matrix(obj_e.matrix_world)
    W_arm = matrix(arm_e.matrix_world)
    pose = arm_e.pose.bones
    buf = np.empty(len(pose) * 16)
    pose.foreach_get("matrix", buf)
    pose_m = buf.reshape(-1, 4, 4).transpose(0, 2, 1)  # foreach_get gives column-major matrices
    rest_buf = np.empty(len(pose) * 16)
    arm_e.data.bones.foreach_get("matrix_local", rest_buf)
    rest_m = rest_buf.reshape(-1, 4, 4).transpose(0, 2, 1)
    index = {b.name: i for i, b in enumerate(arm_e.data.bones)}
    sel = np.array([index[n] for n in binding.bones], dtype=np.int64)
    B = pose_m[sel] @ np.linalg.inv(rest_m[sel])
    G_inv = np.linalg.inv(binding.rest_map)
    to_world = W_arm @ B @ np.linalg.inv(W_arm) @ W_mesh  # (b, 4, 4)
    T = binding.unit * (to_world @ G_inv)
    if binding.root:
        T = np.concatenate([T, (binding.unit * (W_mesh @ G_inv))[None]], axis=0)
    p = np.ascontiguousarray(T[:, :3, :]).reshape(-1)
    to_local = np.linalg.inv(binding.unit * W_mesh[:3, :3])
    return p, to_local


def evaluated_coordinates(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, out: np.ndarray | None = None
) -> np.ndarray:
    """Object-space positions (k, 3) float32 of the evaluated mesh (after its modifier stack)."""
    return vertex_positions(cast(bpy.types.Mesh, obj.evaluated_get(depsgraph).data), out)


def fcurves_of(action: bpy.types.Action) -> list[bpy.types.FCurve]:
    """F-curves of an action, for both the 4.x and the layered (5.x) action API."""
    if hasattr(action, "fcurves") and len(getattr(action, "fcurves", [])):
        return list(action.fcurves)
    curves: list[bpy.types.FCurve] = []
    for layer in getattr(action, "layers", []):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", []):
                curves.extend(bag.fcurves)
    return curves
