"""Section 6: real rigged characters with the default settings (issue 11).

The public glTF characters of ``tests/assets/characters/`` are loaded by the
harness of ``testkit/real_characters.py`` (its docstring says how: import,
clip, a 1.5 s hold on the last pose, import scale) and, per character:

* **time to first jiggle**: from the freshly loaded character, saved to a new
  folder so its cache folder is empty, to the first previewed frame whose
  offsets are non-zero, the way an animator gets there: turn Live Preview on
  at the first frame, then step one frame at a time.  Headless the preview
  prepares in the calling thread, so the wall clock spans the whole wait.
  Its split comes from the prepared character's own timers (meshing, volume
  weights, modes, clusters + products, embedding); "preview set-up" is the
  rest of turning the preview on (reading the character, the slowest
  frequency, sampling the rig over the frame range), "first frames" the
  stepping.
* **bake**: ms per frame of "Bake Secondary Motion" to a .pc2 over the clip
  and its hold, with the modes prepared and nothing simulated yet.
* **plausibility**, from the harness's default bake: max offset, offset at the
  first simulated frame, offset once settled (all % of the character's size),
  NaN, the bake's messages and warnings.
* a plot of the tracked vertex (tail tip, hand, ...) with and without
  secondary motion.

Full mode repeats each timing (:data:`REPEATS`; every first-jiggle repeat
loads the character afresh); ``--quick`` bakes only the smallest character,
once, over a short clip, to check that the section runs.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc

from .common import Context, Timing, in_scratch_folder, install_addon

REPEATS = 3
QUICK_CHARACTER = "rigged_simple"  # 96 render vertices
QUICK_CLIP = (1, 12)  # then the harness's hold; the action keeps playing there, so quick figures mean nothing
# "Non-zero" offsets: above this share of the character's size.  Round-off of the start state is
# ~1e-14 of it (measured on the rigged cylinder), a visible jiggle is ~1e-3: the first frame that
# moves at all is the first that crosses it.
JIGGLE_THRESHOLD = 1e-6
# The split of the time to first jiggle, in the order it happens.
STAGES = ("meshing", "weights", "modes", "clusters_products", "embedding", "preview_setup", "first_frames")


def run(ctx: Context) -> dict:
    return in_scratch_folder("skinmodes-bench-characters-", lambda work: _run(ctx, work))


def _run(ctx: Context, work: Path) -> dict:
    addon = install_addon(work)
    import bpy

    if ctx.quick:
        chosen = [dataclasses.replace(rc.spec(QUICK_CHARACTER), clip=QUICK_CLIP)]
    else:
        chosen = list(rc.CHARACTERS)
    repeats = 1 if ctx.quick else REPEATS
    rows = []
    for character in chosen:
        rows.append(_character(ctx, bpy, rc, addon, character, work / character.name, repeats))
    return {
        "characters": rows,
        "repeats": repeats,
        "hold_seconds": rc.HOLD_SECONDS,
        "settle_seconds": rc.SETTLE_SECONDS,
        "jiggle_threshold": JIGGLE_THRESHOLD,
    }


def _character(ctx: Context, bpy: Any, rc: Any, addon: Any, character: Any, work: Path, repeats: int) -> dict:
    api = importlib.import_module(addon.__name__ + ".api")
    jiggles = [first_jiggle(bpy, rc, addon, character, work / f"first-jiggle-{i}") for i in range(repeats)]
    m = rc.measure(bpy, character, work / "bake")
    # More bakes of the same scene, each from the state the first started in: modes prepared,
    # nothing simulated (a session keeps its simulated frames, and a bake would replay them).
    obj = bpy.data.objects[character.mesh]
    session_mod = importlib.import_module(addon.__name__ + ".session")
    n = m.frames[1] - m.frames[0] + 1
    bake_s = [m.bake_seconds]
    for _ in range(repeats - 1):
        api.clear_bake(obj)
        session_mod.session_for(obj).invalidate()  # as an edit of the animation does
        bake_s.append(float(api.bake(obj, frames=tuple(m.frames), output="PC2")["seconds"]))
    api.clear_bake(obj)
    first = Timing.of([j["seconds"] for j in jiggles])
    row = {
        "name": m.name,
        "role": m.role,
        "file": character.file,
        "scale": m.scale,
        "size": m.size,
        "vertices": m.vertices,
        "sim_vertices": m.sim_vertices,
        "tets": m.tets,
        "clusters": m.clusters,
        "mesher": m.mesher,
        "first_jiggle_s": first,
        "first_jiggle_frame": jiggles[0]["frame"],
        "first_jiggle_split_s": {k: float(np.median([j["split"][k] for j in jiggles])) for k in STAGES},
        "modes_s": m.modes_seconds,
        "frames": list(m.frames),
        "frames_baked": m.frames_baked,
        "bake_s_per_frame": Timing.of([s / n for s in bake_s]),
        "max_offset_pct": m.max_offset_pct,
        "first_offset_pct": m.first_offset_pct,
        "settled_offset_pct": m.settled_offset_pct,
        "nan": m.nan,
        "messages": m.messages,
        "warnings": m.warnings,
        "notes": m.notes,
        "tip_vertex": m.tip_vertex,
        "tip_bone": character.tip_bone,
        "worst": {"vertex": m.worst_vertex, "frame": m.worst_frame, "bone": m.worst_bone},
    }
    ctx.log(
        f"  characters: {m.name}: {m.vertices} vertices, {m.tets} tets; first jiggle {first.s()} at frame "
        f"{row['first_jiggle_frame']}; bake {row['bake_s_per_frame'].ms()} per frame over {n} frames; "
        f"max {m.max_offset_pct:.3g} %, first {m.first_offset_pct:.3g} %, settled {m.settled_offset_pct:.3g} %"
    )
    try:
        rc.plot_tip(m, ctx.plot_path(f"characters_{m.name}"))
    except ImportError:  # matplotlib missing: the figures stand without their plot
        ctx.plots.remove(f"plots/characters_{m.name}.png")
    return row


def first_jiggle(bpy: Any, rc: Any, addon: Any, character: Any, folder: Path) -> dict:
    """Load ``character`` afresh and time Live Preview from "on" to the first frame that moves.

    Returns ``{"seconds": wall clock, "frame": the first frame with offsets,
    "split": {stage: seconds}}`` (stages as in :data:`STAGES`).
    """
    api = importlib.import_module(addon.__name__ + ".api")
    session_mod = importlib.import_module(addon.__name__ + ".session")
    preview = importlib.import_module(addon.__name__ + ".preview")
    loaded = rc.load(bpy, character)
    folder.mkdir(parents=True, exist_ok=True)
    # Saved to a new folder: the default cache folder, beside the .blend, is empty.
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / f"{character.name}.blend"))
    scene = bpy.context.scene
    obj = loaded.obj
    mesh = obj.data
    k = len(mesh.vertices)
    co = np.empty(3 * k, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    # The preview writes object-space offsets: compare them with the object-space size.
    threshold = JIGGLE_THRESHOLD * float(np.linalg.norm(co.max(axis=0) - co.min(axis=0)))
    offsets = np.empty(3 * k, dtype=np.float32)
    s = api.settings(obj)
    frame = loaded.start
    scene.frame_set(frame)

    t0 = time.perf_counter()
    s.live_preview = True  # its update turns the preview on; headless it prepares here
    t1 = time.perf_counter()
    if not s.live_preview:
        raise RuntimeError(f"{character.name}: Live Preview turned itself off: {preview.ERRORS.get(obj.session_uid)}")
    while True:
        mesh.attributes[session_mod.OFFSET_ATTRIBUTE].data.foreach_get("vector", offsets)
        if np.abs(offsets).max() > threshold:
            break
        if frame >= loaded.end:
            raise RuntimeError(f"{character.name}: the preview showed no offsets from frame {loaded.start} to {frame}")
        frame += 1
        scene.frame_set(frame)  # the preview's frame handlers write the frame's offsets
    t2 = time.perf_counter()

    prepared = session_mod.session_for(obj).prepared
    st, tm = prepared.stats, prepared.model.timings
    modes = tm.get("leak", 0.0) + tm.get("modes", 0.0)
    split = {
        "meshing": st["tetrahedralize_s"],
        "weights": st["volume_weights_s"],
        "modes": modes,
        "clusters_products": st["subspace_s"] - modes,  # with writing the model cache
        "embedding": st["embedding_s"],
    }
    split["preview_setup"] = (t1 - t0) - sum(split.values())
    split["first_frames"] = t2 - t1
    s.live_preview = False
    return {"seconds": t2 - t0, "frame": frame, "split": {k: float(v) for k, v in split.items()}}
