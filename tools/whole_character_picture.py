"""The README's picture of a character of several meshes (issue 38): each mesh alone against one body.

    .venvs/main/bin/python -m tools.whole_character_picture [--out docs/whole_character.png]

Loads the platformer (``tests/assets/characters/Character.glb``, Quaternius, CC0: Arms, Body, Ears and Head
on one armature) on its Run clip with the harness of ``testkit/real_characters.py``, bakes it with Bake
Character twice (Whole Character off: each mesh alone; on: one body) and draws, at the frame where the one
body's head moves most, the rig-only mesh (grey) and the baked one (a colour per mesh), side view, plus each
mesh's peak offset per frame.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from testkit import real_characters as rc
from testkit.build_extension import install_dev

MESHES = ("Arms", "Body", "Ears", "Head")
COLOURS = {"Arms": "tab:blue", "Body": "tab:green", "Ears": "tab:orange", "Head": "tab:red"}


def bake(bpy, addon, whole: bool, work: Path) -> tuple[dict, dict, float]:
    """Per mesh: baked and rig-only world positions (frames, k, 3); the body's size."""
    spec = dataclasses.replace(rc.spec("platformer"), join_pieces=False, scale=1.0)
    loaded = rc.load(bpy, spec)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.whole_character = whole
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "platformer.blend"))
    out = addon.api.bake_character(loaded.armature, frames=(loaded.start, loaded.end))
    size = max(float(s["character_size"]) for s in out)
    baked: dict = {n: [] for n in MESHES}
    rig: dict = {n: [] for n in MESHES}
    for f in range(loaded.start, loaded.end + 1):
        bpy.context.scene.frame_set(f)
        for n in MESHES:
            obj = bpy.data.objects[n]
            baked[n].append(rc._world_positions(bpy, obj))
            cache = obj.modifiers["Skinmodes Cache"]
            cache.show_viewport = False
            rig[n].append(rc._world_positions(bpy, obj))
            cache.show_viewport = True
    return {n: np.array(v) for n, v in baked.items()}, {n: np.array(v) for n, v in rig.items()}, size


def draw(alone: tuple, whole: tuple, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = whole[2]
    peak = {n: 100.0 * np.linalg.norm(whole[0][n] - whole[1][n], axis=2).max(axis=1) / size for n in MESHES}
    frame = int(np.argmax(peak["Head"]))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), gridspec_kw={"width_ratios": [1, 1, 1.4]})
    for ax, (baked, rig, _), title in ((axes[0], alone, "each mesh alone"), (axes[1], whole, "one body (default)")):
        for n in MESHES:
            ax.scatter(rig[n][frame, :, 1], rig[n][frame, :, 2], s=2, c="0.8")
            ax.scatter(baked[n][frame, :, 1], baked[n][frame, :, 2], s=2, c=COLOURS[n], label=n)
        ax.set_title(f"{title}, frame {frame}")
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].legend(loc="lower left", markerscale=4, fontsize=8)
    for n in MESHES:
        alone_peak = 100.0 * np.linalg.norm(alone[0][n] - alone[1][n], axis=2).max(axis=1) / size
        axes[2].plot(peak[n], c=COLOURS[n], label=f"{n}, one body")
        axes[2].plot(alone_peak, c=COLOURS[n], ls=":", label=f"{n}, alone")
    axes[2].set_xlabel("frame")
    axes[2].set_ylabel("peak secondary offset, % of the size")
    axes[2].legend(fontsize=7, ncol=2)
    fig.suptitle("Platformer character of four meshes on one armature, Run clip then a hold (grey: the rig alone)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("docs/whole_character.png"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ.setdefault("BLENDER_USER_RESOURCES", str(work / "profile"))
        addon = install_dev(work)
        import bpy

        alone = bake(bpy, addon, False, work / "alone")
        whole = bake(bpy, addon, True, work / "whole")
    print(draw(alone, whole, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
