"""The README's picture of an object without an armature jiggling: a real bake in Blender (issue 27).

    .venvs/main/bin/python -m bench.rs_object_strip [--out bench/plots/object_jiggle_strip.png]

A jelly bar (a cube subdivided 7 times, 386 vertices, 2 x 0.5 x 0.5 m) has only a keyed transform: a
quarter turn about Z and 1 m along X over frames 1-7 (linear keys: it stops dead), then held to frame
30.  It is baked twice through the add-on's own operator, with the add-on's default settings and
Subspace Skinning Eigenmodes (the default), then Rotation-Strain; the strip shows both from above at a
few frames where the whip ends, grey where the object's transform alone puts the mesh, coloured where
the bake does, and below it each bake's largest offset from the transform alone, frame by frame.
The add-on is installed into a throw-away Blender profile first.
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
from pathlib import Path

import numpy as np

from testkit.blender_process import run_and_leave
from testkit.real_characters import install_addon

from .common import BENCH

START, WHIP, END = 1, 7, 30
STRIP = (6, 7, 8, 9, 10, 12, 14, 17, 22)  # from the last frames of the whip, when the flesh is flung


def jelly(bpy, addon, cache: Path):
    """The whipped bar (module doc), its keys linear, its cache in ``cache``."""
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    obj = bpy.context.active_object
    obj.name = "Jelly"
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=7)
    bpy.ops.object.mode_set(mode="OBJECT")
    co = np.empty(3 * len(obj.data.vertices))
    obj.data.vertices.foreach_get("co", co)
    obj.data.vertices.foreach_set("co", (co.reshape(-1, 3) * [2.0, 0.5, 0.5]).ravel())
    obj.data.update()
    obj.rotation_mode = "XYZ"
    for frame, angle, x in ((START, 0.0, 0.0), (WHIP, math.pi / 2, 1.0), (END, math.pi / 2, 1.0)):
        obj.location = (x, 0.0, 0.0)
        obj.rotation_euler = (0.0, 0.0, angle)
        obj.keyframe_insert("location", frame=frame)
        obj.keyframe_insert("rotation_euler", frame=frame)
    for curve in addon.character.fcurves_of(obj.animation_data.action):  # 4.x and layered 5.x actions
        for key in curve.keyframe_points:
            key.interpolation = "LINEAR"
    s = obj.skinmodes
    s.cache_dir = str(cache) + "/"
    s.use_scene_range = False
    s.frame_start, s.frame_end = START, END
    return obj


def world(bpy, obj, frames) -> np.ndarray:
    """(f, k, 3) world positions of the evaluated mesh."""
    out = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        co = np.empty(3 * len(ev.data.vertices))
        ev.data.vertices.foreach_get("co", co)
        M = np.array(ev.matrix_world)
        out.append(co.reshape(-1, 3) @ M[:3, :3].T + M[:3, 3])
    return np.asarray(out)


def bake_both(work: Path) -> dict[str, np.ndarray]:
    """World positions (frames, k, 3) over START..END: the object's transform alone, and each method's bake."""
    addon = install_addon(work)
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    obj = jelly(bpy, addon, work / "cache")
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "jelly.blend"))
    frames = range(START, END + 1)
    out = {"transform only": world(bpy, obj, frames)}
    for method, label in (("SKINNING", "skinning eigenmodes"), ("ROTATION_STRAIN", "rotation-strain")):
        obj.skinmodes.subspace_method = method
        assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
        out[label] = world(bpy, obj, frames)
        assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    return out


def plot(pos: dict[str, np.ndarray], path: Path) -> dict[str, float]:
    """The strip (rows: methods; columns: STRIP frames, from above, zoomed on where the whip ends) and each
    method's largest offset from the transform alone per frame; returns each method's largest offset (m)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rigid = pos["transform only"]
    methods = [k for k in pos if k != "transform only"]
    fig = plt.figure(figsize=(1.5 * len(STRIP), 2.0 * len(methods) + 2.2))
    grid = fig.add_gridspec(len(methods) + 1, len(STRIP), height_ratios=[1.0] * len(methods) + [1.1])
    end = rigid[WHIP - START, :, :2]
    lo, hi = end.min(axis=0) - 0.2, end.max(axis=0) + 0.2
    offsets = {}
    colours = dict(zip(methods, ("tab:blue", "tab:orange")))
    for row, method in enumerate(methods):
        for col, f in enumerate(STRIP):
            ax = fig.add_subplot(grid[row, col])
            i = f - START
            ax.plot(rigid[i, :, 0], rigid[i, :, 1], "o", ms=3, color="0.8")
            ax.plot(pos[method][i, :, 0], pos[method][i, :, 1], ".", ms=1.5, color=colours[method])
            ax.set(xlim=(lo[0], hi[0]), ylim=(lo[1], hi[1]), xticks=[], yticks=[], aspect="equal")
            if row == 0:
                ax.set_title(f"frame {f}", fontsize=8)
            if col == 0:
                ax.set_ylabel(method, fontsize=8)
    ax = fig.add_subplot(grid[len(methods), :])
    frames = np.arange(START, START + len(rigid))
    for method in methods:
        d = np.linalg.norm(pos[method] - rigid, axis=2).max(axis=1)
        offsets[method] = float(d.max())
        ax.plot(frames, 100 * d, "-o", ms=3, color=colours[method], label=method)
    ax.axvspan(START, WHIP, color="0.92", label="the keyed whip")
    ax.set_xlabel("frame (24 fps)")
    ax.set_ylabel("largest offset [cm]")
    ax.legend(fontsize=8)
    fig.suptitle(
        "A 2 m bar with no armature, keyed: a quarter turn and 1 m in frames 1-7, then still.  Top view, grey: "
        "its transform alone; a real bake with the default settings",
        fontsize=9,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return offsets


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=BENCH / "plots" / "object_jiggle_strip.png")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="skinmodes-object-strip-"))
    try:
        offsets = plot(bake_both(work), args.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = math.sqrt(2.0**2 + 0.5**2 + 0.5**2)
    for method, d in offsets.items():
        print(f"{method}: largest offset {d:.3f} m ({100 * d / size:.1f} % of the bar's diagonal)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-object-strip-profile-")
