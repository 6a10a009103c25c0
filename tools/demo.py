"""The README's demo: build a soft creature, bake its secondary motion headless, draw the jiggle.

    python3.11 tasks.py demo            # runs this (python -m tools.demo) with the main environment

Writes into ``demo_output/``:
  creature.blend              the scene, saved with the bake (Mesh Cache modifier)
  skinmodes_cache/Creature-<hash>.pc2  the point cache (plays back in any Blender, no add-on needed)
  jiggle.png                  tail-tip and belly height with and without secondary motion
  summary.json                the CLI's JSON summary plus the measured figures

It goes through the same entry point a render farm uses (the extension's
``cli.main``), with the extension installed from a freshly built package into
a throw-away Blender user profile.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from testkit import build_extension
from testkit.blender_process import throwaway_profile

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo_output"

FRAMES = (1, 72)


def main() -> int:
    global OUT
    if sys.argv[1:2] == ["--out"] and len(sys.argv) > 2:
        OUT = Path(sys.argv[2]).resolve()  # the test suite runs the demo into a folder of its own
    with throwaway_profile("skinmodes-demo-profile-"):
        return _run()


def _shown(path: Path) -> str:
    """A path as the summary shows it: relative to the checkout when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _run() -> int:
    t_start = time.perf_counter()
    OUT.mkdir(exist_ok=True)
    zip_path = build_extension.dev_zip(Path(tempfile.mkdtemp()) / "skinmodes-dev.zip")
    import bpy
    import numpy as np

    from testkit.creature import build_creature

    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    import importlib

    cli = importlib.import_module("bl_ext.user_default.skinmodes.cli")
    core_pc2 = importlib.import_module("bl_ext.user_default.skinmodes.core.io.pc2")

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    obj, arm = build_creature(detail=40, frames=FRAMES)
    obj.skinmodes.material_preset = "JELLY"
    blend = OUT / "creature.blend"
    cache = OUT / "skinmodes_cache"
    if cache.exists():
        shutil.rmtree(cache)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"[demo] creature: {len(obj.data.vertices)} vertices, bones {[b.name for b in arm.data.bones]}", flush=True)

    t0 = time.perf_counter()
    code = cli.main(["bake", "--object", obj.name, "--frames", f"{FRAMES[0]}-{FRAMES[1]}", "--output", "pc2"])
    if code != 0:
        return code
    bake_s = time.perf_counter() - t0

    # Positions with and without secondary motion, for two vertices that show it.
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    obj = bpy.data.objects["Creature"]
    pc2 = Path(bpy.path.abspath(obj.skinmodes.bake_file))  # one file per object: Creature-<hash>.pc2
    baked, _, _ = core_pc2.read_pc2(pc2)
    rest = np.array([v.co[:] for v in obj.data.vertices])
    tip = int(np.argmin(rest[:, 1]))  # tail tip: the most -y vertex
    # The belly's side at its equator: its underside rests on the ground, where Planted Feet holds it.
    belly = int(np.argmax(rest[:, 0] - 10 * np.abs(rest[:, 1] - 0.1) - 10 * np.abs(rest[:, 2] - 0.45)))
    mod = obj.modifiers["Skinmodes Cache"]
    scene = bpy.context.scene
    rig_only = []
    mod.show_viewport = False
    for f in range(FRAMES[0], FRAMES[1] + 1):
        scene.frame_set(f)
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        rig_only.append([ev.vertices[tip].co[:], ev.vertices[belly].co[:]])
    mod.show_viewport = True
    rig_only = np.array(rig_only)
    frames = np.arange(FRAMES[0], FRAMES[1] + 1)
    secondary = np.linalg.norm(baked[:, [tip, belly]] - rig_only, axis=2)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for ax, idx, label, comp in ((axes[0], 0, "tail tip, sideways (x)", 0), (axes[1], 1, "belly side, height (z)", 2)):
        ax.plot(frames, rig_only[:, idx, comp], "--", color="0.5", label="rig only")
        ax.plot(frames, baked[:, [tip, belly]][:, idx, comp], color="C3", label="with secondary motion")
        ax.set_ylabel(f"{label} [m]")
        ax.legend(loc="upper right")
    axes[1].set_xlabel("frame")
    fig.suptitle("skinmodes demo: follow-through and jiggle added to a hopping creature")
    fig.tight_layout()
    fig.savefig(OUT / "jiggle.png", dpi=120)

    summary = {
        "blend": _shown(blend),
        "pc2": _shown(pc2),
        "picture": _shown(OUT / "jiggle.png"),
        "vertices": len(rest),
        "frames": list(FRAMES),
        "bake_seconds": round(bake_s, 2),
        "max_secondary_m": {
            "tail_tip": round(float(secondary[:, 0].max()), 4),
            "belly": round(float(secondary[:, 1].max()), 4),
        },
        "total_seconds": round(time.perf_counter() - t_start, 1),
    }
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print("[demo] " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
