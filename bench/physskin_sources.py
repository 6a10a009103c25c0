"""Section 7, issue 30: the physics skin by where it comes from, and the seed's mixed energy beside the shipped one.

*Sources* (the same limb and motion as ``bench/physskin.py``, what the add-on runs,
``PhysicsRig.positions``):

* ``hat``: the section's hat weights, blending over the middle half; the outer
  quarters are bound to one bone alone, so about half the vertices are pins;
* ``smooth``: ordinary smooth weights, w_1 = (1 + tanh((x - 2) / 1)) / 2, blending
  along the whole limb (no vertex bound to one bone alone): a few percent pins;
* ``bones``: Physics Skin From Bones Only, no weights (``PhysicsRig.from_bones``):
  the seed's soft pins along the bones.

They are timed in rounds of hat smooth bones and back (a palindrome, as in the
section); every fps figure is printed with its pinned share, and the volume
steps' count (mean, max of the cap ``VOLUME_STEPS``: a frame that reaches the
cap is one whose answer depends on it).

*Energies*: on the 2,673-vertex limb, three poses (a 165° twist; a 90° bend with a
30° wrist twist; both), the total volume change, inverted tets and one frame's
time of: linear blend skinning; the shipped energy (ARAP with fixed rotations
and the exact volume, ``solve.py``); the seed's mixed energy solved literally
(``mixed.py``: Psi(sym(R^T F)), one SPD solve per frame) with blended and with
per-bone rotations, on the same pins; and both energies from bones only.  The
mixed rows also give the tets' mean det F against 1 / cos^2 of their turn away
from R (``mixed.py`` says why that predicts the inflation).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from core.geometry.tetmesh import TetMesh, signed_volumes
from core.linalg.polar import rotation
from core.model.materials import Material
from core.physskin.assignment import assign_tets
from core.physskin.mixed import mixed_positions
from core.physskin.rig import VOLUME_STEPS, PhysicsRig
from core.physskin.rotations import blended_rotations, tet_rotations
from core.settings import core_default
from testkit.limb import HEADS, POISSON, TAILS, YOUNGS, build_rig, cylinder_mesh, limb_pose

from .paired import palindrome

SOURCES = {
    "hat": "hat weights (blend over the middle half)",
    "smooth": "smooth weights (blend everywhere)",
    "bones": "from bones only (no weights)",
}
SMOOTH_WIDTH = 1.0  # m: the tanh's half-width; the limb is 4 m, the joint at x = 2
ENERGY_POSES = ((0.0, 165.0), (90.0, 30.0), (90.0, 165.0))  # (bend, twist) degrees
ENERGIES = {
    "lbs": "LBS (smooth weights)",
    "shipped": "shipped energy, smooth weights",
    "mixed": "seed's mixed energy, smooth weights, blended R",
    "mixed_per_bone": "seed's mixed energy, smooth weights' pins, per-bone R",
    "bones_shipped": "shipped energy, from bones only",
    "bones_mixed": "seed's mixed energy, from bones only",
}
MISFIT_BINS = ((0.0, 10.0), (10.0, 30.0), (30.0, 60.0), (60.0, 180.0))


def smooth_weights(X: np.ndarray) -> np.ndarray:
    """Weights (n, 2) of the two bones blending along the whole limb: no vertex is bound to one bone alone."""
    w1 = 0.5 * (1.0 + np.tanh((X[:, 0] - 2.0) / SMOOTH_WIDTH))
    return np.stack([1.0 - w1, w1], axis=1)


def source_rigs(mesh: TetMesh) -> dict[str, PhysicsRig]:
    """The shipped physics skin of the limb from each source, at ν = 0.45 and the default Pin Depth."""
    mat = Material.uniform(mesh.t, YOUNGS, POISSON, 1000.0)
    depth = float(core_default("pin_depth"))
    return {
        "hat": build_rig(mesh, POISSON),
        "smooth": PhysicsRig.build(mesh, smooth_weights(mesh.X), HEADS, TAILS, mat.mu, mat.lam, depth),
        "bones": PhysicsRig.from_bones(mesh, np.zeros((mesh.n, 2)), HEADS, TAILS, mat.mu, mat.lam),
    }


def source_row(ctx: Any, cells: tuple[int, int], poses: list[np.ndarray], rounds: int) -> dict[str, Any]:
    """fps (median, range over blocks), pinned share and volume steps of each source on one limb."""
    mesh = cylinder_mesh(*cells)
    rigs = source_rigs(mesh)
    steps: dict[str, list[int]] = {k: [] for k in rigs}
    stops: dict[str, list[str]] = {k: [] for k in rigs}

    def block(k: str) -> Callable[[], float]:
        def play() -> float:
            rig, taken, why = rigs[k], [], []
            t0 = time.perf_counter()
            for A in poses:
                rig.positions(A.ravel())
                taken.append(rig.skin.last_steps)
                why.append(rig.skin.last_stop)
            s = (time.perf_counter() - t0) / len(poses)
            steps[k] += taken
            stops[k] += why
            return s

        return play

    blocks = {k: block(k) for k in rigs}
    for fn in blocks.values():  # one untimed pass: caches, allocator
        fn()
    for v in [*steps.values(), *stops.values()]:
        v.clear()
    times = palindrome(blocks, rounds)["times"]
    row = {
        "vertices": mesh.n,
        "tets": mesh.t,
        "frames": len(poses),
        "rounds": rounds,
        "pinned_share": {k: len(r.skin.pins) / mesh.n for k, r in rigs.items()},
        "fps": {k: 1.0 / t.median for k, t in times.items()},
        "fps_range": {k: [1.0 / t.max, 1.0 / t.min] for k, t in times.items()},
        "volume_steps": {k: [float(np.mean(v)), int(max(v))] for k, v in steps.items()},
        # frames (of all the timed ones) whose volume solve stopped otherwise than converged
        "stops": {k: {w: v.count(w) / len(v) for w in ("converged", "stalled", "cap")} for k, v in stops.items()},
        "step_cap": VOLUME_STEPS,
    }
    ctx.log(
        f"  physskin sources n={mesh.n}: "
        + ", ".join(f"{k} {row['fps'][k]:.3g} fps ({100 * row['pinned_share'][k]:.2g} % pinned)" for k in rigs)
    )
    return row


def misfit(rig: PhysicsRig, R: np.ndarray, x: np.ndarray) -> list[dict[str, float]]:
    """Per bin of the tets' turn away from R (degrees): count, mean det F, mean 1 / cos^2 of the turn."""
    F = (rig.skin.K @ x.reshape(-1)).reshape(-1, 3, 3)
    M = np.einsum("tji,tjk->tik", R, rotation(F))
    theta = np.degrees(np.arccos(np.clip((np.einsum("tii->t", M) - 1.0) / 2.0, -1.0, 1.0)))
    J = np.linalg.det(F)
    out = []
    for lo, hi in MISFIT_BINS:
        m = (theta >= lo) & (theta < hi)
        if m.any():
            c = np.cos(np.radians(np.minimum(theta[m], 80.0)))  # capped: past 90° the prediction is unbounded
            out.append(
                {
                    "from": lo,
                    "to": hi,
                    "tets": int(m.sum()),
                    "det": float(J[m].mean()),
                    "predicted": float(np.mean(1.0 / c**2)),
                }
            )
    return out


