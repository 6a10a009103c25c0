"""Section 10: does the solver converge, and does the answer depend on the iteration cap (issue 23)?

Per real character (``testkit/real_characters.py``: import, clip, hold), the
add-on bakes once with its defaults to sample the rig; its prepared model,
rig samples and settings are then stepped here again through the frame
simulation (the bake's own code path, without writing files), per material
(the default Poisson 0.4, co-rotational, and ARAP), with:

* the iteration caps 10, 50 and 200 at the default tolerance, and a
  converged reference (cap 200, tolerance 1e-8 of the size);
* for each: iterations per solver step (mean, max, % of steps that stopped
  unconverged at the cap), the largest offset (% of the character's size,
  ``core.geometry.size.character_size`` of the tet mesh), the error of
  the trajectory against the reference (max |u - u_ref| / max |u_ref|) and
  the step time (ms, one BLAS thread, this machine);
* the stepped wobble: a small free decay of the slowest mode at rest, its
  frequency and damping ratio (a two-term Prony fit) against the request
  (3 Hz, zeta 0.2).

Not here: the step time paired against fast-cody at equal tolerance (its
solver runs a fixed number of iterations with no convergence test to match);
the ``peers`` section pairs fixed-iteration steps.  ``--quick`` runs the
smallest character over a short clip.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc

from .common import Context, in_scratch_folder, install_addon
from .peers.pinning import pin_threads

QUICK_CHARACTER = "rigged_simple"
QUICK_CLIP = (1, 12)
CAPS = (10, 50, 200)
REFERENCE = {"iterations": 200, "tolerance": 1e-8}
MATERIALS = ("auto", "arap")
WOBBLE = (3.0, 0.2)


def run(ctx: Context) -> dict:
    pin_threads()
    return in_scratch_folder("skinmodes-bench-convergence-", lambda work: _run(ctx, work))


def _run(ctx: Context, work: Path) -> dict:
    addon = install_addon(work)
    import bpy

    chosen = [dataclasses.replace(rc.spec(QUICK_CHARACTER), clip=QUICK_CLIP)] if ctx.quick else list(rc.CHARACTERS)
    rows = [_character(ctx, bpy, rc, addon, c, work / c.name) for c in chosen]
    return {"characters": rows, "caps": list(CAPS), "reference": REFERENCE, "wobble_request": list(WOBBLE)}


def _character(ctx: Context, bpy: Any, rc: Any, addon: Any, character: Any, work: Path) -> dict:
    api = importlib.import_module(addon.__name__ + ".api")
    session_mod = importlib.import_module(addon.__name__ + ".session")
    pipeline = importlib.import_module(addon.__name__ + ".core.pipeline")
    loaded = rc.load(bpy, character)
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{character.name}.blend"))
    api.compute_modes(loaded.obj, bpy.context.scene)
    summary = api.bake(loaded.obj, frames=(loaded.start, loaded.end), output="PC2")
    session = session_mod.session_for(loaded.obj)
    prepared, rig, solver = session.prepared, dict(session.rig), session.solver
    row: dict[str, Any] = {
        "name": character.name,
        "frames": [loaded.start, loaded.end],
        "m": prepared.model.m,
        "r": prepared.model.r,
        "tets": int(prepared.mesh.t),
        "default_bake": summary.get("solver", {}),
        "materials": {},
    }
    for material in MATERIALS:
        runs = {}
        ref = _simulate(pipeline, prepared, rig, loaded, dataclasses.replace(solver, material_model=material, **_ref()))
        for cap in CAPS:
            out = _simulate(
                pipeline, prepared, rig, loaded, dataclasses.replace(solver, material_model=material, iterations=cap)
            )
            u, stats = out.pop("u"), out
            stats["error_vs_converged"] = float(np.abs(u - ref["u"]).max() / max(np.abs(ref["u"]).max(), 1e-300))
            runs[str(cap)] = stats
        ref.pop("u")
        f, z = _free_decay(pipeline, prepared, dataclasses.replace(solver, material_model=material))
        row["materials"][material] = {
            "caps": runs,
            "reference": ref,
            "wobble_hz": f,
            "damping_ratio": z,
        }
        c10 = runs[str(CAPS[0])]
        ctx.log(
            f"  convergence: {character.name} {material}: cap {CAPS[0]} mean {c10['mean_iterations']:.2f} "
            f"max {c10['max_iterations']} unconverged {c10['unconverged_pct']:.1f} %, "
            f"error {c10['error_vs_converged']:.2e}; max offset "
            + " / ".join(f"{runs[str(c)]['max_offset_pct']:.3g}" for c in CAPS)
            + f" %; {c10['ms_per_step']:.2f} ms/step; wobble {f:.3f} Hz, zeta {z:.3f}"
        )
    api.clear_bake(loaded.obj)
    return row


def _ref() -> dict:
    return {"iterations": REFERENCE["iterations"], "tolerance": REFERENCE["tolerance"]}


def _simulate(pipeline: Any, prepared: Any, rig: dict, loaded: Any, solver: Any) -> dict:
    """Step the clip and its hold; the secondary motion u (frames, n, 3) and the solver's statistics."""
    sim = pipeline.FrameSimulation(prepared, solver, loaded.start, loaded.end, rig)
    size = _size(prepared)
    t0 = time.perf_counter()
    u = np.array([sim.drive.simulator.displacement(sim.state(f)) for f in range(loaded.start, loaded.end + 1)])
    seconds = time.perf_counter() - t0
    stats = sim.solver_stats()
    steps = max(int(stats["steps"]), 1)
    offset = np.linalg.norm(u, axis=2).max(axis=1) / size
    settled_from = loaded.stop - loaded.start + int(np.ceil(loaded.fps))  # one second after the rig stops
    return {
        "u": u,
        "mean_iterations": float(stats["mean_iterations"]),
        "max_iterations": int(stats["max_iterations"]),
        "unconverged_pct": 100.0 * int(stats["unconverged_steps"]) / steps,
        "max_offset_pct": 100.0 * float(offset.max()),
        "settled_offset_pct": 100.0 * float(offset[settled_from:].max()) if settled_from < len(offset) else None,
        "ms_per_step": 1e3 * seconds / steps,
    }


