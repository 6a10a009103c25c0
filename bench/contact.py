"""Section: contact (issue 29) - what the ground costs a step, with 0 to 1,000 samples pressed on it.

A 2 m x 2 m x 0.125 m slab (33 x 33 x 3 vertices, 1,089 on its underside)
on three bones along x, m = 16 modes, r = 100 clusters, ARAP, gravity on the
secondary motion, the rig holding still.  A slightly tilted ground cuts the
underside so that exactly k samples start below it: the rig wins there, and
gravity presses each of them (the contact holds them).  Every variant is the
same simulator with contact on, against the same without contact ("off"),
in palindromic rounds, so the ratios are paired.  Reported per variant: ms
per step, the ratio to "off", the normal rows the step's system was given
(the samples pressed or near), those held back (the others within the
search margin, core/contact/held.py) and the pressed ones.
"""

from __future__ import annotations

import os
import time

import numpy as np

from core.contact.colliders import Ground
from core.contact.surface import SurfaceContact
from core.dynamics.simulator import SimulationSettings, Simulator
from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.materials import Material
from core.model.rig import LBSRig, rest_parameters
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import chain_weights

from . import contact_arm, contact_picture
from .common import Context, in_scratch_folder, install_addon
from .paired import paired_ratio, palindrome
from .peers.pinning import pin_threads

ACTIVE = (0, 10, 100, 1000)
M, R, CELLS = 16, 100, 32
STEPS, ROUNDS = 48, 7
QUICK = {"active": (0, 10), "m": 4, "r": 20, "cells": 8, "steps": 4, "rounds": 1}
H = 1.0 / 48.0


def slab(cells: int) -> tuple[TetMesh, LBSRig]:
    """The slab (cells x cells x 2 cubes, 2 m x 2 m x 0.125 m, centred) and its three-bone chain along x."""
    X, T = box_tet_mesh((cells, cells, 2), (2.0, 2.0, 0.125), (-1.0, -1.0, -0.0625))
    return TetMesh.from_arrays(X, T), LBSRig.from_weights(chain_weights(X, np.array([-1.0, 0.0, 1.0])))


def cutting_ground(points: np.ndarray, k: int) -> Ground:
    """A slightly tilted ground with exactly k of the points (n, 3) below it."""
    n = np.array([0.05, 0.0183, 1.0])
    n /= np.linalg.norm(n)
    h = np.sort(points @ n)
    height = h[0] - 1e-3 if k == 0 else 0.5 * (h[k - 1] + h[k])
    return Ground(height=float(height), normal=tuple(n))


def _variants(q: bool) -> tuple[dict, dict]:
    m, r, cells = (QUICK["m"], QUICK["r"], QUICK["cells"]) if q else (M, R, CELLS)
    mesh, rig = slab(cells)
    model = build_reduced_model(mesh, Material.uniform(mesh.t, 5e4, 0.0, 1000.0), rig, m=m, r=r)
    settings = SimulationSettings(time_step=H, gravity=(0.0, 0.0, -9.81))
    contact = SurfaceContact(model, H)
    under = contact.rig_positions(x_rig=model.X)
    sims = {"off": (Simulator(model, settings), None)}
    for k in QUICK["active"] if q else ACTIVE:
        sims[str(k)] = (Simulator(model, settings, contact), [cutting_ground(under, k)])
    return sims, {"vertices": mesh.n, "tets": mesh.t, "samples": len(contact.samples), "m": m, "r": r}


def _step_times(q: bool) -> dict:
    steps, rounds = (QUICK["steps"], QUICK["rounds"]) if q else (STEPS, ROUNDS)
    sims, info = _variants(q)
    p = rest_parameters(3)
    rows: dict[str, list[int]] = {k: [] for k in sims}
    held: dict[str, list[int]] = {k: [] for k in sims}
    pressed: dict[str, list[int]] = {k: [] for k in sims}

    def block(name):
        sim, obstacles = sims[name]

        def run() -> float:
            state = sim.initial_state(p)
            t0 = time.perf_counter()
            for _ in range(steps):
                state, _ = sim.step(state, p, obstacles=obstacles)
            elapsed = (time.perf_counter() - t0) / steps
            if obstacles is not None:  # counted outside the timing: the last step's rows
                found = sim.contact.rows(sim.contact.rig_positions(p), state.z.T, state.z_prev.T, obstacles)
                n = 0 if found is None else int(found.one_sided.sum())
                rows[name].append(n)
                held[name].append(0 if found is None or found.held is None else len(found.held))
                pressed[name].append(0 if found is None else int((found.forces(state.z.T) > 0).sum()))
            return elapsed

        return run

    paired = palindrome({k: block(k) for k in sims}, rounds)
    times = paired["times"]
    return {
        **info,
        "steps": steps,
        "rounds": rounds,
        "ms_per_step": {k: 1e3 * times[k].median for k in times},
        "ms_range": {k: [1e3 * times[k].min, 1e3 * times[k].max] for k in times},
        "ratio_over_off": {k: paired_ratio(paired, k, "off") for k in times if k != "off"},
        "rows": {k: max(v) for k, v in rows.items() if v},
        "held": {k: max(v) for k, v in held.items() if v},
        "pressed": {k: max(v) for k, v in pressed.items() if v},
    }


