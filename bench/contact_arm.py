"""The contact section's second picture (issue 29): a real character's arm swinging by its body, Skin on Skin.

The glTF Cesium Man (``tests/assets/characters/CesiumMan.glb``, CREDITS.md
there, imported at x100) walks its clip and holds the last pose
(``testkit/real_characters.py``): his arms swing past his hips.  The scene
is baked through the add-on (a .pc2) without contact and with **Skin on
Skin**, first with the default settings, then with the softest end of the
Wobble slider (:data:`SOFT`), where the jiggle is largest.

The arm is the render vertices bound mostly to the forearm and hand bones
(:data:`ARM`); the body is every vertex outside the arm's chain
(:data:`CHAIN`: the upper arm joins the body at the shoulder, so it is left
out of both).  Per frame, the gap is the least distance from an arm vertex to
a body vertex, and the penetration of an arm vertex is how far it lies behind
the body's surface: the least depth behind the tangent planes of its
:data:`NEAREST` nearest body vertices, counted where the nearest is closer
than the forearm's thickness.  Penetration
the rig itself gives (the rig wins: no force acts there) is reported apart;
the baked penetration counts only vertices the rig keeps outside.  Figures
are in % of the forearm's thickness and of the character's size.  How much
free secondary motion survives contact: the arm's largest and mean offset
from the rig with contact on over the same without.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from testkit import real_characters as rc

from .contact_bake import baked_positions, rig_positions

CHARACTER = "cesium_man_x100"
ARM = ("Node_14", "Node_15")  # the left forearm and hand
CHAIN = ("Node_13", *ARM)  # with the upper arm, which meets the body at the shoulder
NEAREST = 4  # body vertices whose tangent planes judge inside
SOFT = {"wobble_hz": 0.5}  # the Wobble slider's soft end (default 3 Hz): the largest jiggle


def vertex_normals(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Unit area-weighted vertex normals (k, 3) of points (k, 3) on triangles (t, 3)."""
    face = np.cross(points[tris[:, 1]] - points[tris[:, 0]], points[tris[:, 2]] - points[tris[:, 0]])
    n = np.zeros_like(points)
    for c in range(3):
        np.add.at(n, tris[:, c], face)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)


def gap_and_depth(points: np.ndarray, tris: np.ndarray, arm: np.ndarray, body: np.ndarray, reach: float):
    """Per frame the least arm-to-body distance (frames,) and each arm vertex's depth (frames, n) behind the body.

    points: (frames, k, 3); arm, body: vertex indices.  The depth is the least over the :data:`NEAREST`
    nearest body vertices of how far the arm vertex lies behind each one's tangent plane (a point
    inside is behind them all; one beside a curved surface is behind only some), counted only where
    the nearest is within ``reach`` (farther, the tangent planes say nothing about inside).
    """
    gaps, depths = [], []
    for P in points:
        dist, j = cKDTree(P[body]).query(P[arm], k=NEAREST)
        q = body[j]
        behind = -np.einsum("ijk,ijk->ij", P[arm][:, None] - P[q], vertex_normals(P, tris)[q])
        gaps.append(dist[:, 0].min())
        depths.append(np.where(dist[:, 0] < reach, np.clip(behind.min(axis=1), 0.0, None), 0.0))
    return np.array(gaps), np.array(depths)


def arm_thickness(points: np.ndarray) -> float:
    """Twice the median distance of the part's points (n, 3) from their principal axis."""
    c = points - points.mean(axis=0)
    axis = np.linalg.svd(c, full_matrices=False)[2][0]
    return float(2.0 * np.median(np.linalg.norm(c - np.outer(c @ axis, axis), axis=1)))


def bake_pair(bpy: Any, api: Any, obj: Any, frames: tuple[int, int], settings: dict) -> tuple:
    """Bake with ``settings`` without and with Skin on Skin: positions (frames, k, 3) off, on, and the summaries."""
    props = obj.skinmodes
    for key, value in settings.items():
        setattr(props, key, value)
    props.self_contact = False
    off, s_off = baked_positions(bpy, api, obj, frames)
    props.self_contact = True
    on, s_on = baked_positions(bpy, api, obj, frames)
    props.self_contact = False
    api.clear_bake(obj)
    return off, on, s_off, s_on