def _size(prepared: Any) -> float:
    X = prepared.model.X
    return float(2.0 * np.sqrt(np.max(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))


def _free_decay(pipeline: Any, prepared: Any, solver: Any) -> tuple[float, float]:
    """(Hz, zeta) of a free decay of the slowest mode at rest, amplitude 1e-3 of the size, converged steps."""
    import scipy.linalg as sla

    wobble = importlib.import_module(pipeline.__name__.rsplit(".", 1)[0] + ".dynamics.wobble")
    rig_mod = importlib.import_module(pipeline.__name__.rsplit(".", 1)[0] + ".model.rig")
    model = prepared.model
    bones = model.rig_weights.shape[1]
    rest = rig_mod.rig_parameters(np.tile(np.eye(4)[:3], (bones, 1, 1)))
    solver = dataclasses.replace(solver, wobble_hz=WOBBLE[0], damping_ratio=WOBBLE[1], **_ref())
    fs = pipeline.FrameSimulation(prepared, solver, 1, 2, lambda f: rest)
    kappa, c = fs.controls(1)
    sim = fs.drive.simulator
    K = wobble.rest_hessian(model, sim.arap)
    M = np.kron(model.A_M, np.eye(3))
    w2, V = sla.eigh(0.5 * (K + K.T), 0.5 * (M + M.T))
    v = V[:, np.argmin(np.where(w2 > 1e-9 * w2.max(), w2, np.inf))]
    state = sim.initial_state(rest)
    z0 = 1e-3 * sim.size * v.reshape(-1, 3) * np.sqrt(float(model.masses.sum()) / float(v @ M @ v))
    state = dataclasses.replace(state, z=z0, z_prev=z0)
    h = sim.settings.time_step
    a = [float(v @ M @ z0.ravel())]
    for _ in range(round(2.0 / h)):
        state, _ = sim.step(state, rest, stiffness_scale=kappa, damping=c)
        a.append(float(v @ M @ state.z.ravel()))
    sig = np.array(a)
    s, q = np.linalg.lstsq(np.stack([sig[1:-1], -sig[:-2]], axis=1), sig[2:], rcond=None)[0]
    lam = np.log(complex(np.roots([1.0, -s, q])[0])) / h
    return float(abs(lam) / (2.0 * np.pi)), float(-lam.real / abs(lam))


def summary_rows(p: dict) -> list[list[str]]:
    rows = []
    for c in p["characters"]:
        d = c["materials"]["auto"]["caps"][str(CAPS[0])]
        rows.append(
            [
                f"solver convergence, {c['name']} (cap {CAPS[0]}, Poisson as set)",
                f"{d['mean_iterations']:.2f} iterations per step (max {d['max_iterations']}), "
                f"{d['unconverged_pct']:.1f} % unconverged",
                f"error vs converged {d['error_vs_converged']:.1e} of the motion",
            ]
        )
    return rows


def behind(p: dict) -> list[str]:
    out = []
    for c in p["characters"]:
        for material, m in c["materials"].items():
            d = m["caps"][str(CAPS[0])]
            if d["unconverged_pct"] > 0.0:
                out.append(
                    f"{c['name']} ({material}): {d['unconverged_pct']:.1f} % of solver steps stop unconverged at "
                    f"the cap of {CAPS[0]} iterations (issue 23 asks that the default converges)."
                )
            if abs(m["wobble_hz"] / WOBBLE[0] - 1.0) > 0.05 or abs(m["damping_ratio"] / WOBBLE[1] - 1.0) > 0.05:
                out.append(
                    f"{c['name']} ({material}): the stepped wobble is {m['wobble_hz']:.3f} Hz, zeta "
                    f"{m['damping_ratio']:.3f}, more than 5 % from the request ({WOBBLE[0]:g} Hz, {WOBBLE[1]:g})."
                )
    return out


def report_lines(p: dict) -> list[str]:
    L = [
        "## 10. Solver convergence (issue 23)",
        "",
        "Each real character's prepared model and rig samples stepped again through the frame simulation at "
        f"the iteration caps {', '.join(map(str, p['caps']))} (default tolerance), against a converged reference "
        f"(cap {p['reference']['iterations']}, tolerance {p['reference']['tolerance']:g} of the size).  Iterations "
        "are per solver step; 'unconv.' is the share of steps that stopped at the cap unconverged; the error is "
        "max |u - u_ref| / max |u_ref| over the clip and its hold; offsets in % of the tet mesh's size.  Wobble: a "
        f"free decay of the slowest mode at rest, requested {p['wobble_request'][0]:g} Hz, "
        f"ζ = {p['wobble_request'][1]:g}.  Step times on one BLAS thread, this machine, not paired with a peer.",
        "",
        "| character | material | cap | iterations mean / max | unconv. | error vs converged | max offset % "
        "| ms / step | wobble Hz | ζ |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in p["characters"]:
        for material, m in c["materials"].items():
            for cap, d in m["caps"].items():
                L.append(
                    f"| {c['name']} | {material} | {cap} | {d['mean_iterations']:.2f} / {d['max_iterations']} "
                    f"| {d['unconverged_pct']:.1f} % | {d['error_vs_converged']:.1e} | {d['max_offset_pct']:.3g} "
                    f"| {d['ms_per_step']:.2f} | {m['wobble_hz']:.3f} | {m['damping_ratio']:.3f} |"
                )
    L.append("")
    return L
