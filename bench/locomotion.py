"""Modal actuation locomotion (issue 26, seed 002): a gait search and the crawl it finds, on two creatures.

A legless blob (an ellipsoid 1 m long with a flat sole) and a four-legged soft box (0.8 m
long), both unions of lattice cubes with 6 tets each (``core.locomotion.creatures``), E = 50
kPa, nu = 0, 1000 kg/m^3, on flat ground with Coulomb friction mu = 0.8 (a stiff one-sided
penalty per sample, every boundary vertex a sample), gravity 9.81 m/s^2.  Subspace: 5
unconstrained skinning modes (q = 20), 5 passive clusters, 1 actuation cluster, 6 actuation modes
with one sinusoid each (18 parameters; amplitude bound 0.3 radii), actuation stiffness 2 mu, steps
of 1/30 s, local-global to 1e-4 of the radius. CMA-ES (ours, numpy) from a still start, seed 0, step
size 2, three seeded restarts of 16 generations x 12, each rollout 90 steps (3 s), each restart's four
best judged on a 10 s replay; one process, one BLAS thread. The blob is also built at about 10k and 40k
vertices (lattice cells of 2.2 and 1.4 cm); those are searched on its 724-vertex lattice and the gait carried
back and refined (``core/locomotion/coarse.py``). The found gait is then replayed for 10 s (300
steps) and measured on every vertex and tet. The seed's Table 1 runs 200 generations of 16 with
200-300 steps on unnamed hardware; our budget is
stated beside every figure.

Also writes ``locomotion.md`` (the same table and plot, ``report_lines``)
into the output folder, so the section can be read on its own, and a picture strip of the small
creatures' gaits (``plots/locomotion_strip.png``); ``python -m bench.locomotion --strip`` redraws the
strip (and the resolution table, if that run lacks it) from the gaits of the last run in
``bench/results.json``, without searching again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from core.geometry.tetmesh import boundary_faces
from core.locomotion.coarse import is_large, search_coarse
from core.locomotion.creatures import RECIPES, Recipe, coarse_recipe, crawl_report, creature_mesh, creature_problem
from core.locomotion.gait import find_gait, rollout
from core.locomotion.transfer import match_modes, mode_overlaps, transfer_gait

from .common import Context, cpu_name, machine_info

# The seed's Table 1 (Benchekroun et al.): vertices, tets, optimisation seconds (200 x 16 rollouts).
SEED_TABLE1 = [
    ("Bat", 9_266, 34_720, 900.0),
    ("Couch", 13_920, 64_154, 984.0),
    ("Treefrog", 13_771, 54_154, 1_280.0),
    ("Octopus", 13_893, 48_514, 3_590.0),
    ("Creepy Tree", 42_015, 200_487, 3_300.0),
    ("Bearded Dragon", 45_041, 180_406, 1_270.0),
]

# name, recipe: the two test creatures, and the blob at about 10k and 40k vertices (the seed's sizes); the large
# ones are searched on the blob's coarse lattice and carried back (``core/locomotion/coarse.py``), the default.
RUNS = [
    ("blob", RECIPES["blob"]),
    ("quadruped", RECIPES["quadruped"]),
    ("blob, ~10k vertices", dataclasses.replace(RECIPES["blob"], cell=0.022)),
    ("blob, ~40k vertices", dataclasses.replace(RECIPES["blob"], cell=0.014)),
]
QUICK = [
    (
        "quadruped, coarse",
        Recipe("quadruped", cell=0.1, generations=2, population=4, steps=20, restarts=1, judge_steps=20),
    )
]
# Timed replays of the found gait (steps per rollout each) the per-step time is the fastest of: the machine
# is shared, and the fastest of a few is the least disturbed.
STEP_TIMINGS = 3


def step_ms(problem, x: np.ndarray) -> float:
    """Milliseconds per simulated step of one rollout of gait x (its problem's steps), the fastest of a few."""
    best = np.inf
    for _ in range(STEP_TIMINGS):
        t0 = time.perf_counter()
        rollout(problem, problem.sinusoids(x))
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best / problem.steps


def _search(recipe: Recipe, mesh, problem) -> tuple[object, dict]:
    """The recipe's whole budget (restarts, finalists judged on 10 s), as the tests' search_gait runs it: on the
    mesh itself, or for a large mesh on the shape's coarse lattice, carried back and refined.  Returns the gait
    and the row's search columns (the coarse model's build counted in the search's seconds)."""
    budget = dict(seed=0, sigma0=recipe.sigma0, restarts=recipe.restarts, judge_steps=recipe.judge_steps)
    if not (is_large(mesh) and recipe.cell < coarse_recipe(recipe).cell):
        gait = find_gait(problem, recipe.generations, recipe.population, **budget)
        return gait, {"optimisation_s": gait.seconds, "searched_vertices": mesh.n, "refine_generations": 0}
    t0 = time.perf_counter()
    small_recipe = coarse_recipe(recipe)
    small = creature_mesh(small_recipe)
    small_problem = creature_problem(small_recipe, recipe.steps, small)
    build = time.perf_counter() - t0
    found = search_coarse(problem, mesh, small_problem, small, recipe.generations, recipe.population, **budget)
    return found.gait, {
        "optimisation_s": build + found.gait.seconds,
        "coarse_search_s": found.coarse.seconds,
        "searched_vertices": small.n,
        "refine_generations": len(found.gait.history) - len(found.coarse.history),
        "carried_judged": found.carried,
        "coarse_judged": found.coarse.judged,
        "pairing": found.match.target.tolist(),
        "signs": found.match.sign.tolist(),
        "min_overlap": float(found.match.overlap.min()),
    }


def _one(name: str, recipe: Recipe, ctx: Context) -> dict:
    mesh = creature_mesh(recipe)
    t0 = time.perf_counter()
    problem = creature_problem(recipe, recipe.steps, mesh)
    precompute = time.perf_counter() - t0
    gait, searched = _search(recipe, mesh, problem)
    replay = 300 if recipe.steps >= 90 else recipe.steps
    f = crawl_report(recipe, gait.x, replay, mesh)
    row = {
        "creature": name,
        "vertices": mesh.n,
        "tets": mesh.t,
        "samples": len(problem.model.samples),
        "precompute_s": precompute,
        **searched,
        "rollouts": gait.evaluations,
        "restarts": recipe.restarts,
        "generations": recipe.generations,
        "population": recipe.population,
        "steps_per_rollout": recipe.steps,
        "ms_per_step": step_ms(problem, gait.x),
        **{k: float(v) for k, v in f.items() if k != "objective"},
        "objective": gait.objective,  # the search's best J over its 3 s rollouts (on the mesh played)
        "judged": gait.judged,
        "replay_objective": float(f["objective"]),  # J over the 10 s replay
        "history": gait.history.tolist(),
        "x": gait.x.tolist(),
    }
    ctx.log(
        f"  locomotion {name} ({mesh.n} v / {mesh.t} t, searched on {row['searched_vertices']} v): precompute "
        f"{precompute:.1f} s, search {row['optimisation_s']:.1f} s ({gait.evaluations} rollouts), "
        f"{row['ms_per_step']:.2f} ms/step, J = {gait.objective:.3f}, "
        f"{f['body_lengths']:.2f} body lengths / 10 s, heading {f['heading_deg']:.1f} deg, "
        f"deepest vertex {1e3 * f['deepest']:.2f} mm"
    )
    return row


# Finer meshes of the small creatures' shapes (lattice cell, m): the blob at 14x its vertices (the ~10k row's
# mesh), the quadruped at 6x (its legs and body stay whole numbers of cells, so the shape is the same).
FINER = {"blob": 0.022, "quadruped": 0.025}


def _resolution(runs: list[tuple[str, Recipe]], rows: list[dict]) -> list[dict]:
    """Each small creature's found gait replayed for 10 s on a finer mesh of its shape: as found (the same
    vector, so the mode indices the eigensolver gave the fine mesh) and carried by ``transfer.py``."""
    out = []
    for (name, recipe), row in zip(runs, rows):
        if name not in FINER:
            continue
        coarse, fine_recipe = creature_mesh(recipe), dataclasses.replace(recipe, cell=FINER[name])
        fine = creature_mesh(fine_recipe)
        a, b = creature_problem(recipe, 1, coarse).model, creature_problem(fine_recipe, 1, fine).model
        match = match_modes(mode_overlaps(coarse, a.modes.displacements, fine, b.modes.displacements))
        x = np.array(row["x"])
        as_found = crawl_report(fine_recipe, x, 300, fine)
        moved = crawl_report(fine_recipe, transfer_gait(x, match, b.m), 300, fine)
        out.append(
            {
                "creature": name,
                "coarse_vertices": coarse.n,
                "fine_vertices": fine.n,
                "coarse_body_lengths": row["body_lengths"],
                "coarse_objective": row["replay_objective"],
                "as_found_body_lengths": float(as_found["body_lengths"]),
                "body_lengths": float(moved["body_lengths"]),
                "objective": float(moved["objective"]),
                "heading_deg": float(moved["heading_deg"]),
                "deepest": float(moved["deepest"]),
                "inverted": int(moved["inverted"]),
                "pairing": match.target.tolist(),
                "signs": match.sign.tolist(),
                "min_overlap": float(match.overlap.min()),
            }
        )
    return out


def _resolution_lines(rows: list[dict]) -> list[str]:
    """The resolution table and what it shows."""
    if not rows:
        return []
    L = [
        "Resolution (issue 26: a coarse and a finer mesh of one shape reach a similar objective; "
        "tests/core/locomotion/test_resolution.py holds the blob at 10.3x its vertices to 10 %).  Each small "
        "creature's gait replayed for 10 s on a finer lattice of the same shape, as found (the same vector: "
        "entry i drives the fine mesh's mode i) and carried by `core/locomotion/transfer.py` (modes paired by "
        "their displacement fields):",
        "",
        "| creature | vertices, coarse -> fine | body lengths / 10 s, coarse | fine, as found | fine, transferred | "
        "J (10 s) coarse -> fine | heading fine (deg) | deepest fine (mm) | inverted | pairing (signs) | "
        "min mode overlap |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pairs = " ".join(f"{t + 1}{'-' if s < 0 else ''}" for t, s in zip(r["pairing"], r["signs"]))
        L.append(
            f"| {r['creature']} | {r['coarse_vertices']:,} -> {r['fine_vertices']:,} | "
            f"{r['coarse_body_lengths']:.2f} | {r['as_found_body_lengths']:.2f} | {r['body_lengths']:.2f} | "
            f"{r['coarse_objective']:.2f} -> {r['objective']:.2f} | {r['heading_deg']:.1f} | "
            f"{1e3 * r['deepest']:.2f} | {r['inverted']} | {pairs} | {r['min_overlap']:.3f} |"
        )
    L += [
        "",
        "The physics converges with the mesh; the order of the actuation modes does not: two modes of nearly "
        "equal frequency swap between resolutions (pairing: the fine mode each coarse mode plays as; '-': its "
        "sign flipped), so a gait vector means another gait on another mesh unless it is carried by its modes' "
        "fields.  This is what lets a large mesh be searched on a coarse copy (the table above's ~10k and ~40k "
        "rows): the carried gait plays on the fine mesh as it did on the coarse one.",
        "",
    ]
    return L


def _plot(ctx: Context, rows: list[dict]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the figures stand without their plot
        return None
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for r in rows:
        h, label = np.asarray(r["history"]), f"{r['creature']} ({r['vertices']:,} v)"
        g = np.arange(1, len(h) + 1)
        refine = int(r.get("refine_generations") or 0)
        if not refine:
            ax.plot(g, h, marker="o", ms=3, label=label, zorder=3)
            continue
        # a large mesh's search: the copy's generations (the same curve as the row searched on that copy)
        # thin and dashed, then the refinement's on the mesh itself
        (line,) = ax.plot(g[: len(h) - refine + 1], h[: len(h) - refine + 1], ls="--", lw=0.8, zorder=2)
        ax.plot(g[-refine:], h[-refine:], marker="o", ms=3, color=line.get_color(), label=f"{label}, refined")
    ax.set_xlabel("CMA-ES generation (restarts in turn; dashed: on the coarse copy)", fontsize=8)
    ax.set_ylabel("best J over 3 s (body lengths)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = ctx.plot_path("locomotion_objective")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path.relative_to(ctx.out))


# The picture strip: the gaits of the small creatures (not the 10k-vertex blob) replayed for 10 s, this many
# frames side by side.
STRIP_MAX_VERTICES = 8000
STRIP_FRAMES = 6
STRIP_SECONDS = 10.0


def side_views(recipe: Recipe, x: np.ndarray, frames: int = STRIP_FRAMES, seconds: float = STRIP_SECONDS) -> dict:
    """Replay gait ``x`` of a creature and keep ``frames`` side views (x-z) spread over ``seconds``.

    Returns times (frames,) s; triangles: a list of (f, 3, 2) boundary triangles in the x-z plane (m);
    com: (frames,) the centre of mass's x (m); ground: the ground's height (m); length: the body length (m).
    """
    mesh = creature_mesh(recipe)
    steps = round(seconds / recipe.dt)
    problem = creature_problem(recipe, steps, mesh)
    r = rollout(problem, problem.sinusoids(x), record=True)
    assert r.Z is not None
    picks = np.linspace(0, steps, frames).round().astype(int)
    faces, Y = boundary_faces(mesh.T), problem.model.subspace.basis
    triangles = [(Y @ r.Z[i])[faces][:, :, [0, 2]] for i in picks]
    return {
        "times": picks * recipe.dt,
        "triangles": triangles,
        "com": r.com[picks, 0],
        "ground": float(problem.ground.height),
        "length": float(problem.length),
    }


def _strip_row(axes: list, name: str, views: dict) -> None:
    """One creature's frames: each panel follows the body; ground ticks every 0.1 m and the start (red) show
    how far it went."""
    from matplotlib.collections import PolyCollection

    h, half = views["ground"], 0.75 * views["length"]
    top = max(float(t[:, :, 1].max()) for t in views["triangles"])
    start = views["com"][0]
    for ax, t, tri, cx in zip(axes, views["times"], views["triangles"], views["com"]):
        ax.add_collection(PolyCollection(tri, facecolors="#4a7fb5", edgecolors="#4a7fb5", linewidths=0.3))
        ax.axhline(h, color="k", lw=1.2)
        for tick in np.arange(np.floor((cx - half) * 10) / 10, cx + half, 0.1):
            ax.plot([tick, tick - 0.03], [h, h - 0.04], color="0.4", lw=0.8)
        ax.axvline(start, color="#c0392b", ls="--", lw=1)
        ax.set_xlim(cx - half, cx + half)
        ax.set_ylim(h - 0.06, top + 0.05)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"t = {t:.1f} s, {cx - start:+.2f} m", fontsize=8)
    axes[0].set_ylabel(name, fontsize=9)


def _strip(ctx: Context, gaits: list[tuple[str, Recipe, np.ndarray]]) -> str | None:
    """bench/plots/locomotion_strip.png: each (name, recipe, gait's search vector) as a row of side views."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, grid = plt.subplots(len(gaits), STRIP_FRAMES, figsize=(2.1 * STRIP_FRAMES, 1.35 * len(gaits)), squeeze=False)
    for axes, (name, recipe, x) in zip(grid, gaits):
        _strip_row(list(axes), name, side_views(recipe, x))
    fig.suptitle("Found gaits crawling along +x (side view; red: where they started)", fontsize=9)
    fig.tight_layout()
    path = ctx.plot_path("locomotion_strip")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path.relative_to(ctx.out))


def _budget(r: dict) -> str:
    """A row's search budget: restarts x generations x population x steps, and the refinement's generations."""
    if "restarts" not in r:  # a run before restarts were recorded: all its generations in one
        gens = len(r["history"])
        return f"{gens} x {r['rollouts'] // max(gens, 1)} x {r['steps_per_rollout']}"
    pop = r["population"]
    text = f"{r['restarts']} x {r['generations']} x {pop} x {r['steps_per_rollout']}"
    if r.get("refine_generations"):
        text += f", then {r['refine_generations']} x {pop} x {r['steps_per_rollout']} on the mesh"
    return text


# The direct search on the 10,268-vertex blob (no coarse copy), from this section's 14:55 run today (same
# machine, same budget as the 724-vertex blob's): kept for comparison, not re-run (it costs 216 s).
DIRECT_10K = {"vertices": 10_268, "search_s": 216.0, "body_lengths": 0.84}


def _large_lines(rows: list[dict]) -> list[str]:
    """What the large rows show beside the goal, the seed's Table 1, the direct search and the load."""
    big = [r for r in rows if r["vertices"] >= 8000]
    if not big:
        return []
    L = [""]
    for r in big:
        part = ""
        if r.get("coarse_search_s") is not None:
            part = f", {r['coarse_search_s']:.0f} s of them on the {r['searched_vertices']:,}-vertex copy"
        L.append(
            f"At {r['vertices']:,} vertices the search took {r['optimisation_s']:.0f} s in all ({r['rollouts']} "
            f"rollouts of {r['steps_per_rollout']} steps{part}) and the gait goes {r['body_lengths']:.2f} body "
            "lengths per 10 s."
        )
    L.append(
        "Goal: at most 300 s for 10k vertices on 2 cores.  The seed's Table 1: 900-984 s for its 9-14k-vertex "
        "characters and 1,270-3,300 s for its 42-45k-vertex ones (200 x 16 rollouts of 200-300 steps)."
    )
    carried = [r for r in big if r.get("carried_judged") is not None]
    if carried:
        L += [
            "",
            "Carried to the fine mesh, the coarse gait's J over 10 s is "
            + ", ".join(f"{r['carried_judged']:.2f} at {r['vertices']:,} vertices" for r in carried)
            + f" against {carried[0]['coarse_judged']:.2f} on the copy (the transfer holds); the refinement on the "
            "mesh then gives " + ", ".join(f"{r['judged']:.2f}" for r in carried) + ".",
        ]
        same = [r for r in rows if r["vertices"] == carried[0]["searched_vertices"] and not r.get("coarse_search_s")]
        if same:
            times = [same[0]["optimisation_s"]] + [r["coarse_search_s"] for r in carried]
            L.append(
                f"The copy's search is the {same[0]['creature']} row's own (the same mesh, budget and seed: the same "
                "gait bit for bit); in this one run it took " + ", ".join(f"{t:.0f}" for t in times) + " s: "
                "the shared machine's load, not the mesh, sets these seconds; the 14:55 run, on a quieter machine, "
                "took 129 s for it."
            )
    d = DIRECT_10K
    L += [
        "",
        f"The search on the mesh itself (no copy), for comparison: {d['vertices']:,} vertices, {d['search_s']:.0f} s "
        f"for the same budget, {d['body_lengths']:.2f} body lengths per 10 s (this section's 14:55 run today, same "
        "machine): the same landscape with another draw.  Searching coarse makes the search's time independent of "
        "the mesh size beyond the fine model's precompute and the short refinement, as the seed reports, and "
        "the fine mesh plays what the coarse one found (the resolution table below).",
    ]
    return L


def report_lines(p: dict) -> list[str]:
    """The section's markdown: conditions, our rows, the seed's Table 1."""
    L = [
        "## Modal actuation locomotion (Benchekroun et al., issue 26)",
        "",
        (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "",
        f"Machine: {p['cpu']}; {p.get('load', 'shared with other sessions')}.  Budget per row: restarts x "
        "generations x population x steps per rollout; a large mesh (over 12,000 tets) is searched on the shape's "
        "coarse lattice (searched on: its vertices), its gait carried to the mesh's modes by their fields and "
        "refined there (a few generations from the carried gait, step 0.3, the carried gait and the refinement's "
        "best judged on 10 s on the fine mesh: `core/locomotion/coarse.py`, the default).  Search seconds count "
        "the coarse model's build, both searches and the judges; ms / step: the fastest of "
        f"{STEP_TIMINGS} timed {p['rows'][0]['steps_per_rollout'] if p['rows'] else 90}-step rollouts of the found "
        "gait on the mesh itself.",
        "",
        "| creature | vertices | tets | samples | precompute (s) | searched on (vertices) | search (s) | "
        "budget | ms / step | J (3 s) | body lengths / 10 s | distance / 10 s (m) | distance / cycle (m) | "
        "heading (deg) | facing (min cos) | iterations / step | deepest vertex below ground (mm) | inverted tets |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in p["rows"]:
        L.append(
            f"| {r['creature']} | {r['vertices']:,} | {r['tets']:,} | {r['samples']:,} | {r['precompute_s']:.1f} | "
            f"{r.get('searched_vertices', r['vertices']):,} | {r['optimisation_s']:.0f} | {_budget(r)} | "
            f"{r['ms_per_step']:.2f} | {r['objective']:.3f} | {r['body_lengths']:.2f} | "
            f"{r['body_lengths'] * r['length']:.2f} | {r['distance_per_cycle']:.3f} | {r['heading_deg']:.1f} | "
            f"{r['facing']:.2f} | {r['iterations']:.1f} | {1e3 * r['deepest']:.2f} | {int(r['inverted'])} |"
        )
    L += _large_lines(p["rows"])
    L += [
        "",
        "Contact: every boundary vertex is a contact sample, so the deepest-vertex column is over all vertices "
        "(the penalty's compliance under the moving load, not a dip between samples).  Body lengths per 10 s, "
        "heading (the travel's angle from +x in the ground plane), facing and depth come from a 10 s replay of "
        "the best gait, not from the 3 s search rollouts.",
        "",
        "The seed's Table 1 (200 generations x 16 rollouts of 200-300 steps, hardware not stated), for scale: "
        + "; ".join(f"{n} {v:,} v / {t:,} t: {s:,.0f} s" for n, v, t, s in SEED_TABLE1)
        + ".  If its rollouts ran one at a time, that is about 1-4 ms per simulated step (inferred, not stated).",
        "",
    ]
    L += _resolution_lines(p.get("resolution", []))
    if p.get("plot"):
        L += [f"![objective against CMA-ES generations]({p['plot']})", ""]
    if p.get("strip"):
        L += [
            f"![the found gaits crawling: {STRIP_FRAMES} frames of a 10 s replay]({p['strip']})",
            "",
            f"The gaits of the table's first two rows, replayed for {STRIP_SECONDS:.0f} s: {STRIP_FRAMES} frames, "
            "each panel following the body, the ground's ticks 0.1 m apart, the start in red.",
            "",
        ]
    return L


def load_note(before: tuple[float, ...], after: tuple[float, ...]) -> str:
    """The machine's load while the section ran: its 1-minute load average before and after, beside its cores."""
    return (
        f"load average (1 min) {before[0]:.1f} before and {after[0]:.1f} after the section on "
        f"{os.cpu_count()} cores (shared with other sessions: times are one run each, under that load)"
    )


def run(ctx: Context) -> dict:
    runs = QUICK if ctx.quick else RUNS
    before = os.getloadavg()
    rows = [_one(name, recipe, ctx) for name, recipe in runs]
    out = {
        "cpu": cpu_name(machine_info()),
        "load": load_note(before, os.getloadavg()),
        "rows": rows,
        "seed_table1": [{"name": n, "vertices": v, "tets": t, "optimisation_s": s} for n, v, t, s in SEED_TABLE1],
    }
    out["resolution"] = [] if ctx.quick else _resolution(runs, rows)
    out["plot"] = _plot(ctx, rows)
    small = [(n, recipe, np.array(r["x"])) for (n, recipe), r in zip(runs, rows) if r["vertices"] < STRIP_MAX_VERTICES]
    out["strip"] = _strip(ctx, small)
    (ctx.out / "locomotion.md").write_text("\n".join(report_lines(out)) + "\n")
    return out


def redraw(folder: Path) -> dict:
    """Redraw the objective plot and the strip from the histories and gaits of the last run stored in
    ``folder``/results.json (no search), replay them on the finer meshes when that run did not, and rewrite
    ``folder``/locomotion.md; results.json is left as it is (the section's next run stores both)."""
    p = dict(json.loads((folder / "results.json").read_text())["sections"]["locomotion"])
    ctx = Context(quick=False, out=folder, peer_python=None)
    recipes = dict(RUNS)
    if "resolution" not in p and all(r["creature"] in recipes for r in p["rows"]):
        p["resolution"] = _resolution([(r["creature"], recipes[r["creature"]]) for r in p["rows"]], p["rows"])
    p["plot"] = _plot(ctx, p["rows"])
    small = [r for r in p["rows"] if r["vertices"] < STRIP_MAX_VERTICES and r["creature"] in recipes]
    p["strip"] = _strip(ctx, [(r["creature"], recipes[r["creature"]], np.array(r["x"])) for r in small])
    (folder / "locomotion.md").write_text("\n".join(report_lines(p)) + "\n")
    return p


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m bench.locomotion", description="the locomotion section's pictures")
    ap.add_argument(
        "--strip", action="store_true", help="redraw the strip (and the resolution table) from results.json's gaits"
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).parent, help="the bench folder (default: bench/)")
    args = ap.parse_args()
    if not args.strip:
        sys.exit(ap.format_usage())
    print(redraw(args.out)["strip"])
