"""Section 7: physics skinning (Song et al., seed 004; issue 15): frame rate, prefactorisation, volume.

The meshes are one limb at three resolutions chosen to match the seed's Table 1
sizes: a 4 x 1 bar of (nx, nw, nw) cubes, 6 tets each, its square section mapped
onto the disk of radius 0.5 (the cylinder of ``tests/core/physskin``), bound to two
bones (heads (0, 0, 0) and (2, 0, 0)) by hat weights that blend over x in [1, 3].
The rig plays a bend of 0 -> 120° about z at the joint together with a twist of
0 -> 180° about the limb's axis, over 48 frames.  Each frame computes the tets'
blended rotations from the bones and then the positions, with the character
pipeline's own builder (:class:`PhysicsRig`: pins at the default Pin Depth,
Lamé parameters from E = 10 kPa):

* ``arap``: nu = 0, one prefactored scalar back-substitution per frame;
* ``warm``: nu = 0.45, preconditioned CG started from the previous frame's answer
  (``guess=``), playing forward;
* ``cold``: nu = 0.45, the seed's linear solve: CG started from the same frame's
  ARAP answer (scrubbing equals the bake);
* ``shipped``: what the add-on runs (``PhysicsRig.positions``): the ARAP answer and
  Gauss-Newton steps with a line search on the exact volume until a step moves the
  flesh by less than 1e-3 of the size (``core/physskin/rig.py`` says why it does not
  start from ``cold``);
* ``direct``: nu = 0.45, ``direct_positions``: assemble and factor A(R) every
  frame, the seed's per-frame structure (Algorithm 1) and our exact reference.

They are timed in the bench's own process (pinned to one BLAS/OpenMP thread by
``peers/pinning.py`` like every process of the suite) in rounds of
arap warm cold direct direct cold warm arap: a palindrome, so a drift that is
linear over a round cancels from every pair's ratio, as in A B B A.  A block
plays the 48 frames (the refactor plays every 8th frame: 6 frames take about as
long as the others' 48); each block's figure is seconds per frame.  A ratio is
the median of the per-round ratios with quartiles and range (``paired.spread``).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from core.geometry.tetmesh import TetMesh, signed_volumes
from core.linalg.spd import SPDSolver
from core.model.materials import Material
from core.model.rig import lbs_positions
from core.physskin.assignment import assign_tets
from core.physskin.rig import PhysicsRig
from core.physskin.rotations import blended_rotations, tet_rotations
from core.physskin.solve import PhysicsSkin
from core.settings import core_default
from core.validation.scenes import chain_weights
from testkit.limb import HEADS, JOINTS, LENGTH, POISSON, TAILS, YOUNGS, build_rig, cylinder_mesh, limb_pose

from .common import Context, markdown_table, time_calls
from .paired import paired_ratio, palindrome
from .peers.pinning import pin_threads
from .physskin_autoweights import figures_in_own_process
from .physskin_convergence import convergence_row, spread_poses
from .physskin_convergence import report_lines as convergence_lines
from .physskin_sources import energy_table, source_row, sources_behind, sources_report_lines, sources_summary

BEND_DEG, TWIST_DEG = 120.0, 180.0

# Cells (along, across): 2,673 / 4,400 / 5,929 vertices against the seed's 2,733 / 4,371 / 5,922.
SIZES = ((32, 8), (43, 9), (48, 10))
QUICK_SIZES = ((8, 2), (12, 3))
FRAMES, ROUNDS, DIRECT_EVERY, BUILD_REPEATS = 48, 6, 8, 3
QUICK = {"frames": 6, "rounds": 1, "direct_every": 3, "build_repeats": 1}

# Seed Table 1 (its 8-core i9-11950H, Windows, Python 3.10 with numpy/scipy): frames per second.
SEED_MACHINE = "8-core Intel i9-11950H (2.60 GHz), Windows, Python 3.10.10, numpy/scipy"
SEED_TABLE1 = (("flour sack", 2733, 11193, 1.713), ("turtle", 4371, 16728, 1.295), ("human", 5922, 21155, 1.078))
GOAL_FPS = 30.0  # issue 15: at 6k vertices on 2 cores
GOAL_VERTICES = 6000
GOAL_CHECKED_FROM = 5000  # the goal is checked on the mesh nearest 6k vertices when it has at least this many
VOLUME_GOAL_PCT = 2.0  # issue 15: a 180° twist keeps the volume within 2 %

VARIANTS = {
    "arap": "ARAP (ν = 0), prefactored",
    "warm": "co-rotational ν = 0.45, warm (previous frame)",
    "cold": "co-rotational ν = 0.45, cold",
    "shipped": "ARAP + searched volume steps (shipped)",
    "direct": "per-frame refactor (seed's structure)",
}
ORDER = ("arap", "warm", "cold", "shipped", "direct")
FAST = ("arap", "warm", "cold", "shipped")  # the variants measured against the frame-rate goal
# The ones the summary's "behind" list holds to it: what a user runs (ARAP at Poisson 0, the shipped
# path otherwise); warm and cold are the seed's linear solve, measured beside them.
GOAL_VARIANTS = ("arap", "shipped")
# Volume sweep: what is compared, in the plot's and the table's order.
METHODS = {
    "lbs": "LBS",
    "blended": "physics, blended rotations, ν = 0.45",
    "shipped": "as shipped: blended, ν = 0.45, ARAP + volume step",
    "blended_arap": "physics, blended rotations, ARAP",
    "per_bone": "physics, per-bone rotations (seed), ν = 0.45",
}


def _speed_row(ctx: Context, cells: tuple[int, int], frames: int, rounds: int, every: int, repeats: int) -> dict:
    mesh = cylinder_mesh(*cells)
    poses = [limb_pose(BEND_DEG * s, TWIST_DEG * s) for s in np.linspace(0.0, 1.0, frames)]
    direct_poses = poses[::every]
    mat = Material.uniform(mesh.t, YOUNGS, POISSON, 1000.0)

    # Prefactorisation: the whole builder (pins, weights, LBS basis, factors) and the solve's factors alone.
    build_arap = time_calls(lambda: build_rig(mesh, 0.0), repeats, warmup=0)
    build_corot = time_calls(lambda: build_rig(mesh, POISSON), repeats, warmup=0)
    arap, corot = build_rig(mesh, 0.0), build_rig(mesh, POISSON)
    pins, pin_bone = corot.skin.pins, corot.skin.pin_bone
    build_skin = time_calls(lambda: PhysicsSkin.build(mesh, mat.mu, mat.lam, pins, pin_bone), repeats, warmup=0)
    tw = corot.tet_weights
    iterations: dict[str, list[int]] = {"warm": [], "cold": []}

    def play_arap() -> float:
        t0 = time.perf_counter()
        for A in poses:
            arap.skin.positions(A, blended_rotations(A, arap.tet_weights))
        return (time.perf_counter() - t0) / len(poses)

    def play_warm() -> float:
        x = None
        its = []
        t0 = time.perf_counter()
        for A in poses:
            x = corot.skin.positions(A, blended_rotations(A, tw), guess=x)
            its.append(corot.skin.last_iterations)
        s = (time.perf_counter() - t0) / len(poses)
        iterations["warm"] += its
        return s

    def play_cold() -> float:
        its = []
        t0 = time.perf_counter()
        for A in poses:
            corot.skin.positions(A, blended_rotations(A, tw))
            its.append(corot.skin.last_iterations)
        s = (time.perf_counter() - t0) / len(poses)
        iterations["cold"] += its
        return s

    def play_shipped() -> float:
        t0 = time.perf_counter()
        for A in poses:
            corot.positions(A.ravel())  # blended rotations, the ARAP answer and the volume step
        return (time.perf_counter() - t0) / len(poses)

    def play_direct() -> float:
        t0 = time.perf_counter()
        for A in direct_poses:
            corot.skin.direct_positions(A, blended_rotations(A, tw))
        return (time.perf_counter() - t0) / len(direct_poses)

    blocks = {"arap": play_arap, "warm": play_warm, "cold": play_cold, "shipped": play_shipped, "direct": play_direct}
    for fn in blocks.values():  # one untimed pass of each: caches, allocator, lazy imports
        fn()
    for its in iterations.values():
        its.clear()
    paired = palindrome(blocks, rounds)
    ta, tb = paired["times"]["warm"], paired["times"]["cold"]

    # Accuracy against the exact per-frame solve, at the refactor's frames (untimed).
    x_warm: list[np.ndarray] = []
    x = None
    for k, A in enumerate(poses):
        x = corot.skin.positions(A, blended_rotations(A, tw), guess=x)
        if k % every == 0:
            x_warm.append(x)
    err_warm = err_cold = 0.0
    for A, xw in zip(direct_poses, x_warm):
        R = blended_rotations(A, tw)
        exact = corot.skin.direct_positions(A, R)
        err_warm = max(err_warm, float(np.abs(xw - exact).max()))
        err_cold = max(err_cold, float(np.abs(corot.skin.positions(A, R) - exact).max()))

    breakdown = _cold_breakdown(corot, poses)
    times = paired["times"]
    row = {
        "cells": list(cells),
        "vertices": mesh.n,
        "tets": mesh.t,
        "pins": len(pins),
        "frames": len(poses),
        "direct_frames": len(direct_poses),
        "direct_every": every,
        "seconds_per_frame": times,
        "fps": {k: 1.0 / t.median for k, t in times.items()},
        "fps_range": {k: [1.0 / t.max, 1.0 / t.min] for k, t in times.items()},
        "ratio_over_direct": {k: paired_ratio(paired, k, "direct") for k in FAST},
        "ratio_warm_over_cold": paired_ratio(paired, "warm", "cold"),
        "rounds": rounds,
        "iterations_mean": {k: float(np.mean(v)) for k, v in iterations.items()},
        "iterations_range": {k: [int(min(v)), int(max(v))] for k, v in iterations.items()},
        "max_error_over_size": {"warm": err_warm / LENGTH, "cold": err_cold / LENGTH},
        "build": {"rig_arap": build_arap, "rig_corotational": build_corot, "skin_corotational": build_skin},
        "cold_breakdown": breakdown,
    }
    ctx.log(
        f"  physskin n={mesh.n} t={mesh.t} pins={len(pins)}: "
        + ", ".join(f"{k} {row['fps'][k]:.3g} fps" for k in ORDER)
        + f"; warm/direct {row['ratio_over_direct']['warm']['median']:.3f}, "
        f"warm/cold {row['ratio_warm_over_cold']['median']:.3f}; "
        f"CG iterations warm {row['iterations_mean']['warm']:.1f}, cold {row['iterations_mean']['cold']:.1f}; "
        f"build ARAP {build_arap.s()}, nu=0.45 {build_corot.s()}; per-frame warm {ta.ms()}, cold {tb.ms()}"
    )
    return row


def _cold_breakdown(rig: PhysicsRig, poses: list[np.ndarray]) -> dict[str, float]:
    """Where a cold co-rotational frame's time goes, measured inside the frames (one untimed-for-ratios pass).

    The skin's two scalar factors (the ARAP factor, used for the start, and the preconditioner) are
    wrapped for the pass in solvers that add up their own time.  Returns per-frame means (seconds):
    frame, back_substitutions, rotations, and solves_per_frame.
    """
    skin = rig.skin
    spent = {"seconds": 0.0, "calls": 0}

    def timed(solver: SPDSolver) -> SPDSolver:
        def solve(B: np.ndarray) -> np.ndarray:
            t0 = time.perf_counter()
            out = solver.solve(B)
            spent["seconds"] += time.perf_counter() - t0
            spent["calls"] += 1
            return out

        return SPDSolver(solver.backend, solve)

    factor, precondition = skin.factor, skin.precondition
    rotations = 0.0
    skin.factor = timed(factor)
    skin.precondition = timed(precondition) if precondition is not None else None
    try:
        t0 = time.perf_counter()
        for A in poses:
            t1 = time.perf_counter()
            R = blended_rotations(A, rig.tet_weights)
            rotations += time.perf_counter() - t1
            skin.positions(A, R)
        total = time.perf_counter() - t0
    finally:
        skin.factor, skin.precondition = factor, precondition
    n = len(poses)
    return {
        "frame": total / n,
        "back_substitutions": spent["seconds"] / n,
        "rotations": rotations / n,
        "solves_per_frame": spent["calls"] / n,
    }


def volume_sweeps(mesh: TetMesh, twists: np.ndarray, bends: np.ndarray) -> dict[str, Any]:
    """Total signed volume change (%) and inverted tets of every method over a twist and a bend sweep."""
    W = chain_weights(mesh.X, JOINTS)
    corot, arap = build_rig(mesh, POISSON), build_rig(mesh, 0.0)
    tet_bone = assign_tets(mesh.X, mesh.T, HEADS, TAILS)
    V0 = float(mesh.volumes.sum())
    pinned = np.zeros(mesh.n, dtype=bool)
    pinned[corot.skin.pins] = True  # the same pins at both materials: they depend on weights and bones only
    at_pins = pinned[mesh.T].any(axis=1)

    def measure(A: np.ndarray) -> dict[str, dict[str, float]]:
        xs = {
            "lbs": lbs_positions(mesh.X, W, A),
            "blended": corot.skin.positions(A, blended_rotations(A, corot.tet_weights)),
            "shipped": corot.positions(A.ravel()),
            "blended_arap": arap.skin.positions(A, blended_rotations(A, arap.tet_weights)),
            "per_bone": corot.skin.positions(A, tet_rotations(A, tet_bone)),
        }
        out = {}
        for k, x in xs.items():
            v = signed_volumes(x, mesh.T)
            out[k] = {
                "volume_change_pct": 100.0 * (float(v.sum()) / V0 - 1.0),
                "inverted": int((v <= 0).sum()),
                "inverted_touching_pins": int(((v <= 0) & at_pins).sum()),
            }
        return out

    return {
        "vertices": mesh.n,
        "tets": mesh.t,
        "pins": len(corot.skin.pins),
        "twist": [{"angle_deg": float(a), **measure(limb_pose(0.0, a))} for a in twists],
        "bend": [{"angle_deg": float(a), **measure(limb_pose(a, 0.0))} for a in bends],
    }


def run(ctx: Context) -> dict:
    threads = pin_threads()  # main() pinned already; this records what every library now uses
    load_before = os.getloadavg()
    q = ctx.quick
    frames = QUICK["frames"] if q else FRAMES
    rounds = QUICK["rounds"] if q else ROUNDS
    every = QUICK["direct_every"] if q else DIRECT_EVERY
    repeats = QUICK["build_repeats"] if q else BUILD_REPEATS
    rows = [_speed_row(ctx, cells, frames, rounds, every, repeats) for cells in (QUICK_SIZES if q else SIZES)]
    if q:
        vmesh, twists, bends = cylinder_mesh(12, 3), np.array([0.0, 90.0, 180.0]), np.array([0.0, 75.0, 150.0])
    else:
        vmesh, twists, bends = cylinder_mesh(32, 8), np.arange(0.0, 181.0, 15.0), np.arange(0.0, 151.0, 15.0)
    volume = volume_sweeps(vmesh, twists, bends)
    motion = [limb_pose(BEND_DEG * s, TWIST_DEG * s) for s in np.linspace(0.0, 1.0, frames)]
    sources = [source_row(ctx, cells, motion, max(1, rounds // 3)) for cells in (QUICK_SIZES if q else SIZES)]
    energy = energy_table(QUICK_SIZES[1] if q else SIZES[0], 1 if q else 3)
    convergence = convergence_row(QUICK_SIZES[1] if q else SIZES[0], spread_poses(motion, 3 if q else 13))
    autoweights = None if q else figures_in_own_process()  # imports bpy: a child process, about 15 s
    last = volume["twist"][-1]
    ctx.log(
        f"  physskin volume at {last['angle_deg']:.0f}° twist: "
        + ", ".join(f"{k} {last[k]['volume_change_pct']:+.1f} % ({last[k]['inverted']} inverted)" for k in METHODS)
    )
    result = {
        "rows": rows,
        "volume": volume,
        "sources": sources,
        "energy": energy,
        "convergence": convergence,
        "autoweights": autoweights,
        "motion": {"bend_deg": BEND_DEG, "twist_deg": TWIST_DEG, "frames": frames},
        "poisson": POISSON,
        "pin_depth": float(core_default("pin_depth")),
        "threads": threads,
        "load_average": {"before": list(load_before), "after": list(os.getloadavg())},
        "goal_fps": GOAL_FPS,
        "seed": {"machine": SEED_MACHINE, "table1": [list(r) for r in SEED_TABLE1]},
    }
    try:
        _plot(ctx, result)
    except ImportError:  # matplotlib is in the main environment; a bare one still gets the numbers
        pass
    return result


# --- the report -----------------------------------------------------------------------------------


def _goal_row(p: dict) -> dict | None:
    """The row the 30 fps goal is checked on: the mesh nearest 6k vertices, if it is big enough."""
    row = min(p["rows"], key=lambda r: abs(r["vertices"] - GOAL_VERTICES))
    return row if row["vertices"] >= GOAL_CHECKED_FROM else None


def _seed_match(vertices: int) -> tuple[str, int, int, float]:
    name, v, t, fps = min(SEED_TABLE1, key=lambda r: abs(r[1] - vertices))
    return name, v, t, fps


def _fps(row: dict, k: str) -> str:
    lo, hi = row["fps_range"][k]
    return f"{row['fps'][k]:.3g} ({lo:.3g}–{hi:.3g})"


def _q(q: dict) -> str:
    return f"{q['median']:.3f} (IQR {q['q1']:.3f}–{q['q3']:.3f}; range {q['min']:.3f}–{q['max']:.3f})"


def summary_rows(p: dict) -> list[list[str]]:
    """The README summary's physics-skin line (the mesh nearest 6k vertices)."""
    row = min(p["rows"], key=lambda r: abs(r["vertices"] - GOAL_VERTICES))
    f = row["fps"]
    seed = _seed_match(row["vertices"])
    speedup = 1.0 / row["ratio_over_direct"]["shipped"]["median"]
    return [
        [
            f"physics skin, {row['vertices']:,} vertices, {row['frames']}-frame bend + twist: ARAP / "
            "ν = 0.45 as shipped (ARAP answer + volume step) / per-frame refactor (the paper's structure)",
            f"{f['arap']:.3g} / {f['shipped']:.3g} / {f['direct']:.3g} fps "
            f"(physics-skinning paper's {seed[0]} model: {seed[3]} fps on its own machine)",
            f"shipped {speedup:.1f}× the refactor, paired; goal ≥ {GOAL_FPS:g} fps",
        ]
        if "sources" not in p
        else sources_summary(p, row, seed),
    ]


