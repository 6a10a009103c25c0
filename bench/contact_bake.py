"""Baking a real character through the add-on for the contact pictures (issue 29), and its rig-only positions.

Both pictures (bench/contact_picture.py, bench/contact_arm.py) compare the
render vertices' world positions baked to a .pc2 against the mesh evaluated
with the bake's cache modifier off (the rig alone).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.io.pc2 import read_pc2
from testkit import real_characters as rc


def rig_positions(bpy: Any, obj: Any, frames: tuple[int, int]) -> np.ndarray:
    """World positions (frames, k, 3) of the render vertices, rig only (no cache modifier active)."""
    scene = bpy.context.scene
    cache = obj.modifiers.get("Skinmodes Cache")
    if cache is not None:
        cache.show_viewport = False
    out = []
    for f in range(frames[0], frames[1] + 1):
        scene.frame_set(f)
        out.append(rc._world_positions(bpy, obj))
    if cache is not None:
        cache.show_viewport = True
    scene.frame_set(frames[0])
    return np.array(out)


def baked_positions(bpy: Any, api: Any, obj: Any, frames: tuple[int, int]) -> tuple[np.ndarray, dict]:
    """Bake ``frames`` to a .pc2 (after clearing any earlier bake); world positions (frames, k, 3) and the summary."""
    api.clear_bake(obj)
    summary = api.bake(obj, frames=frames, output="PC2")
    samples, _start, _ = read_pc2(summary["files"][0])
    scene = bpy.context.scene
    out = []
    for i, f in enumerate(range(frames[0], frames[1] + 1)):
        scene.frame_set(f)
        M = rc._object_to_world(bpy, obj)
        out.append(samples[i].astype(np.float64) @ M[:3, :3].T + M[:3, 3])
    scene.frame_set(frames[0])
    return np.array(out), summary
