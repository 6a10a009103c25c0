"""Bake the real characters with the default settings: a Markdown table, plots and JSON.

    .venvs/main/bin/python -m tools.real_characters --table [--out DIR] [--only NAME ...] [--elbow]

prints a Markdown table and writes, per character, a PNG of one vertex's
trajectory with and without secondary motion, plus ``real_characters.json``;
``--elbow`` (alone or with ``--table``) bends CesiumMan's elbow and compares the
volume kept by linear blend skinning and by the physics skin.  The add-on is
installed into a throw-away Blender profile first; the characters, loading and
measuring are ``testkit/real_characters.py``'s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from testkit.blender_process import run_and_leave
from testkit.real_characters import (
    CHARACTERS,
    ELBOW,
    ROOT,
    Measurement,
    elbow_volumes,
    install_addon,
    load,
    measure,
    plot_tip,
    spec,
)


def markdown_table(rows: list[Measurement]) -> str:
    head = (
        "| character | role | size (BU) | vertices | tets | modes (s) | bake (ms/frame) "
        "| max % | first % | settled % | NaN | messages/warnings |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for m in rows:
        said = len(m.messages) + len(m.warnings)
        lines.append(
            f"| {m.name} | {m.role} | {m.size:.3g} | {m.vertices} | {m.tets} | {m.modes_seconds:.1f} "
            f"| {m.bake_ms_per_frame:.0f} | {m.max_offset_pct:.3g} | {m.first_offset_pct:.3g} "
            f"| {m.settled_offset_pct:.3g} | {'yes' if m.nan else 'no'} | {said} |"
        )
    return head + "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="store_true", help="bake every character and print the Markdown table")
    ap.add_argument("--only", nargs="*", default=None, help="character names (default: all)")
    ap.add_argument("--elbow", action="store_true", help="also bend CesiumMan's elbow 90°: LBS vs physics skin volume")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "real_characters", help="folder for plots and JSON")
    args = ap.parse_args(argv)
    if not (args.table or args.elbow):
        ap.print_help()
        return 2
    chosen = ([spec(n) for n in args.only] if args.only else list(CHARACTERS)) if args.table else []
    work = Path(tempfile.mkdtemp(prefix="skinmodes-real-characters-"))
    try:
        install_addon(work)
        import bpy

        rows = []
        for character in chosen:
            print(f"[real characters] {character.name} ...", file=sys.stderr, flush=True)
            rows.append(measure(bpy, character, work / character.name))
        elbow = None
        if args.elbow:
            print(f"[real characters] {ELBOW.character} elbow ...", file=sys.stderr, flush=True)
            elbow = elbow_volumes(bpy, load(bpy, spec(ELBOW.character)), ELBOW, work / "elbow")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    if rows:
        (args.out / "real_characters.json").write_text(json.dumps([m.summary() for m in rows], indent=1))
    try:
        plots = [plot_tip(m, args.out / f"{m.name}.png") for m in rows]
    except ImportError:
        plots = []
        print("matplotlib is not installed: trajectories are in real_characters.json only", file=sys.stderr)
    if rows:
        print(markdown_table(rows))
    for m in rows:
        print(
            f"- {m.name}: max offset at vertex {m.worst_vertex} (bone {m.worst_bone}) frame {m.worst_frame}; "
            f"mesher {m.mesher}, {m.sim_vertices} simulation vertices, {m.clusters} clusters"
        )
        for line in m.notes + m.messages + m.warnings:
            print(f"- {m.name}: {line}")
    if elbow is not None:
        print(
            f"- elbow ({ELBOW.character}, {ELBOW.lower} turned {ELBOW.degrees:g}° about {ELBOW.axis}): "
            f"bent limb ({elbow['tets']['limb']} tets) LBS {elbow['lbs_limb_pct']:+.2f} %, "
            f"physics {elbow['physics_limb_pct']:+.2f} %; joint ({elbow['tets']['joint']} tets) "
            f"LBS {elbow['lbs_joint_pct']:+.2f} % ({elbow['lbs_joint_inverted']} inverted), "
            f"physics {elbow['physics_joint_pct']:+.2f} % ({elbow['physics_joint_inverted']} inverted)"
        )
    if rows:
        print(f"wrote {args.out / 'real_characters.json'}" + "".join(f", {p}" for p in plots))
    return 0


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-real-characters-profile-")