def behind(p: dict) -> list[str]:
    """Every variant below the frame-rate goal at ~6k vertices, and a 180° twist losing more than 2 %."""
    out = []
    row = _goal_row(p)
    if row is not None:
        for k in GOAL_VARIANTS:
            if row["fps"][k] < GOAL_FPS:
                out.append(
                    f"Physics skin, {VARIANTS[k]}, runs at {row['fps'][k]:.3g} fps at {row['vertices']:,} vertices "
                    f"(goal ≥ {GOAL_FPS:g} fps at 6k vertices on 2 cores, issue 15)."
                )
    twist = p["volume"]["twist"]
    last = twist[-1]
    if last["angle_deg"] >= 180.0 and abs(last["shipped"]["volume_change_pct"]) > VOLUME_GOAL_PCT:
        out.append(
            f"Physics skin (as shipped: blended rotations, ν = 0.45, volume step) changes the volume by "
            f"{last['shipped']['volume_change_pct']:+.2f} % at a 180° twist (goal within ±{VOLUME_GOAL_PCT:g} %)."
        )
    return out + (sources_behind(p) if "sources" in p else [])


def report_lines(p: dict) -> list[str]:
    """Section 7 of REPORT.md."""
    rows = p["rows"]
    m = p["motion"]
    L = [
        "## 7. Physics skinning (Song et al., issue 15)",
        "",
        f"One limb at three resolutions sized like the seed's Table 1 meshes: a 4 × 1 bar of nx × nw × nw cubes "
        "(6 tets each; more tets per vertex than the seed's fTetWild meshes), its section mapped onto a disk of "
        "radius 0.5, bound to two bones (hat weights blending over the middle half).  The rig plays a bend "
        f"0 → {m['bend_deg']:g}° at the joint together with a twist 0 → {m['twist_deg']:g}° over {m['frames']} "
        f"frames.  Built by the pipeline's `PhysicsRig.build` (Pin Depth {p['pin_depth']:g}); the outer "
        "quarters are weighted to one bone alone, so their vertices are pinned (the *pins* column; the add-on "
        "pins every such vertex since RobotExpressive's glued head): the solve covers the blended middle half "
        "and a rim of the rest.  Every frame "
        "computes the tets' blended rotations and then the positions.  Variants: *ARAP* (ν = 0, one prefactored "
        f"scalar back-substitution); *co-rotational* ν = {p['poisson']:g}, preconditioned CG started from the "
        "previous frame (*warm*, `guess=`) or from the frame's own ARAP answer (*cold*: scrubbing equals the "
        "bake; the seed's linear solve); *shipped*: the ARAP answer followed by searched Gauss-Newton steps on "
        "the exact volume until converged (1e-3 of the size) (`PhysicsRig.positions`, what the add-on runs); "
        "the *per-frame refactor* "
        "(`direct_positions`: assemble and factor A(R) every frame, the seed's Algorithm 1 and our exact "
        f"reference; it plays one frame in {rows[0]['direct_every']} of the same motion).",
        "",
        "All five run in the bench's one process in rounds of arap warm cold shipped direct and back (a "
        "palindrome: a drift linear over the round cancels from every pair, as in A B B A); frames per second "
        "are 1 / the median seconds per frame over every block of a variant (range over blocks); each ratio is "
        "the median of the per-round ratios with quartiles (IQR) and range.  Conditions: " + _conditions(p) + ".",
        "",
    ]
    L += markdown_table(
        [
            "vertices",
            "tets",
            "pins",
            *[f"{VARIANTS[k]} [fps]" for k in ORDER],
            "CG iterations warm / cold (range)",
            f"≥ {p['goal_fps']:g} fps (arap / warm / cold / shipped)",
            "seed Table 1, nearest size [fps]",
        ],
        [
            [
                f"{r['vertices']:,}",
                f"{r['tets']:,}",
                f"{r['pins']:,}",
                *[_fps(r, k) for k in ORDER],
                f"{r['iterations_mean']['warm']:.1f} / {r['iterations_mean']['cold']:.1f} "
                f"({r['iterations_range']['warm'][0]}–{r['iterations_range']['warm'][1]} / "
                f"{r['iterations_range']['cold'][0]}–{r['iterations_range']['cold'][1]})",
                " / ".join("yes" if r["fps"][k] >= p["goal_fps"] else "**no**" for k in FAST),
                "{} ({:,} v / {:,} t): {}".format(*_seed_match(r["vertices"]))
                + f"; ours shipped ÷ seed {r['fps']['shipped'] / _seed_match(r['vertices'])[3]:.1f}×",
            ]
            for r in rows
        ],
    )
    goal = _goal_row(p)
    if goal is not None:
        met = [VARIANTS[k] for k in FAST if goal["fps"][k] >= p["goal_fps"]]
        missed = [
            f"{VARIANTS[k]} ({goal['fps'][k]:.3g} fps, {goal['fps'][k] / p['goal_fps']:.2f}× the goal)"
            for k in FAST
            if goal["fps"][k] < p["goal_fps"]
        ]
        L += [
            f"**Goal (issue 15): ≥ {p['goal_fps']:g} fps at 6k vertices on 2 cores** (checked at "
            f"{goal['vertices']:,} vertices): met by {', '.join(met) or 'no variant'}; "
            f"missed by {', '.join(missed) or 'none'}.",
            "",
        ]
    L += ["Paired ratios of seconds per frame (lower: faster than the reference):", ""]
    L += markdown_table(
        [
            "vertices",
            "warm / refactor",
            "cold / refactor",
            "shipped / refactor",
            "ARAP / refactor",
            "warm / cold",
            "rounds",
            "max |x − exact| / size, warm / cold",
        ],
        [
            [
                f"{r['vertices']:,}",
                _q(r["ratio_over_direct"]["warm"]),
                _q(r["ratio_over_direct"]["cold"]),
                _q(r["ratio_over_direct"]["shipped"]),
                _q(r["ratio_over_direct"]["arap"]),
                _q(r["ratio_warm_over_cold"]),
                r["rounds"],
                f"{r['max_error_over_size']['warm']:.1e} / {r['max_error_over_size']['cold']:.1e}",
            ]
            for r in rows
        ],
    )
    L += [
        "The CG stops when the residual has fallen to 1e-6 of its *starting* residual, so a warm start from "
        "the previous frame (a smaller start) buys accuracy (the error column), not fewer iterations.",
        "",
        "Prefactorisation (seconds, median (min–max)); the pipeline builds it once per character and Pin Depth.  "
        "Beside it, a cold frame's time split, from one more pass over the motion apart from the rounds:",
        "",
    ]
    L += markdown_table(
        [
            "vertices",
            "PhysicsRig.build, ARAP [s]",
            "PhysicsRig.build, ν = 0.45 [s]",
            "PhysicsSkin.build alone, ν = 0.45 [s]",
            "cold frame, measured apart [ms]",
            "of it: back-substitutions [ms] (per frame, %)",
            "of it: blended rotations [ms]",
        ],
        [
            [
                f"{r['vertices']:,}",
                _s(r["build"]["rig_arap"]),
                _s(r["build"]["rig_corotational"]),
                _s(r["build"]["skin_corotational"]),
                f"{1e3 * r['cold_breakdown']['frame']:.3g}",
                f"{1e3 * r['cold_breakdown']['back_substitutions']:.3g} "
                f"({r['cold_breakdown']['solves_per_frame']:.1f}, "
                f"{100 * r['cold_breakdown']['back_substitutions'] / r['cold_breakdown']['frame']:.0f} %)",
                f"{1e3 * r['cold_breakdown']['rotations']:.3g}",
            ]
            for r in rows
        ],
    )
    if goal is not None:
        b = goal["cold_breakdown"]
        rest = b["frame"] - b["back_substitutions"] - b["rotations"]
        L += [
            f"Where a cold co-rotational frame goes at {goal['vertices']:,} vertices (its {goal['frames']} frames "
            f"played once more, apart from the rounds, the two scalar factors wrapped in timers): "
            f"{1e3 * b['frame']:.0f} ms a frame, of which {b['solves_per_frame']:.1f} scalar back-substitutions "
            f"(one per CG iteration and the ARAP start) {1e3 * b['back_substitutions']:.0f} ms "
            f"({100 * b['back_substitutions'] / b['frame']:.0f} %), the blended rotations "
            f"{1e3 * b['rotations']:.1f} ms, and the rest (A(R) products, D(R) and the right-hand side, CG vector "
            f"work) {1e3 * rest:.0f} ms.  {p['goal_fps']:g} fps leaves {1e3 / p['goal_fps']:.0f} ms per frame.",
            "",
        ]
    L += [f"The seed's Table 1 ({p['seed']['machine']}; its thread count is not stated):", ""]
    L += markdown_table(
        ["model", "vertices", "tets", "frames per second"],
        [[n, f"{v:,}", f"{t:,}", f"{fps}"] for n, v, t, fps in p["seed"]["table1"]],
    )
    vol = p["volume"]
    L += [
        f"**Volume against LBS** on the {vol['vertices']:,}-vertex limb ({vol['tets']:,} tets, {vol['pins']} pins "
        "at ν = 0.45): total signed volume change and inverted tets (signed volume ≤ 0), bone 1 twisted about "
        "the axis, then bent about z at the joint (no twist).  *Per-bone* gives each tet its bone's rotation (the "
        "seed's clusters); *blended* blends the bones' rotations with the tet's weights (the seed's linear solve); "
        "*as shipped* is what the add-on runs: the ARAP answer and searched Gauss-Newton steps on the exact volume "
        "(det F).  "
        "*At pins*: inverted tets with a pinned vertex (pins follow one bone rigidly; the solve cannot move them).",
        "",
    ]
    head = ["motion", "angle [°]", *[f"{label}: ΔV %, inverted" for label in METHODS.values()]]
    body = []
    for kind in ("twist", "bend"):
        for r in vol[kind]:
            if r["angle_deg"] % 30.0 == 0.0 or len(vol[kind]) <= 4:
                body.append(
                    [
                        kind,
                        f"{r['angle_deg']:g}",
                        *[_volume_cell(r[k], k != "lbs") for k in METHODS],
                    ]
                )
    L += markdown_table(head, body)
    if "sources" in p:
        L += sources_report_lines(p, markdown_table)
    if "convergence" in p:
        L += convergence_lines(p["convergence"], markdown_table)
    L += [
        "![physics skin frame rate](plots/physskin_fps.png)",
        "",
        "![physics skin volume](plots/physskin_volume.png)",
        "",
    ]
    return L