def figures(rig, off, on, tris, arm, body, size) -> tuple[dict, tuple]:
    """The case's figures, and its curves (gaps rig/off/on (frames,), depths off/on (frames, n))."""
    thick = arm_thickness(rig[0, arm])
    (g_rig, d_rig), (g_off, d_off), (g_on, d_on) = (gap_and_depth(P, tris, arm, body, thick) for P in (rig, off, on))
    mine = d_rig == 0.0  # where the rig keeps the arm outside: what the jiggle adds
    d_off, d_on = np.where(mine, d_off, 0.0), np.where(mine, d_on, 0.0)
    move_off = np.linalg.norm(off[:, arm] - rig[:, arm], axis=2)
    move_on = np.linalg.norm(on[:, arm] - rig[:, arm], axis=2)
    pct = 100.0 / thick
    out = {
        "thickness": thick,
        "gap_pct_size": {k: 100.0 * float(g.min()) / size for k, g in (("rig", g_rig), ("off", g_off), ("on", g_on))},
        "rig_penetration_pct": pct * float(d_rig.max()),
        "penetration_pct_off": pct * float(d_off.max()),
        "penetration_pct_on": pct * float(d_on.max()),
        "penetration_pct_size_off": 100.0 * float(d_off.max()) / size,
        "penetration_pct_size_on": 100.0 * float(d_on.max()) / size,
        "free_offset_pct_size": 100.0 * float(move_off.max()) / size,
        "kept_max_pct": 100.0 * float(move_on.max() / max(move_off.max(), 1e-30)),
        "kept_mean_pct": 100.0 * float(move_on.mean() / max(move_off.mean(), 1e-30)),
        "nan": bool(np.isnan(on).any()),
    }
    return out, ((g_rig, g_off, g_on), (d_off, d_on))


def run(ctx: Any, work: Path, addon: Any) -> dict:
    """Bake the character with defaults and with :data:`SOFT`, each without and with Skin on Skin; the plot."""
    import bpy

    api = importlib.import_module(addon.__name__ + ".api")
    loaded = rc.load(bpy, rc.spec(CHARACTER))
    obj = loaded.obj
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{CHARACTER}.blend"))
    frames = (loaded.start, loaded.end)
    dom = np.array([rc.dominant_bone(obj, i) for i in range(len(obj.data.vertices))])
    arm, body = np.flatnonzero(np.isin(dom, ARM)), np.flatnonzero(~np.isin(dom, CHAIN))
    obj.data.calc_loop_triangles()
    tris = np.array([tuple(t.vertices) for t in obj.data.loop_triangles])
    rig = rig_positions(bpy, obj, frames)
    out: dict = {
        "character": CHARACTER,
        "part": "arm",
        "vertices": len(obj.data.vertices),
        "arm_vertices": int(arm.size),
        "frames": list(frames),
        "rig_stops": loaded.stop,
        "soft_settings": dict(SOFT),
    }
    curves = {}
    for name, settings in (("default", {}), ("soft", SOFT)):
        off, on, s_off, s_on = bake_pair(bpy, api, obj, frames, settings)
        size = float(s_off["character_size"])
        out[name], curves[name] = figures(rig, off, on, tris, arm, body, size)
        out[name].update(bake_s_off=float(s_off["seconds"]), bake_s_on=float(s_on["seconds"]))
        curves[name] += ((off, on),)
        out["size"] = size
    out["sim_vertices"] = int(api.settings(obj).stat_vertices)
    for name in ("default", "soft"):
        c = out[name]
        ctx.log(
            f"  contact picture: {CHARACTER}'s arm by its body ({name}): closest {c['gap_pct_size']['off']:.3g} % of "
            f"size off, {c['gap_pct_size']['on']:.3g} % on; penetration {c['penetration_pct_off']:.3g} % of the "
            f"forearm's thickness off, {c['penetration_pct_on']:.3g} % on; motion kept {c['kept_max_pct']:.3g} %"
        )
    try:
        plot(ctx.plot_path(f"contact_{CHARACTER}_arm"), out, rig, arm, curves["soft"])
    except ImportError:  # matplotlib missing: the figures stand without their plot
        ctx.plots.remove(f"plots/contact_{CHARACTER}_arm.png")
    return out


