"""Characters of several meshes, baked as one body against each mesh alone (issue 38).

Two characters of several meshes on one armature, loaded by the harness of ``testkit/real_characters.py``:

- the platformer (``Character.glb``, Quaternius, CC0): Arms, Body, Ears and Head, on its Run clip;
- the fox (``Fox.glb``) dressed as ``tests/addon/test_whole_character.py`` dresses it: a shirt mesh over its
  torso and an eyeball mesh in its head, on its Run clip.

Per character and way (Whole Character on: one body; off: each mesh alone), from a fresh scene saved to an
empty folder (so nothing is cached):

- **time to first jiggle** of one mesh (the platformer's head, the fox): Live Preview on at the first
  frame, then one frame at a time until its offsets move (``characters.first_jiggle``'s method);
- **bake**: Bake Character's wall clock (``api.bake_character``, every mesh, their models then prepared),
  and per frame;
- that mesh's bake summary max offset, in % of its body's size: as one body, the body's max (every mesh of
  it reports the one simulation); alone, that mesh's own.

Quick mode: the platformer only, both ways, over 8 frames and the harness's hold, at 6,000 tets.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc
from testkit.dressed import dress

from .common import Context, in_scratch_folder, install_addon, markdown_table

JIGGLE_THRESHOLD = 1e-6  # as characters.py: a share of the mesh's size above round-off
QUICK_FRAMES = 8
QUICK_TETS = 6000


@dataclasses.dataclass(frozen=True)
class Case:
    """A character of several meshes: how to load it and which mesh's first jiggle is timed."""

    name: str
    spec: str
    actions: tuple[str, ...]
    watched: str
    dressed: bool = False


CASES = (
    Case("platformer (4 meshes)", "platformer", ("CharacterArmature|Run",), "Head"),
    Case("fox dressed (3 meshes)", "fox", ("Run",), "fox", dressed=True),
)


def run(ctx: Context) -> dict:
    return in_scratch_folder("skinmodes-bench-whole-", lambda work: _run(ctx, work))


def _run(ctx: Context, work: Path) -> dict:
    addon = install_addon(work)
    import bpy

    rows = []
    for case in CASES[:1] if ctx.quick else CASES:
        for whole in (True, False):
            row = _measure(bpy, addon, case, whole, work / f"{case.spec}-{whole}", ctx.quick)
            rows.append(row)
            ctx.log(
                f"  whole characters: {case.name}, {'one body' if whole else 'each mesh alone'}: first jiggle "
                f"{row['first_jiggle_s']:.2f} s, bake {row['bake_s']:.2f} s ({row['bake_ms_per_frame']:.1f} ms "
                f"per frame), max offset in {case.watched}'s summary {row['watched_peak_pct']:.3g} %"
            )
    return {"rows": rows}


def _load(bpy: Any, case: Case, quick: bool) -> Any:
    spec = dataclasses.replace(rc.spec(case.spec), actions=case.actions, join_pieces=False, scale=1.0)
    if quick:
        spec = dataclasses.replace(spec, clip=(0, QUICK_FRAMES))
    loaded = rc.load(bpy, spec)
    if case.dressed:
        dress(bpy, loaded.obj, loaded.armature, float(np.linalg.norm(np.array(loaded.obj.dimensions))))
    return loaded


def _measure(bpy: Any, addon: Any, case: Case, whole: bool, folder: Path, quick: bool) -> dict:
    api = importlib.import_module(addon.__name__ + ".api")
    session_mod = importlib.import_module(addon.__name__ + ".session")
    loaded = _load(bpy, case, quick)
    meshes = api.character_meshes(loaded.armature)
    for mesh in meshes:
        api.settings(mesh).whole_character = whole
        if quick:
            api.settings(mesh).target_tets = QUICK_TETS
    folder.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / "shot.blend"))  # an empty cache folder beside it
    scene = bpy.context.scene
    obj = bpy.data.objects[case.watched]
    mesh = obj.data
    k = len(mesh.vertices)
    co = np.empty(3 * k, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    threshold = JIGGLE_THRESHOLD * float(np.ptp(co.reshape(-1, 3), axis=0).max())
    offsets = np.empty(3 * k, dtype=np.float32)
    frame = loaded.start
    scene.frame_set(frame)
    t0 = time.perf_counter()
    api.settings(obj).live_preview = True  # headless the preview prepares here
    if not api.settings(obj).live_preview:
        preview = importlib.import_module(addon.__name__ + ".preview")
        raise RuntimeError(f"{case.name}: Live Preview turned itself off: {preview.ERRORS.get(obj.session_uid)}")
    while True:
        mesh.attributes[session_mod.OFFSET_ATTRIBUTE].data.foreach_get("vector", offsets)
        if np.abs(offsets).max() > threshold or frame >= loaded.end:
            break
        frame += 1
        scene.frame_set(frame)
    first = time.perf_counter() - t0
    api.settings(obj).live_preview = False
    t0 = time.perf_counter()
    summaries = api.bake_character(loaded.armature, frames=(loaded.start, loaded.end))
    bake = time.perf_counter() - t0
    watched = next(s for s in summaries if s["object"] == case.watched)
    frames = loaded.end - loaded.start + 1
    return {
        "character": case.name,
        "whole": whole,
        "meshes": [m.name for m in meshes],
        "vertices": int(sum(len(m.data.vertices) for m in meshes)),
        "first_jiggle_s": first,
        "first_jiggle_frame": frame,
        "bake_s": bake,
        "bake_ms_per_frame": 1e3 * bake / frames,
        "frames": frames,
        "watched": case.watched,
        "watched_peak_pct": float(watched["max_offset_percent"]),
        "sizes": sorted({float(s["character_size"]) for s in summaries}),
    }


def report_lines(section: dict) -> list[str]:
    rows = section.get("rows", [])
    if not rows:
        return []
    return [
        "## Characters of several meshes: one body against each mesh alone (issue 38)",
        "",
        "From a fresh scene with an empty cache folder: the time from Live Preview on to the first frame that "
        "moves, for one mesh; Bake Character's wall clock over every mesh (their models prepared by then); "
        "that mesh's bake summary max offset, in % of its body's size: as one body the body's max, alone that "
        "mesh's own.  Bake Character simulates a body once for all its meshes; the first jiggle prepares and "
        "simulates the whole body for the one mesh previewed.",
        "",
        *markdown_table(
            ["character", "simulated as", "vertices", "first jiggle (s)", "bake (s)", "ms / frame", "summary max %"],
            [
                [
                    r["character"],
                    "one body" if r["whole"] else "each mesh alone",
                    f"{r['vertices']:,}",
                    f"{r['first_jiggle_s']:.2f}",
                    f"{r['bake_s']:.2f}",
                    f"{r['bake_ms_per_frame']:.1f}",
                    f"{r['watched']}: {r['watched_peak_pct']:.3g}",
                ]
                for r in rows
            ],
        ),
        "",
    ]