def _volume_cell(m: dict, pins: bool) -> str:
    """ΔV and inverted tets; for the physics skin also how many of those touch a pinned vertex."""
    cell = f"{m['volume_change_pct']:+.1f} %, {m['inverted']}"
    if pins and m["inverted"] and "inverted_touching_pins" in m:
        cell += f" ({m['inverted_touching_pins']} at pins)"
    return cell


def _conditions(p: dict) -> str:
    t = p.get("threads", {})
    env = ", ".join(f"{k}={v}" for k, v in t.get("env", {}).items())
    libs = ", ".join(f"{k.split('-')[0].removeprefix('lib')} {v}" for k, v in t.get("openblas", {}).items())
    la = p.get("load_average", {})
    load = " → ".join(f"{x[0]:.2f}" for x in (la.get("before"), la.get("after")) if x)
    return f"{env}; OpenBLAS threads: {libs or 'none loaded'}; 1-minute load average {load} (before → after)"


def _s(x: dict) -> str:
    return f"{x['median']:.3g} ({x['min']:.3g}–{x['max']:.3g})"


def _plot(ctx: Context, res: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res["rows"]
    n = [r["vertices"] for r in rows]
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    for k in ORDER:
        med = np.array([r["fps"][k] for r in rows])
        lo = med - [r["fps_range"][k][0] for r in rows]
        hi = [r["fps_range"][k][1] for r in rows] - med
        ax.errorbar(n, med, yerr=[lo, hi], marker="o", capsize=3, label=VARIANTS[k])
    seed = sorted(res["seed"]["table1"], key=lambda r: r[1])
    ax.plot([r[1] for r in seed], [r[3] for r in seed], "k*", ms=10, label="seed Table 1 (its 8-core machine)")
    ax.axhline(res["goal_fps"], color="grey", ls="--", lw=1, label=f"goal {res['goal_fps']:g} fps (issue 15)")
    ax.set_yscale("log")
    ax.set_xlabel("tet-mesh vertices")
    ax.set_ylabel("frames per second (1 thread)")
    ax.set_title(f"physics skin, {res['motion']['frames']}-frame bend + twist")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(ctx.plot_path("physskin_fps"), dpi=100)
    plt.close(fig)

    vol = res["volume"]
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex="col")
    for col, kind in enumerate(("twist", "bend")):
        angles = [r["angle_deg"] for r in vol[kind]]
        for k, label in METHODS.items():
            style = "k--" if k == "lbs" else "-"
            axes[0, col].plot(angles, [r[k]["volume_change_pct"] for r in vol[kind]], style, marker="o", label=label)
            axes[1, col].plot(angles, [r[k]["inverted"] for r in vol[kind]], style, marker="o", label=label)
        axes[0, col].set_title(f"{kind} at the joint ({vol['vertices']:,} vertices, {vol['tets']:,} tets)")
        axes[0, col].set_ylabel("total volume change [%]")
        axes[0, col].axhline(0.0, color="grey", lw=0.8)
        axes[1, col].set_ylabel("inverted tets")
        axes[1, col].set_xlabel(f"{kind} angle [°]")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("physskin_volume"), dpi=100)
    plt.close(fig)
