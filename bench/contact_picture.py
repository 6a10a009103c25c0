"""The contact section's picture (issue 29): a real character's tail swinging onto a collider, baked in Blender.

The glTF T-Rex (``tests/assets/characters/Trex.glb``, CREDITS.md there) runs
its clip and holds the last pose (``testkit/real_characters.py``): its
five-bone tail swings and, with secondary motion, dips below the lowest point
the rig ever gives it.  A block with Collision physics stands under the tail
tip's footprint, its top a little below that lowest rig point (so the rig
alone never puts the tail in it).  The same scene is baked twice through the
add-on (default settings, a .pc2): without contact and with the block in the
Colliders collection.

Penetration is measured on the render vertices bound mostly to the tail's
last bone: how far below the block's top a vertex is baked while inside its
footprint, counted only where its rig-only position is above the top (where
the rig itself puts skin into a collider, the rig wins and no force acts;
how many vertex-frames of the whole body the rig puts in the block is
reported: 0 here).  It is given in % of the tail tip's thickness: its
largest vertical extent across, at the first frame.

The full run (not ``--quick``) then draws the second picture, a walking
character's arm by its body with Skin on Skin (bench/contact_arm.py), and
returns its figures under ``"arm"``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc

from . import contact_arm
from .contact_bake import baked_positions, rig_positions

CHARACTER = "trex"
PART = "Tail5"  # the tail's last bone
COLLECTION = "Colliders"
# The block's top sits this share of the free tail's overshoot below the rig's lowest tail point:
# the rig never puts the tail in it, the free tail sinks into it.
TOP_SHARE = 0.1
MARGIN = 0.02  # the block's footprint reaches this share of the character's size beyond the tail's


def block_under(rig: np.ndarray, free: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray]:
    """The block's corners lo, hi (3,): under the part's footprint, its top below the part's lowest rig point.

    rig, free: the part's positions (frames, n, 3) rig only and baked without contact; size: the
    character's.  The top is :data:`TOP_SHARE` of the free part's overshoot below the rig's lowest point.
    """
    floor = rig[..., 2].min()
    top = floor - TOP_SHARE * (floor - free[..., 2].min())
    margin = MARGIN * size
    lo = np.array([*(rig[..., :2].min(axis=(0, 1)) - margin), top - 0.2 * size])
    hi = np.array([*(rig[..., :2].max(axis=(0, 1)) + margin), top])
    return lo, hi


def box_collider(bpy: Any, lo: np.ndarray, hi: np.ndarray) -> Any:
    """An axis-aligned box from ``lo`` to ``hi`` (3,) with Collision physics, in collection :data:`COLLECTION`."""
    coll = bpy.data.collections.new(COLLECTION)
    bpy.context.scene.collection.children.link(coll)
    mesh = bpy.data.meshes.new("Block")
    verts = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new("Block", mesh)
    coll.objects.link(obj)
    obj.modifiers.new("Collision", "COLLISION")
    return obj


def penetration(baked: np.ndarray, rig: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:
    """Depth below the box's top (frames, n) of points (frames, n, 3) inside its footprint; 0 elsewhere.

    Points whose rig position is at or below the top are the rig's (zero depth);
    also returns how many point-frames those are.
    """
    inside = np.all((baked[..., :2] > lo[:2]) & (baked[..., :2] < hi[:2]), axis=-1)
    rigs = rig[..., 2] <= hi[2]
    depth = np.where(inside & ~rigs, np.clip(hi[2] - baked[..., 2], 0.0, None), 0.0)
    return depth, int((inside & rigs).sum())


def thickness(points: np.ndarray, bins: int = 12) -> float:
    """The part's largest vertical extent across: points (n, 3) sliced along their longest horizontal axis."""
    span = points[:, :2].max(axis=0) - points[:, :2].min(axis=0)
    along = points[:, int(np.argmax(span))]
    edges = np.linspace(along.min(), along.max(), bins + 1)
    slot = np.clip(np.searchsorted(edges, along, side="right") - 1, 0, bins - 1)
    return float(max(np.ptp(points[slot == b, 2]) for b in range(bins) if np.any(slot == b)))


