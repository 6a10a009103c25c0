"""Helpers shared by the add-on tests (reading evaluated positions, fingerprints)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def run_cli(dev_zip, tmp_path, *args):
    """``python -m tools.skinmodes_cli ARGS``, the add-on installed from ``dev_zip`` into a profile under tmp_path."""
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "profile"), OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "tools.skinmodes_cli", "--install", str(dev_zip), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def evaluated(bpy, obj):
    """Object-space evaluated positions (k, 3) of ``obj`` at the current frame."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def flatten(obj, z=0.0):
    """Move every vertex of ``obj``'s mesh to height ``z``: a flat card, which meshing refuses."""
    co = np.empty(len(obj.data.vertices) * 3)
    obj.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[:, 2] = z
    obj.data.vertices.foreach_set("co", co.ravel())
    obj.data.update()


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


def rna_values(struct, skip=()):
    """Every writable property of a Blender struct (hidden ones too) as comparable plain values.

    Pointers are compared by name, arrays as tuples; read-only properties
    (evaluation timings, runtime ids) and collections are left out.
    """
    out = []
    for prop in struct.bl_rna.properties:
        name = prop.identifier
        if name == "rna_type" or name in skip or prop.is_readonly or prop.type == "COLLECTION":
            continue
        value = getattr(struct, name)
        if prop.type == "POINTER":
            value = getattr(value, "name", None)
        elif isinstance(value, set):
            value = tuple(sorted(value))
        elif hasattr(value, "__len__") and not isinstance(value, str):
            value = tuple(value)
        out.append((name, value))
    return tuple(out)


def modifiers_fingerprint(obj):
    """The modifier stack: order, names, types and every setting of each modifier."""
    return tuple((m.name, m.type, rna_values(m)) for m in obj.modifiers)


def settings_fingerprint(obj):
    """Every skinmodes property of the object, the hidden status ones included."""
    return rna_values(obj.skinmodes)


def shape_keys_fingerprint(bpy, obj):
    """The object's shape keys (names, values, settings and positions), their action and Blender's Key count."""
    keys = obj.data.shape_keys
    if keys is None:
        return None, obj.active_shape_key_index, len(bpy.data.shape_keys)
    blocks = []
    for kb in keys.key_blocks:
        co = np.empty(3 * len(kb.data))
        kb.data.foreach_get("co", co)
        blocks.append((kb.name, rna_values(kb), hashlib.sha1(co.tobytes()).hexdigest()))
    ad = keys.animation_data
    action = ad.action.name if ad is not None and ad.action is not None else None
    return tuple(blocks), action, obj.active_shape_key_index, len(bpy.data.shape_keys)


def data_fingerprint(bpy):
    """Names and user counts of the data-blocks a bake may add: actions, shape-key sets, node groups."""
    return tuple(
        tuple(sorted((d.name, d.users) for d in collection))
        for collection in (bpy.data.actions, bpy.data.shape_keys, bpy.data.node_groups)
    )


def full_fingerprint(bpy, obj):
    """Everything a failed or cancelled bake must leave as it was, on the Blender side."""
    return (
        scene_fingerprint(bpy, obj),
        modifiers_fingerprint(obj),
        settings_fingerprint(obj),
        shape_keys_fingerprint(bpy, obj),
        data_fingerprint(bpy),
    )


def disk_fingerprint(*folders):
    """Every file under the folders (hidden ones included): relative path -> SHA-1 of its bytes."""
    out = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                out[str(path.relative_to(folder))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return out


def differences(before, after, where="state"):
    """Where two fingerprints differ, as readable lines (empty when they are equal)."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out = [
            f"{where}[{k!r}]: {before.get(k, '<absent>')!r} -> {after.get(k, '<absent>')!r}"
            for k in sorted(set(before) | set(after), key=str)
            if before.get(k) != after.get(k)
        ]
        return out
    if isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after):
        return [line for i, (a, b) in enumerate(zip(before, after)) for line in differences(a, b, f"{where}[{i}]")]
    return [f"{where}: {before!r} -> {after!r}"]
