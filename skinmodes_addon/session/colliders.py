"""Reading the Colliders collection out of Blender, frame by frame (main thread; issue 29).

Every mesh object of the collection that has Collision physics is read at
each frame of the shot as Blender evaluates it (modifiers, shape keys,
animation, parents) with its world matrix, triangulated, and scaled into the
simulation's space (world axes, metres: the scene's unit scale).  The core
interpolates between frames (:mod:`core.contact.scene`).  Objects without
Collision physics are left out, and a collection that has meshes but none
with Collision physics is refused in one line, so that nothing is silently
ignored.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..core.contact.scene import ColliderTrack
from ..core.errors import SkinmodesError


def collision_meshes(obj: bpy.types.Object, name: str) -> list[bpy.types.Object]:
    """The mesh objects of collection ``name`` (and its children) with Collision physics, but ``obj`` itself.

    Refuses in one line a missing collection, or one whose meshes all lack Collision physics.
    """
    if not name:
        return []
    coll = bpy.data.collections.get(name)
    if coll is None:
        raise SkinmodesError(f"the Colliders collection '{name}' does not exist; pick one or clear the field")
    meshes = [o for o in coll.all_objects if o.type == "MESH" and o != obj]
    found = [o for o in meshes if any(m.type == "COLLISION" for m in o.modifiers)]
    if meshes and not found:
        raise SkinmodesError(
            f"no object of the Colliders collection '{name}' has Collision physics; "
            "add it in Physics > Collision to the objects that should push the skin"
        )
    return found


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