def plot(path: Path, out: dict, rig: np.ndarray, arm: np.ndarray, curves: tuple) -> Path:
    """Top view (x, y) of the arm and the body's slice at its height at the free arm's
    deepest frame; the gap and the penetration over the frames.

    rig: rig-only positions (frames, k, 3); arm: its indices; curves: gaps (rig, off, on) (frames,),
    depths (off, on) (frames, n) and baked positions (off, on) (frames, k, 3), for the soft case.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gaps, depths, (off, on) = curves
    size, thick = out["size"], out["soft"]["thickness"]
    worst = int(np.argmax(depths[0].max(axis=1)))
    f0 = out["frames"][0]
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 5.2), width_ratios=[1, 1.1, 1.1])
    # A top view of the body's slice at the arm's height: the arm beside the hip, not in front of it.
    z = rig[worst, arm, 2]
    band = (rig[worst, :, 2] > z.min()) & (rig[worst, :, 2] < z.max())
    band[arm] = False
    ax.scatter(rig[worst, band, 0], rig[worst, band, 1], color="0.75", s=2, label="body at the arm's height, rig only")
    for pts, colour, size_, label in zip(
        (off, on, rig), ("tab:red", "tab:blue", "0.2"), (6, 6, 2), ("contact off", "Skin on Skin", "rig only")
    ):
        ax.scatter(pts[worst, arm, 0], pts[worst, arm, 1], color=colour, s=size_, label=f"forearm + hand, {label}")
    ax.set_aspect("equal")
    ax.set_xlabel("x (scene units)")
    ax.set_ylabel("y")
    ax.set_title(f"top view at frame {f0 + worst} (deepest, Wobble {SOFT['wobble_hz']} Hz)", fontsize=9)
    ax.legend(fontsize=7)
    frames = np.arange(f0, f0 + len(gaps[0]))
    for g, colour, label in zip(gaps, ("0.3", "tab:red", "tab:blue"), ("rig only", "contact off", "Skin on Skin")):
        ax2.plot(frames, 100.0 * g / size, color=colour, label=label)
    ax2.axvline(out["rig_stops"], color="k", lw=0.8)
    ax2.set_xlabel("frame (line: the rig stops)")
    ax2.set_ylabel("least forearm/hand-to-body distance (% of size)")
    ax2.legend(fontsize=7)
    for d, colour, label in zip(depths, ("tab:red", "tab:blue"), ("contact off", "Skin on Skin")):
        ax3.plot(frames, 100.0 * d.max(axis=1) / thick, color=colour, label=label)
    ax3.axvline(out["rig_stops"], color="k", lw=0.8)
    ax3.set_xlabel("frame (line: the rig stops)")
    ax3.set_ylabel("deepest forearm/hand vertex in the body (% of its thickness)")
    ax3.legend(fontsize=7)
    d, s = out["default"], out["soft"]
    fig.suptitle(
        f"{out['character']} ({out['vertices']:,} vertices) walking, baked in Blender.  Closest the free arm comes "
        f"to the body: {d['gap_pct_size']['off']:.2g} % of size (defaults), {s['gap_pct_size']['off']:.2g} % "
        f"(Wobble {SOFT['wobble_hz']} Hz).\nPenetration the jiggle adds: {d['penetration_pct_off']:.2g} / "
        f"{s['penetration_pct_off']:.2g} % of the forearm's thickness off, {d['penetration_pct_on']:.2g} / "
        f"{s['penetration_pct_on']:.2g} % with Skin on Skin; the rig's own: {s['rig_penetration_pct']:.2g} %",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    """``python -m bench.contact_arm``: the picture alone, into bench/plots."""
    import json
    import tempfile

    from .common import BENCH, Context, install_addon

    ctx = Context(quick=False, out=BENCH, peer_python=None)
    with tempfile.TemporaryDirectory(prefix="skinmodes-contact-arm-") as tmp:
        out = run(ctx, Path(tmp) / "scene", install_addon(Path(tmp)))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    import sys

    from testkit.blender_process import run_and_leave

    run_and_leave(main, "skinmodes-contact-arm-")
    sys.exit(0)


def report_lines(c: dict | None) -> list[str]:
    """The second picture's paragraph for the bench report (``c``: :func:`run`'s figures; none in a quick run)."""
    if not c:
        return []
    d, s = c["default"], c["soft"]
    return [
        f"A real character's arm by its body (bench/contact_arm.py): the glTF {c['character']} walking "
        f"({c['vertices']:,} render vertices, {c['sim_vertices']:,} simulated, frames {c['frames'][0]}–"
        f"{c['frames'][1]}), forearm and hand ({c['arm_vertices']} vertices) against the rest of the body.  "
        f"Defaults: closest {d['gap_pct_size']['off']:.2g} % of the size (rig {d['gap_pct_size']['rig']:.2g} %), "
        f"penetration {d['penetration_pct_off']:.2g} % of the forearm's thickness without contact, "
        f"{d['penetration_pct_on']:.2g} % with Skin on Skin.  Wobble {c['soft_settings']['wobble_hz']} Hz: "
        f"{s['penetration_pct_off']:.3g} % without ({s['penetration_pct_size_off']:.2g} % of the size), "
        f"{s['penetration_pct_on']:.2g} % with; the rig's own {s['rig_penetration_pct']:.2g} %; largest free "
        f"offset kept {s['kept_max_pct']:.3g} % (mean {s['kept_mean_pct']:.3g} %); bake {s['bake_s_off']:.2f} s "
        f"without, {s['bake_s_on']:.2f} s with.",
        "",
        f"![the {c['character']}'s arm by its body](plots/contact_{c['character']}_arm.png)",
        "",
    ]