def energy_table(cells: tuple[int, int], repeats: int) -> dict[str, Any]:
    """Volume change, inverted tets and fps of each energy (:data:`ENERGIES`) at :data:`ENERGY_POSES`."""
    mesh = cylinder_mesh(*cells)
    rigs = source_rigs(mesh)
    smooth, bones = rigs["smooth"], rigs["bones"]
    tet_bone = assign_tets(mesh.X, mesh.T, HEADS, TAILS)
    V0 = float(mesh.volumes.sum())
    rows = []
    for bend, twist in ENERGY_POSES:
        A = limb_pose(bend, twist)
        solve: dict[str, Callable[[], np.ndarray]] = {
            "lbs": lambda: smooth.lbs(A.ravel()),
            "shipped": lambda: smooth.positions(A.ravel()),
            "mixed": lambda: mixed_positions(smooth.skin, A, blended_rotations(A, smooth.tet_weights)),
            "mixed_per_bone": lambda: mixed_positions(smooth.skin, A, tet_rotations(A, tet_bone)),
            "bones_shipped": lambda: bones.positions(A.ravel()),
            "bones_mixed": lambda: mixed_positions(bones.skin, A, blended_rotations(A, bones.tet_weights)),
        }
        cells_out: dict[str, Any] = {"bend": bend, "twist": twist}
        for k, fn in solve.items():
            seconds = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                x = fn()
                seconds.append(time.perf_counter() - t0)
            v = signed_volumes(x, mesh.T)
            cells_out[k] = {
                "volume_change_pct": 100.0 * (float(v.sum()) / V0 - 1.0),
                "inverted": int((v <= 0.0).sum()),
                "fps": 1.0 / float(np.median(seconds)),
            }
            if k in ("mixed", "bones_mixed"):
                rig = smooth if k == "mixed" else bones
                cells_out[k]["misfit"] = misfit(rig, blended_rotations(A, rig.tet_weights), x)
        rows.append(cells_out)
    return {
        "vertices": mesh.n,
        "tets": mesh.t,
        "pinned_share": {"smooth": len(smooth.skin.pins) / mesh.n, "bones": len(bones.skin.pins) / mesh.n},
        "rows": rows,
    }


