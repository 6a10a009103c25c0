"""Build a soft demo creature in Blender: a belly with eyes and a tail, a bone chain, a hopping action.

Used by the README demo, the add-on tests and the in-Blender benchmarks, so
every scene is generated the same way from a few numbers.  Needs ``bpy``.

The mesh is deliberately not clean: the body, the tail and the two eyes are
separate closed parts that overlap (a self-intersecting union), the way real
characters are modelled.  Weights are smooth falloffs along the bone chain,
assigned as vertex groups; the action keys the bones only.
"""

from __future__ import annotations

import math

import bpy
import numpy as np


def uv_sphere(
    segments: int, rings: int, radii: tuple[float, float, float], centre: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """A closed UV ellipsoid: vertices (v, 3) and quads/triangles as index lists."""
    th = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    ph = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    T, P = np.meshgrid(th, ph, indexing="ij")
    V = np.c_[np.sin(T).ravel() * np.cos(P).ravel(), np.sin(T).ravel() * np.sin(P).ravel(), np.cos(T).ravel()]
    V = np.vstack([V, [[0, 0, 1], [0, 0, -1]]]) * np.asarray(radii) + np.asarray(centre)
    ring = np.arange(segments)
    faces = []
    for i in range(rings - 2):
        a, b = i * segments + ring, i * segments + (ring + 1) % segments
        faces += np.stack([a, a + segments, b + segments, b], axis=1).tolist()
    top, bottom = len(V) - 2, len(V) - 1
    faces += [[top, j, (j + 1) % segments] for j in ring]
    last = (rings - 2) * segments
    faces += [[bottom, last + (j + 1) % segments, last + j] for j in ring]
    return V, faces


def tube(
    segments: int, rings: int, length: float, r0: float, r1: float, start: tuple[float, float, float]
) -> tuple[np.ndarray, list[list[int]]]:
    """A closed tapered tube along -y (the tail), capped at both ends."""
    t = np.linspace(0.0, 1.0, rings)
    ph = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    Tt, P = np.meshgrid(t, ph, indexing="ij")
    r = r0 + (r1 - r0) * Tt
    V = np.c_[
        (r * np.cos(P)).ravel(), (-length * Tt).ravel(), (r * np.sin(P)).ravel() + 0.25 * length * Tt.ravel() ** 2
    ]
    V = V + np.asarray(start)
    ring = np.arange(segments)
    faces = []
    for i in range(rings - 1):
        a, b = i * segments + ring, i * segments + (ring + 1) % segments
        faces += np.stack([a, b, b + segments, a + segments], axis=1).tolist()
    V = np.vstack([V, [start], [V[-segments:].mean(axis=0)]])
    c0, c1 = len(V) - 2, len(V) - 1
    faces += [[c0, (j + 1) % segments, j] for j in ring]
    last = (rings - 1) * segments
    faces += [[c1, last + j, last + (j + 1) % segments] for j in ring]
    return V, faces


BONES = (
    ("body", (0.0, 0.35, 0.45), (0.0, -0.1, 0.45)),
    ("tail.1", (0.0, -0.1, 0.45), (0.0, -0.45, 0.5)),
    ("tail.2", (0.0, -0.45, 0.5), (0.0, -0.8, 0.6)),
    ("tail.3", (0.0, -0.8, 0.6), (0.0, -1.15, 0.75)),
)


def segment_distance(P: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ab = b - a
    t = np.clip((P - a) @ ab / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(P - (a + t[:, None] * ab), axis=1)


def chain_weights(P: np.ndarray) -> np.ndarray:
    """Smooth weights (v, 4) from distances to the bone segments, normalised, small ones dropped."""
    d = np.stack([segment_distance(P, np.array(h), np.array(t)) for _, h, t in BONES], axis=1)
    w = np.exp(-((d / 0.12) ** 2))
    w[w < 0.02 * w.max(axis=1, keepdims=True)] = 0.0
    return w / w.sum(axis=1, keepdims=True)


def build_creature(
    detail: int = 24, frames: tuple[int, int] = (1, 48), name: str = "Creature", hop: float = 0.25
) -> tuple[bpy.types.Object, bpy.types.Object]:
    """Create the creature in the current scene; returns (mesh object, armature object).

    detail: segments around the body (rings scale with it); 24 gives about
    1.4k vertices, 96 about 22k.  frames: the action's range, also set as the
    scene range.
    """
    scene = bpy.context.scene
    parts = [
        uv_sphere(detail, detail // 2 + 2, (0.42, 0.5, 0.4), (0.0, 0.1, 0.45)),  # belly
        tube(max(8, detail // 2), max(6, detail // 2), 1.2, 0.16, 0.05, (0.0, -0.15, 0.45)),  # tail
        uv_sphere(max(8, detail // 3), max(6, detail // 4), (0.07, 0.07, 0.07), (0.17, 0.52, 0.68)),  # eyes
        uv_sphere(max(8, detail // 3), max(6, detail // 4), (0.07, 0.07, 0.07), (-0.17, 0.52, 0.68)),
    ]
    verts, faces, offset = [], [], 0
    for V, F in parts:
        verts.append(V)
        faces += [[i + offset for i in f] for f in F]
        offset += len(V)
    V = np.vstack(verts)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(V.tolist(), [], faces)
    mesh.validate()
    for poly in mesh.polygons:
        poly.use_smooth = True
    obj = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(obj)

    arm_data = bpy.data.armatures.new(name + "Rig")
    arm = bpy.data.objects.new(name + "Rig", arm_data)
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for bone_name, head, tail in BONES:
        eb = arm_data.edit_bones.new(bone_name)
        eb.head, eb.tail = head, tail
        if parent is not None:
            eb.parent, eb.use_connect = parent, bone_name != "tail.1"
        parent = eb
    bpy.ops.object.mode_set(mode="OBJECT")

    W = chain_weights(V)
    for j, (bone_name, _, _) in enumerate(BONES):
        vg = obj.vertex_groups.new(name=bone_name)
        levels = np.round(W[:, j] * 1000).astype(np.int64)  # one add() per weight level, not per vertex
        for level in np.unique(levels[levels > 0]):
            vg.add(np.flatnonzero(levels == level).tolist(), float(level) / 1000.0, "REPLACE")
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    obj.parent = arm

    # A hop: the body rises and tilts, the tail lags behind in a wave.
    start, end = frames
    scene.frame_start, scene.frame_end = start, end
    pose = arm.pose.bones
    for pb in pose:
        pb.rotation_mode = "XYZ"
    period = max(12, (end - start) // 2)
    for f in range(start, end + 1, 3):
        phase = 2.0 * math.pi * (f - start) / period
        # The whole rig hops (object motion leaks momentum too) and the body tilts.
        arm.location = (0.0, 0.0, hop * max(0.0, math.sin(phase)))
        arm.keyframe_insert("location", frame=f)
        pose["body"].rotation_euler = (0.25 * math.sin(phase), 0.0, 0.15 * math.sin(0.5 * phase))
        pose["body"].keyframe_insert("rotation_euler", frame=f)
        for k, bone in enumerate(("tail.1", "tail.2", "tail.3")):
            pose[bone].rotation_euler = (0.0, 0.0, 0.45 * math.sin(phase - 0.9 * (k + 1)))
            pose[bone].keyframe_insert("rotation_euler", frame=f)
    scene.frame_set(start)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj, arm
