"""Where the secondary motion goes on real characters: region table, before and after planted feet (issue 31).

Reads the core input and rig dumped by ``testkit/rig_dump.py`` (``build/rigs/*.npz``),
:func:`measure` prepares each character with default settings, simulates its clip and hold, and
prints per region (a tip, the feet on the ground, the core) the figures of
``core/validation/where_it_moves.py``, for three variants:

- ``before``: the defaults before issue 31 (the feet free, the depth leak field);
- ``planted``: the render vertices the rig puts on the ground held still;
- ``default``: planted feet and appendages swinging from their base (the defaults now).

``tools/where_it_moves.py`` is its command line.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from core.model.planted import body_diagonal, planted_vertices, rig_positions
from core.pipeline import CharacterInput, FrameSimulation, SolverSettings, prepare_character
from core.validation.where_it_moves import grounded_offset_pct, region_reports

ROOT = Path(__file__).resolve().parent.parent

# The appendage tip tracked per dump: a tail, or a hand / the head where the character has no tail.
TIPS = {
    "fox_walk": "b_Tail03_014",
    "fox_run": "b_Tail03_014",
    "creature": "tail.3",
    "cesium_man": "Node_15",
    "robot_walk": "Head",
    "robot_run": "Head",
    "robot_hand": "Middle2.R",
    "stag": "Tail3",
    "trex": "Tail5",
}


def chain_depth(parents: np.ndarray) -> np.ndarray:
    """(b,) number of ancestors of each bone (parents: (b,), -1 at a root)."""
    depth = np.zeros(len(parents), dtype=np.int64)
    for b in range(len(parents)):  # bones, not vertices: a few dozen
        p = parents[b]
        while p >= 0:
            depth[b] += 1
            p = parents[p]
    return depth


VARIANTS = {"before": (False, False), "planted": (True, False), "default": (True, True)}


def measure(path: Path, planted: bool, appendages: bool = True) -> tuple[list, dict[str, float]]:
    """Region reports and whole-body figures of one dump, with or without planted feet and appendages."""
    d = np.load(path)
    rest, W, P = d["rest"], d["bone_weights"], d["p"]
    feet = planted_vertices(rest, W, P)
    inp = CharacterInput(
        rest=rest,
        faces=d["faces"],
        bone_weights=W,
        bone_heads=d["bone_heads"],
        bone_tails=d["bone_tails"],
        planted=feet if planted else None,
        bone_parents=d["parents"] if appendages else None,
    )
    prep = prepare_character(inp, cache_dir=ROOT / "build" / "where_it_moves_cache")
    start, stop, end, fps = int(d["start"]), int(d["stop"]), int(d["end"]), float(d["fps"])
    sim = FrameSimulation(prep, SolverSettings(fps=fps), start, end, lambda f: P[min(max(f - start, 0), len(P) - 1)])
    offsets = np.array([np.asarray(sim.offsets(f), dtype=np.float64) for f in range(start, end + 1)])
    pos = rig_positions(rest, W, P)
    diag = body_diagonal(pos[0])
    names = [str(n) for n in d["bone_names"]]
    dominant = W.argmax(axis=1)
    tip = dominant == names.index(TIPS[path.stem])
    core = (chain_depth(d["parents"])[dominant] <= 3) & ~feet & ~tip
    reports = region_reports(prep, offsets, diag, {"tip": tip, "ground": feet, "core": core})
    pct = 100.0 * np.linalg.norm(offsets, axis=2).max(axis=1) / diag
    settle = stop + math.ceil(fps) - start
    whole = {
        "max": float(pct.max()),
        "first": float(pct[:2].max()),
        "settled": float(pct[settle:].max()),
        "grounded": grounded_offset_pct(offsets, pos, diag),
    }
    return reports, whole


def plot(path: Path, out: Path) -> Path:
    """A picture of one dump before and after issue 31: the tail tip's lag and the paws' slide.

    Left: the appendage tip's offset from the rig over the clip and its hold; right: the
    largest offset of the vertices the rig has on the ground, per frame; % of the body diagonal.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = np.load(path)
    rest, W, P = d["rest"], d["bone_weights"], d["p"]
    pos = rig_positions(rest, W, P)
    diag = body_diagonal(pos[0])
    on = pos[..., 2] - pos[..., 2].min(axis=1, keepdims=True) <= 0.01 * diag
    tip = W.argmax(axis=1) == [str(n) for n in d["bone_names"]].index(TIPS[path.stem])
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    start = int(d["start"])
    frames = np.arange(start, int(d["end"]) + 1)
    for variant, style in (("before", "--"), ("default", "-")):
        planted, appendages = VARIANTS[variant]
        feet = planted_vertices(rest, W, P) if planted else None
        inp = CharacterInput(
            rest=rest, faces=d["faces"], bone_weights=W, planted=feet, bone_parents=d["parents"] if appendages else None
        )
        prep = prepare_character(inp, cache_dir=ROOT / "build" / "where_it_moves_cache")
        sim = FrameSimulation(
            prep,
            SolverSettings(fps=float(d["fps"])),
            start,
            int(d["end"]),
            lambda f: P[min(max(f - start, 0), len(P) - 1)],
        )
        u = np.array([np.asarray(sim.offsets(f), dtype=np.float64) for f in frames])
        pct = 100.0 * np.linalg.norm(u, axis=2) / diag
        label = "before issue 31" if variant == "before" else "defaults now"
        a.plot(frames, pct[:, tip].max(axis=1), style, label=label)
        b.plot(frames, np.where(on, pct, 0.0).max(axis=1), style, label=label)
    for ax, title in ((a, f"tail tip ({TIPS[path.stem]})"), (b, "vertices on the ground")):
        ax.axvline(int(d["stop"]), color="grey", lw=0.8)
        ax.set_title(f"{path.stem}: {title}")
        ax.set_xlabel("frame (grey: the rig stops)")
        ax.set_ylabel("offset from the rig, % of diagonal")
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return out