# --- the report -----------------------------------------------------------------------------------

GOAL_FPS = 30.0  # issue 30: with smooth weights (at most 5 % pinned) at about 6k vertices, one thread
GOAL_VERTICES = 6000


def _fps_pins(row: dict[str, Any], k: str) -> str:
    lo, hi = row["fps_range"][k]
    return f"{row['fps'][k]:.3g} ({lo:.3g}–{hi:.3g}), {100 * row['pinned_share'][k]:.2g} % pinned"


def goal_row(p: dict[str, Any]) -> dict[str, Any]:
    """The sources' row nearest 6k vertices."""
    return min(p["sources"], key=lambda r: abs(r["vertices"] - GOAL_VERTICES))


def sources_summary(p: dict[str, Any], speed: dict[str, Any], seed: tuple[str, int, int, float]) -> list[str]:
    """The README summary's physics-skin line: shipped fps by source at ~6k vertices, each with its pinned
    share, beside ARAP and the per-frame refactor of ``speed`` (the section's row nearest 6k) and the seed."""
    r = goal_row(p)
    by_source = " / ".join(f"{r['fps'][k]:.3g} ({100 * r['pinned_share'][k]:.2g} % pinned)" for k in SOURCES)
    f, refactor = speed["fps"], 1.0 / speed["ratio_over_direct"]["shipped"]["median"]
    return [
        f"physics skin, {r['vertices']:,} vertices, {r['frames']}-frame bend + twist, as shipped with hat weights / "
        "smooth weights / from bones only (no weights); ARAP and the per-frame refactor (the paper's structure) "
        "with hat weights",
        f"{by_source} fps; ARAP {f['arap']:.3g} ({100 * speed['pins'] / speed['vertices']:.2g} % pinned), "
        f"refactor {f['direct']:.3g} fps (the paper's {seed[0]}: {seed[3]} fps on its own machine)",
        f"shipped {refactor:.1f}× the refactor (hat), paired; goal ≥ {GOAL_FPS:g} fps with smooth weights (issue 30)",
    ]


def sources_behind(p: dict[str, Any]) -> list[str]:
    r = goal_row(p)
    if r["vertices"] < 5000 or r["fps"]["smooth"] >= GOAL_FPS:
        return []
    return [
        f"Physics skin with smooth weights ({100 * r['pinned_share']['smooth']:.1f} % pinned) runs at "
        f"{r['fps']['smooth']:.3g} fps at {r['vertices']:,} vertices (goal ≥ {GOAL_FPS:g} fps, one thread, issue 30)."
    ]