def run(ctx: Any, work: Path, addon: Any) -> dict:
    """Bake the character without and with the block; the figures, and the plot ``plots/contact_<name>_tail.png``."""
    import bpy

    api = importlib.import_module(addon.__name__ + ".api")
    loaded = rc.load(bpy, rc.spec(CHARACTER))
    obj = loaded.obj
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{CHARACTER}.blend"))
    frames = (loaded.start, loaded.end)
    if ctx.quick:
        frames = (loaded.start, min(loaded.end, loaded.stop + 8))
    part = np.flatnonzero(np.array([rc.dominant_bone(obj, i) for i in range(len(obj.data.vertices))]) == PART)
    body = rig_positions(bpy, obj, frames)
    rig = body[:, part]
    free, summary = baked_positions(bpy, api, obj, frames)
    free = free[:, part]
    lo, hi = block_under(rig, free, float(summary["character_size"]))
    box_collider(bpy, lo, hi)
    obj.skinmodes.colliders = COLLECTION
    hit, summary_on = baked_positions(bpy, api, obj, frames)
    hit = hit[:, part]
    api.clear_bake(obj)
    thick = thickness(rig[0])
    d_free, _ = penetration(free, rig, lo, hi)
    d_hit, _ = penetration(hit, rig, lo, hi)
    rig_in = int(np.all((body > lo) & (body < hi), axis=-1).sum())
    out = {
        "character": CHARACTER,
        "part": PART,
        "vertices": len(obj.data.vertices),
        "part_vertices": int(part.size),
        "sim_vertices": int(api.settings(obj).stat_vertices),
        "frames": list(frames),
        "rig_stops": loaded.stop,
        "size": float(summary["character_size"]),
        "thickness": thick,
        "box": {"lo": lo.tolist(), "hi": hi.tolist()},
        "free_overshoot": float(rig[..., 2].min() - free[..., 2].min()),
        "penetration_pct_off": 100.0 * float(d_free.max()) / thick,
        "penetration_pct_on": 100.0 * float(d_hit.max()) / thick,
        # How close the tail tip comes to the block's top with contact: contact acts on the simulated
        # volume's surface, which encloses the render surface, so the render surface stops short.
        "clearance_pct_on": 100.0 * float(np.nanmin(lowest(hit, lo, hi)) - hi[2]) / thick,
        "rig_inside_point_frames": rig_in,
        "bake_s_off": float(summary["seconds"]),
        "bake_s_on": float(summary_on["seconds"]),
        "nan": bool(np.isnan(hit).any()),
        "messages_on": [str(m) for m in summary_on.get("messages", [])],
    }
    ctx.log(
        f"  contact picture: {CHARACTER}'s tail on a block: penetration {out['penetration_pct_off']:.3g} % of the "
        f"tail's thickness without contact, {out['penetration_pct_on']:.3g} % with (bake {out['bake_s_off']:.2f} s "
        f"/ {out['bake_s_on']:.2f} s)"
    )
    try:
        plot(ctx.plot_path(f"contact_{CHARACTER}_tail"), out, body, (rig, free, hit), (d_free, d_hit))
    except ImportError:  # matplotlib missing: the figures stand without their plot
        ctx.plots.remove(f"plots/contact_{CHARACTER}_tail.png")
    if not ctx.quick:  # the second picture's four bakes (one ~30 s): the full run only
        out["arm"] = contact_arm.run(ctx, work.parent / "arm", addon)
    return out


def lowest(points: np.ndarray, lo, hi) -> np.ndarray:
    """Per frame, the lowest z of points (frames, n, 3) inside the box's footprint (inf where none is)."""
    inside = np.all((points[..., :2] > np.asarray(lo[:2])) & (points[..., :2] < np.asarray(hi[:2])), axis=-1)
    return np.where(inside, points[..., 2], np.inf).min(axis=1)


def plot(path: Path, out: dict, body: np.ndarray, tail: tuple, depths: tuple) -> Path:
    """Side view (y, z) at the free tail's deepest frame, and the tail's lowest point over the frames.

    body: rig-only positions (frames, k, 3) of every vertex; tail: (rig, off, on) positions (frames, n, 3)
    of the part; depths: its penetration (frames, n) off and on.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    f0 = out["frames"][0]
    worst = int(np.argmax(depths[0].max(axis=1)))
    lo, hi = out["box"]["lo"], out["box"]["hi"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.4), width_ratios=[1.3, 1])
    a = int(np.argmax(np.ptp(body[0, :, :2], axis=0)))  # the side view looks across the body's length
    ax.add_patch(Rectangle((lo[a], lo[2]), hi[a] - lo[a], hi[2] - lo[2], color="0.85", label="collider (block)"))
    ax.scatter(body[worst, :, a], body[worst, :, 2], color="0.75", s=1, label="body, rig only")
    colours = ("0.3", "tab:red", "tab:blue")
    labels = ("tail tip, rig only", "tail tip, contact off", "tail tip, contact on")
    for pts, colour, label in zip(tail, colours, labels):
        ax.scatter(pts[worst, :, a], pts[worst, :, 2], color=colour, s=6, label=label)
    ax.set_ylim(min(lo[2], body[..., 2].min()) - 1, body[..., 2].max() + 1)
    ax.set_aspect("equal")
    ax.set_xlabel("xy"[a] + " (scene units)")
    ax.set_ylabel("z")
    ax.set_title(f"side view at frame {f0 + worst}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    frames = np.arange(f0, f0 + len(depths[0]))
    for pts, colour, label in zip(tail, colours, ("rig only", "contact off", "contact on")):
        ax2.plot(frames, lowest(pts, lo, hi), color=colour, label=label)
    ax2.axhline(hi[2], color="0.5", ls="--", lw=0.8, label="the block's top")
    ax2.axvline(out["rig_stops"], color="k", lw=0.8)
    ax2.set_xlabel("frame (line: the rig stops)")
    ax2.set_ylabel("lowest tail-tip point over the block (z)")
    ax2.legend(fontsize=7)
    fig.suptitle(
        f"{out['character']} ({out['vertices']:,} vertices), default settings, baked in Blender: "
        "the tail swings onto a block.  "
        f"Deepest: {out['penetration_pct_off']:.3g} % of the tail's thickness off, "
        f"{out['penetration_pct_on']:.2g} % on "
        "(the rig alone never enters it)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    """``python -m bench.contact_picture [--quick]``: the picture alone, into bench/plots (quick: bench/quick/plots)."""
    import json
    import tempfile

    from .common import BENCH, Context, install_addon

    quick = "--quick" in argv
    ctx = Context(quick=quick, out=BENCH / "quick" if quick else BENCH, peer_python=None)
    with tempfile.TemporaryDirectory(prefix="skinmodes-contact-picture-") as tmp:
        out = run(ctx, Path(tmp) / "scene", install_addon(Path(tmp)))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    import sys

    from testkit.blender_process import run_and_leave

    run_and_leave(main, "skinmodes-contact-picture-")
    sys.exit(0)
