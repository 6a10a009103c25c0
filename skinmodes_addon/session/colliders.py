"""Reading the Colliders collection out of Blender, frame by frame (main thread; issue 29).

Every mesh object of the collection that has Collision physics is read at
each frame of the shot as Blender evaluates it (modifiers, shape keys,
animation, parents) with its world matrix, triangulated, and scaled into the
simulation's space (world axes, metres: the scene's unit scale).  The core
interpolates between frames (:mod:`core.contact.scene`).  Objects without
Collision physics are left out.  A collection that can push nothing (no mesh
but the character itself, or meshes none of which has Collision physics) is
refused in one line, so that nothing is silently ignored.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..character import fcurves_of
from ..core.contact.scene import ColliderTrack
from ..core.errors import SkinmodesError


def collision_meshes(obj: bpy.types.Object, name: str) -> list[bpy.types.Object]:
    """The mesh objects of collection ``name`` (and its children) with Collision physics, but ``obj`` itself.

    Refuses in one line a missing collection, one without another mesh, or one whose meshes all lack
    Collision physics.
    """
    if not name:
        return []
    coll = bpy.data.collections.get(name)
    if coll is None:
        raise SkinmodesError(f"the Colliders collection '{name}' does not exist; pick one or clear the field")
    meshes = [o for o in coll.all_objects if o.type == "MESH" and o != obj]
    found = [o for o in meshes if any(m.type == "COLLISION" for m in o.modifiers)]
    if not meshes:  # asked for, but it can push nothing: the same refusal as meshes without Collision physics
        alone = (
            f" but '{obj.name}' itself (Skin on Skin is its contact with itself)" if obj in coll.all_objects[:] else ""
        )
        raise SkinmodesError(
            f"the Colliders collection '{name}' holds no mesh{alone}; put the objects that should push the skin "
            "in it, or clear the field"
        )
    if not found:
        raise SkinmodesError(
            f"no object of the Colliders collection '{name}' has Collision physics; "
            "add it in Physics > Collision to the objects that should push the skin"
        )
    return found


def colliders_signature(obj: bpy.types.Object, name: str) -> tuple[object, ...]:
    """What the Colliders collection ``name`` reads as, cheaply, so a session notices when it changes.

    Per collider (as :func:`collision_meshes` finds them; a refused collection signs as its name):
    its mesh's vertices and face count, its modifiers, its parent, and either its animation's keys
    (an animated collider: its transform follows them) or its transform.  Read on every previewed
    frame, so no frame is evaluated; what only an evaluation shows (drivers, constraints, a
    parent's animation) is not seen.
    """
    try:
        objects = collision_meshes(obj, name)
    except SkinmodesError:
        return ("refused", name)
    return tuple(_collider_signature(o) for o in sorted(objects, key=lambda o: o.name))


def _collider_signature(ob: bpy.types.Object) -> tuple[object, ...]:
    mesh = ob.data
    co = np.empty(3 * len(mesh.vertices), dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    mods = tuple((m.name, m.type, m.show_viewport) for m in ob.modifiers)
    anim = ob.animation_data
    if anim is not None and anim.action is not None:
        moves: object = _keys_signature(anim.action)
    else:
        moves = np.array(ob.matrix_basis, dtype=np.float32).tobytes()
    return (ob.name, co.tobytes(), len(mesh.polygons), mods, ob.parent.name if ob.parent else "", moves)


def _keys_signature(action: bpy.types.Action) -> tuple[object, ...]:
    """Every F-curve's keys (co and handles) and interpolations: a moved key changes it."""
    sig: list[object] = []
    for fc in fcurves_of(action):
        pts = fc.keyframe_points
        co = np.empty(6 * len(pts), dtype=np.float32)
        for k, attr in enumerate(("co", "handle_left", "handle_right")):
            part = np.empty(2 * len(pts), dtype=np.float32)
            pts.foreach_get(attr, part)
            co[2 * k * len(pts) : 2 * (k + 1) * len(pts)] = part
        sig.append((fc.data_path, fc.array_index, co.tobytes(), tuple(p.interpolation for p in pts)))
    return tuple(sig)


def read_colliders(
    obj: bpy.types.Object, name: str, scene: bpy.types.Scene, first: int, last: int, unit: float
) -> tuple[ColliderTrack, ...]:
    """Each collider's triangles and world vertices (times ``unit``) at frames first..last (the caller
    restores the frame).  Refuses in one line a collider whose triangles change between frames."""
    objects = collision_meshes(obj, name)
    if not objects:
        return ()
    frames = np.arange(first, last + 1)
    faces: dict[str, np.ndarray] = {}
    verts: dict[str, list[np.ndarray]] = {o.name: [] for o in objects}
    for f in frames:
        scene.frame_set(int(f))
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for o in objects:
            F, V = _world_triangles(o.evaluated_get(depsgraph), unit)
            known = faces.setdefault(o.name, F)
            if known.shape != F.shape or not np.array_equal(known, F):
                raise SkinmodesError(
                    f"collider '{o.name}' changes its mesh at frame {int(f)}; colliders need the same "
                    "triangles at every frame (apply the modifier that changes them)"
                )
            verts[o.name].append(V)
    return tuple(ColliderTrack(n, faces[n], frames.astype(np.float64), np.stack(verts[n])) for n in faces)


def _world_triangles(ob: bpy.types.Object, unit: float) -> tuple[np.ndarray, np.ndarray]:
    """(triangles (f, 3), world vertices times ``unit`` (v, 3)) of an evaluated mesh object."""
    mesh = ob.to_mesh()
    try:
        mesh.calc_loop_triangles()
        V = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", V)
        F = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", F)
    finally:
        ob.to_mesh_clear()
    M = np.array(ob.matrix_world, dtype=np.float64)
    V = V.reshape(-1, 3) @ M[:3, :3].T + M[:3, 3]
    return F.reshape(-1, 3).astype(np.int64), unit * V