def run(ctx: Context) -> dict:
    threads = pin_threads()
    load_before = os.getloadavg()
    speed = _step_times(ctx.quick)
    # The picture last: it imports bpy into this process (the bpy sections run after this one).
    picture = in_scratch_folder(
        "skinmodes-bench-contact-", lambda work: contact_picture.run(ctx, work / "scene", install_addon(work))
    )
    ctx.log(
        "  contact step ms: "
        + ", ".join(f"{k} {v:.3g}" for k, v in speed["ms_per_step"].items())
        + "; pressed "
        + ", ".join(f"{k}: {v}" for k, v in speed["pressed"].items())
    )
    return {
        "speed": speed,
        "picture": picture,
        "threads": threads,
        "load_average": {"before": list(load_before), "after": list(os.getloadavg())},
    }


def report_lines(p: dict) -> list[str]:
    s = p["speed"]
    L = [
        "## Contact (issue 29)",
        "",
        f"What the ground costs a step: a slab of {s['vertices']:,} vertices ({s['samples']:,} surface samples), "
        f"m = {s['m']}, r = {s['r']}, ARAP, gravity on, the rig still; a tilted ground cuts k samples.  "
        f"{s['steps']} steps per block, {s['rounds']} palindromic rounds against the same solver without contact "
        "(paired ratios).  Rows: the normal rows the step's system is given (samples pressed, or within "
        "twice the last step's motion of their plane or 0.1 % of the size); held: the other samples within "
        "the search margin, held back while a bound shows no iterate presses them (core/contact/held.py); "
        "pressed: those the contact pushes; all at the last step.",
        "",
        "| variant | ms per step (min–max) | ratio to no contact, paired (IQR) | rows | held | pressed |",
        "|---|---|---|---|---|---|",
    ]
    for k, v in s["ms_per_step"].items():
        lo, hi = s["ms_range"][k]
        r = s["ratio_over_off"].get(k)
        rr = "1" if r is None else f"{r['median']:.2f} ({r['q1']:.2f}–{r['q3']:.2f})"
        name = "no contact" if k == "off" else f"{k} cut"
        L.append(
            f"| {name} | {v:.3g} ({lo:.3g}–{hi:.3g}) | {rr} | {s['rows'].get(k, '–')} | "
            f"{s.get('held', {}).get(k, '–')} | {s['pressed'].get(k, '–')} |"
        )
    return [*L, "", *picture_lines(p.get("picture")), *contact_arm.report_lines((p.get("picture") or {}).get("arm"))]


def picture_lines(c: dict | None) -> list[str]:
    """The picture's paragraph (bench/contact_picture.py): a real character's tail on a collider."""
    if not c:
        return []
    of_size = c["penetration_pct_off"] * c["thickness"] / c["size"]
    return [
        f"A real character (bench/contact_picture.py): the glTF {c['character']} ({c['vertices']:,} render vertices, "
        f"{c['sim_vertices']:,} simulated), default settings, baked twice through the add-on over frames "
        f"{c['frames'][0]}–{c['frames'][1]} (the run, then a held pose); a block with Collision physics "
        "under its tail tip, its top just below the lowest point the rig gives the tail (vertex-frames the rig "
        f"itself puts in the block: {c['rig_inside_point_frames']}), so only the secondary motion reaches it.  "
        "Deepest penetration of the tail tip's "
        f"{c['part_vertices']} vertices where the rig is above the top: {c['penetration_pct_off']:.3g} % of the "
        f"tail tip's thickness ({c['thickness']:.3g} units; {of_size:.2g} "
        f"% of the character's size) without contact, {c['penetration_pct_on']:.2g} % with (its lowest point "
        f"stays {c['clearance_pct_on']:.3g} % of the thickness above the top: contact acts on the simulated "
        "volume's surface, which encloses the render surface, so that touches first); "
        f"bake {c['bake_s_off']:.2f} s without, {c['bake_s_on']:.2f} s with.",
        "",
        f"![the {c['character']}'s tail on a block](plots/contact_{c['character']}_tail.png)",
        "",
    ]
