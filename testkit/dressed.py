"""The fox dressed as a studio layers a character (issue 38): a shirt mesh over its torso and an eyeball mesh in
its head, each its own object on the fox's armature.  Used by ``tests/addon/test_whole_character.py`` and the
bench's ``whole_characters`` section.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def dominant_groups(obj: Any) -> np.ndarray:
    """(k,) the name of each vertex's heaviest group ('' for none); one pass at set-up."""
    names = {g.index: g.name for g in obj.vertex_groups}
    return np.array([names[max(v.groups, key=lambda g: g.weight).group] if v.groups else "" for v in obj.data.vertices])


TORSO = {"b_Hip_01", "b_Spine01_02", "b_Spine02_03"}


def dress(bpy: Any, fox: Any, arm: Any, size: float) -> np.ndarray:
    """A studio's layers on the fox, each its own mesh on the fox's armature:

    - "shirt": the torso's faces (spine and hip bones), 0.3 % of the size out along their normals, with the
      fox's weights (a garment fitted over the body, as a cloth layer is modelled);
    - "eyes": a sphere of radius 1 % of the size inside the head, as far from its flesh's centre toward its
      farthest vertex (the snout) as it stays whole inside, bound to the head bone (an eyeball in its socket).
    Returns the shirt's source vertex on the fox for each of its vertices."""
    import bmesh
    import mathutils

    from core.geometry.winding import winding_numbers

    dom = dominant_groups(fox)
    shirt = fox.copy()
    shirt.data = fox.data.copy()
    shirt.name = "shirt"
    shirt.modifiers.clear()
    mod = shirt.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    bpy.context.scene.collection.objects.link(shirt)
    bm = bmesh.new()
    bm.from_mesh(shirt.data)
    bm.verts.ensure_lookup_table()
    source = bm.verts.layers.int.new("source")
    for v in bm.verts:
        v[source] = v.index
    bmesh.ops.delete(bm, geom=[f for f in bm.faces if not all(dom[v.index] in TORSO for v in f.verts)], context="FACES")
    bm.normal_update()
    for v in bm.verts:
        v.co += v.normal * (0.003 * size)
    src = np.array([v[source] for v in bm.verts])
    bm.to_mesh(shirt.data)
    bm.free()
    co = np.array([v.co[:] for v in fox.data.vertices])
    flesh = co[dom == "b_Head_05"]
    centre = flesh.mean(axis=0)
    tip = flesh[np.argmax(np.linalg.norm(flesh - centre, axis=1))]
    mesh = bpy.data.meshes.new("eyes")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=12, v_segments=8, radius=0.01 * size)
    bm.to_mesh(mesh)
    bm.free()
    ball = np.array([v.co[:] for v in mesh.vertices])
    tris = np.array([t.vertices[:] for t in fox.data.loop_triangles])
    # As far toward the snout as the whole ball stays inside the head: where a socket would be.
    head = next(
        p
        for p in (centre + t * (tip - centre) for t in (0.5, 0.4, 0.3, 0.2, 0.1, 0.0))
        if (np.abs(winding_numbers(co, tris, ball + p)) > 0.5).all()
    )
    eyes = bpy.data.objects.new("eyes", mesh)
    bpy.context.scene.collection.objects.link(eyes)
    eyes.matrix_world = fox.matrix_world
    mesh.transform(mathutils.Matrix.Translation(head))
    group = eyes.vertex_groups.new(name="b_Head_05")
    group.add(range(len(mesh.vertices)), 1.0, "REPLACE")
    mod = eyes.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    return src
