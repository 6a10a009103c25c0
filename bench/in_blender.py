"""Section 5: inside Blender — bake throughput, live-preview cost, and Soft Body for context.

One creature (about 10k render vertices at full size, 4-bone chain, hopping
armature object) over 250 frames, everything in the same process and run:

* ``frame_set``: Blender's own evaluation of those frames, a plain loop over
  ``scene.frame_set(f)`` (the add-on's preview and outputs off).
* ``frame_set + read``: the same loop reading the evaluated (armature-
  deformed) positions, which is what any exporter or cache writer pays.
* ``bake``: "Bake Secondary Motion" to a .pc2 with the subspace already
  prepared (preparation, a one-off per character, is timed on its own).
* ``preview``: the frame loop with Live Preview on, first pass (simulating
  forward) and a second pass over the cached states; its cost per frame is
  the difference to the plain loop.
* ``soft body``: Blender's built-in Soft Body on a copy of the same mesh and
  armature, evaluated over the same frames (which is its bake).

The add-on is installed from a freshly built package into a throw-away user
profile, exactly as a user installs it.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path

import numpy as np

from .common import Context, Timing, in_scratch_folder, install_addon

FRAMES_FULL = 250


def _frame_loop(scene, frames: range, read=None) -> float:
    t0 = time.perf_counter()
    for f in frames:
        scene.frame_set(f)
        if read is not None:
            read()
    return time.perf_counter() - t0


def _repeat(fn, repeats: int) -> Timing:
    return Timing.of([fn() for _ in range(repeats)])


def run(ctx: Context) -> dict:
    return in_scratch_folder("skinmodes-bench-blend-", lambda work: _run(ctx, work))


def _run(ctx: Context, work: Path) -> dict:
    addon = install_addon(work)
    import bpy

    from testkit.creature import build_creature

    api = importlib.import_module(addon.__name__ + ".api")
    character = importlib.import_module(addon.__name__ + ".character")

    frames_n = 24 if ctx.quick else FRAMES_FULL
    detail = 16 if ctx.quick else 105  # about 10k render vertices
    repeats = 2 if ctx.quick else 3
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    obj, arm = build_creature(detail=detail, frames=(1, frames_n))
    scene = bpy.context.scene
    s = obj.skinmodes
    s.cache_dir = str(work / "cache") + "/"
    s.material_preset = "JELLY"
    if ctx.quick:
        s.target_tets, s.modes, s.clusters = 3000, 8, 30
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "bench.blend"))
    frames = range(1, frames_n + 1)
    k = len(obj.data.vertices)
    ctx.log(f"  blender: creature with {k} vertices, {frames_n} frames, substeps {s.substeps}")

    # One-off preparation (tetrahedralise, modes, clusters), then the cache holds it.
    t0 = time.perf_counter()
    stats = api.compute_modes(obj)
    prepare_s = time.perf_counter() - t0

    buf = np.empty(3 * k)

    def read() -> None:
        character.evaluated_coordinates(obj, bpy.context.evaluated_depsgraph_get(), buf)

    frame_set = _repeat(lambda: _frame_loop(scene, frames), repeats)
    frame_read = _repeat(lambda: _frame_loop(scene, frames, read), repeats)

    def bake_once() -> float:
        api.clear_bake(obj)
        t = time.perf_counter()
        api.bake(obj, frames=(frames[0], frames[-1]), output="PC2")
        return time.perf_counter() - t

    bake = _repeat(bake_once, repeats)
    api.clear_bake(obj)

    # Live preview: the first pass simulates, the second replays cached states.
    s.live_preview = True
    first = _frame_loop(scene, frames)
    replay = _repeat(lambda: _frame_loop(scene, frames), repeats)
    backwards = _frame_loop(scene, range(frames[-1], frames[0] - 1, -1))
    s.live_preview = False

    soft = _soft_body(bpy, obj, arm, scene, frames, repeats)

    per = 1e3 / frames_n
    result = {
        "vertices": k,
        "frames": frames_n,
        "substeps": s.substeps,
        "tets": stats.get("tets"),
        "modes": stats.get("modes"),
        "clusters": stats.get("clusters"),
        "prepare_s": prepare_s,
        "frame_set_s": frame_set,
        "frame_set_read_s": frame_read,
        "bake_s": bake,
        "preview_first_pass_s": first,
        "preview_replay_s": replay,
        "preview_backwards_s": backwards,
        "soft_body_s": soft,
        "ms_per_frame": {
            "frame_set": per * frame_set.median,
            "frame_set_read": per * frame_read.median,
            "bake": per * bake.median,
            "preview_simulating": per * (first - frame_set.median),
            "preview_replay": per * (replay.median - frame_set.median),
            "soft_body": per * soft.median,
        },
        "ratios": {
            "bake_over_frame_set": bake.median / frame_set.median,
            "bake_over_frame_set_read": bake.median / frame_read.median,
            "preview_simulating_over_frame_set": (first - frame_set.median) / frame_set.median,
            "preview_replay_over_frame_set": (replay.median - frame_set.median) / frame_set.median,
            "soft_body_over_bake": soft.median / bake.median,
        },
    }
    ctx.log(
        "  blender: frame_set {fs:.2f} ms/frame, +read {fr:.2f}, bake {b:.2f} ({r:.1f}x frame_set), "
        "preview {p:.2f} ms/frame simulating, {pr:.2f} replaying; soft body {sb:.2f}".format(
            fs=result["ms_per_frame"]["frame_set"],
            fr=result["ms_per_frame"]["frame_set_read"],
            b=result["ms_per_frame"]["bake"],
            r=result["ratios"]["bake_over_frame_set"],
            p=result["ms_per_frame"]["preview_simulating"],
            pr=result["ms_per_frame"]["preview_replay"],
            sb=result["ms_per_frame"]["soft_body"],
        )
    )
    try:
        _plot(ctx, result)
    except ImportError:
        pass
    return result


def _plot(ctx: Context, result: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mpf = result["ms_per_frame"]
    names = [
        ("frame_set", "Blender frame_set"),
        ("frame_set_read", "frame_set + read mesh"),
        ("bake", "skinmodes bake"),
        ("preview_simulating", "preview (extra), simulating"),
        ("preview_replay", "preview (extra), replaying"),
        ("soft_body", "Blender Soft Body"),
    ]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.barh([label for _, label in names][::-1], [mpf[k] for k, _ in names][::-1], color="C0")
    ax.set_xlabel("ms per frame")
    ax.set_title(f"in Blender: {result['vertices']:,}-vertex character, {result['frames']} frames")
    fig.tight_layout()
    fig.savefig(ctx.plot_path("in_blender"), dpi=110)
    plt.close(fig)


def _soft_body(bpy, obj, arm, scene, frames: range, repeats: int) -> Timing:
    """Blender's Soft Body on a copy of the mesh (goal = its rest, after the armature), same frames."""
    copy = obj.copy()
    copy.data = obj.data.copy()
    copy.name = "SoftBodyCopy"
    for mod in list(copy.modifiers):
        if mod.type != "ARMATURE":
            copy.modifiers.remove(mod)
    scene.collection.objects.link(copy)
    obj.hide_viewport = True  # only the soft body is evaluated below
    obj.hide_render = True
    sb = copy.modifiers.new("Softbody", "SOFT_BODY")
    sb.settings.use_goal = True
    sb.settings.goal_default = 0.7
    sb.point_cache.frame_start = frames[0]
    sb.point_cache.frame_end = frames[-1]

    def once() -> float:
        # Editing a setting frees the cache, so every repeat really simulates.
        sb.settings.goal_default = 0.7 + 1e-4 * np.random.default_rng().random()
        scene.frame_set(frames[0])
        return _frame_loop(scene, frames)

    try:
        return _repeat(once, repeats)
    finally:
        bpy.data.objects.remove(copy)
        obj.hide_viewport = False
        obj.hide_render = False