def sources_report_lines(p: dict[str, Any], table: Callable[[list[str], list[list[Any]]], list[str]]) -> list[str]:
    """The section's tables for issue 30: fps by source with pinned shares, and the energy comparison."""
    rows = p["sources"]
    L = [
        "**By source (issue 30)**: what the add-on runs (`PhysicsRig.positions`), same limbs and motion, timed in "
        f"rounds of hat, smooth, bones and back ({rows[0]['rounds']} rounds).  *Smooth*: w₁ = (1 + tanh((x − 2) / "
        f"{SMOOTH_WIDTH:g})) / 2, no vertex bound to one bone alone; *bones*: From Bones Only, no weights, the "
        "seed's soft pins along the bones.  Volume steps: mean and most per frame (the cap is "
        f"{rows[0]['step_cap']}), and the share of frames whose volume solve converged (a full step would "
        "move the flesh by less than 1e-3 of the size, or the last two steps' ratio predicts less than a "
        "quarter of that still to go), stalled (no step length lowered the energy without raising the "
        "count of inverted tets) or ran into the cap (its answer depends on the cap; a bake names such "
        "frames).",
        "",
    ]
    L += table(
        [
            "vertices",
            *[f"{label} [fps, pinned]" for label in SOURCES.values()],
            "volume steps hat / smooth / bones",
            "converged / stalled / at the cap, hat; smooth; bones",
        ],
        [
            [
                f"{r['vertices']:,}",
                *[_fps_pins(r, k) for k in SOURCES],
                " / ".join(f"{r['volume_steps'][k][0]:.2f} (≤ {r['volume_steps'][k][1]})" for k in SOURCES),
                "; ".join(
                    " / ".join(f"{100 * r['stops'][k][w]:.0f} %" for w in ("converged", "stalled", "cap"))
                    for k in SOURCES
                ),
            ]
            for r in rows
        ],
    )
    L += _energy_lines(p["energy"], table)
    a = p.get("autoweights")
    if a:
        from .physskin_autoweights import REGIONS, report_rows

        L += [
            f"**From bones only against Blender's Automatic Weights** ({a['character']}, the elbow "
            f"{a['elbow'][0]} → {a['elbow'][1]} bent 90° in the rest pose, the add-on's tet mesh, "
            f"{a['automatic_tets']:,} tets): Blender's one-click weights (bone heat) under linear blend skinning "
            "against the physics skin from bones only, which uses no weights; the painted weights beside them.  "
            "Regions by the bones' distance weights: the bent limb (both bones above a half) and the joint "
            "(each above 5 %).",
            "",
        ]
        L += table(["method", *[f"{r}: ΔV, inverted" for r in REGIONS.values()], "pinned"], report_rows(a))
    return L


def _energy_lines(e: dict[str, Any], table: Callable[[list[str], list[list[Any]]], list[str]]) -> list[str]:
    L = [
        f"**The seed's mixed energy against the shipped one** on the {e['vertices']:,}-vertex limb "
        f"({e['tets']:,} tets; smooth weights {100 * e['pinned_share']['smooth']:.1f} % pinned, from bones only "
        f"{100 * e['pinned_share']['bones']:.1f} %, soft): total volume change, inverted tets, frames per second "
        "of one pose (median of the repeats; the mixed energy refactors its matrix every frame, as the seed does).",
        "",
    ]
    L += table(
        ["bend, twist [°]", *[f"{label}: ΔV, inverted, fps" for label in ENERGIES.values()]],
        [
            [
                f"{r['bend']:g}, {r['twist']:g}",
                *[f"{r[k]['volume_change_pct']:+.1f} %, {r[k]['inverted']}, {r[k]['fps']:.3g}" for k in ENERGIES],
            ]
            for r in e["rows"]
        ],
    )
    L += [
        "Why the literal mixed energy grows: the tets' mean det F by their turn away from their rotation R, "
        "against 1 / cos² of the turn (the minimum of Psi(sym(RᵀF)) for a turned tet, `core/physskin/mixed.py`):",
        "",
    ]
    body = []
    for r in e["rows"]:
        for k in ("mixed", "bones_mixed"):
            bins = "; ".join(
                f"{b['from']:g}–{b['to']:g}°: {b['tets']} tets, det F {b['det']:.2f} vs {b['predicted']:.2f}"
                for b in r[k]["misfit"]
            )
            body.append([f"{r['bend']:g}, {r['twist']:g}", ENERGIES[k], bins])
    return L + table(["bend, twist [°]", "energy", "turn away from R: tets, mean det F vs 1 / cos²"], body)
