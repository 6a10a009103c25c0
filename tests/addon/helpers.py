"""Helpers shared by the add-on tests (reading evaluated positions, fingerprints)."""

from __future__ import annotations

import hashlib

import numpy as np


def evaluated(bpy, obj):
    """Object-space evaluated positions (k, 3) of ``obj`` at the current frame."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def actions_fingerprint(bpy):
    """A hash of every action's keyframes: proves nobody touched the user's animation."""
    h = hashlib.sha1()
    for action in sorted(bpy.data.actions, key=lambda a: a.name):
        h.update(action.name.encode())
        curves = list(getattr(action, "fcurves", []) or [])
        for layer in getattr(action, "layers", []):
            for strip in layer.strips:
                for bag in getattr(strip, "channelbags", []):
                    curves.extend(bag.fcurves)
        for fc in sorted(curves, key=lambda c: (c.data_path, c.array_index)):
            pts = np.empty(len(fc.keyframe_points) * 2)
            fc.keyframe_points.foreach_get("co", pts)
            h.update(fc.data_path.encode() + pts.tobytes())
    return h.hexdigest()


def scene_fingerprint(bpy, obj):
    """What a cancelled bake must leave unchanged: modifiers, shape keys, settings, frame, attributes."""
    keys = obj.data.shape_keys
    s = obj.skinmodes
    return (
        tuple((m.name, m.type, m.show_viewport) for m in obj.modifiers),
        tuple(kb.name for kb in keys.key_blocks) if keys else (),
        tuple(a.name for a in obj.data.attributes),
        (s.bake_kind, s.bake_file, s.bake_key, s.live_preview, s.use_scene_range, s.frame_start, s.frame_end),
        bpy.context.scene.frame_current,
        actions_fingerprint(bpy),
        len(bpy.data.actions),
        len(bpy.data.node_groups),
    )
