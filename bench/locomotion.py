"""Modal actuation locomotion (issue 26, seed 002): gait search time and distance on a soft slug.

A 2 m x 0.5 m x 0.5 m bar (``core.validation.scenes.bar_scene``, 6 tets per
cube) at two resolutions (about 10k and 40k vertices), E = 50 kPa, nu = 0,
1000 kg/m^3, on flat ground (the seed's damping friction with u = 0: a sample in contact does not slide),
gravity 9.81 m/s^2.  Subspace: 5 unconstrained skinning modes (q = 20), 5
passive clusters, 1 actuation cluster, 6 actuation modes with one sinusoid
each (18 parameters), actuation stiffness 2 mu.  CMA-ES (ours, numpy) from
a still start, seed 0; each rollout 150 steps of 1/30 s (5 s simulated);
local-global to 1e-4 of the radius.  The seed's Table 1 runs 200
generations of 16 with 200-300 steps on unnamed hardware; this budget is
smaller and stated beside every figure.

Also writes ``locomotion.md`` (the same table and plot, ``report_lines``)
into the output folder, so the section can be read on its own.
"""

from __future__ import annotations

import time

import numpy as np

from core.locomotion.gait import GaitProblem, find_gait, ground_under, rollout
from core.locomotion.model import build_locomotion_model
from core.locomotion.step import StepSettings
from core.model.materials import Material
from core.validation.scenes import bar_scene

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


# Contact samples: the seed's 30 spread over the whole boundary (vertices between them may dip below the
# ground), or 60 on the lowest third of the boundary (none dips on this slug).
CONTACT = {
    "whole boundary, 30 samples": {"samples": 30, "sample_band": None},
    "underside, 60 samples": {"samples": 60, "sample_band": ((0.0, 0.0, 1.0), 1 / 3)},
}


def _one(cells: int, contact: str, generations: int, population: int, steps: int, ctx: Context) -> dict:
    mesh = bar_scene(length=2.0, width=0.5, cells_per_unit=cells).mesh
    mat = Material.uniform(mesh.t, 5e4, 0.0, 1000.0)
    t0 = time.perf_counter()
    model = build_locomotion_model(
        mesh,
        mat,
        s=5,
        m=6,
        passive_clusters=5,
        actuation_clusters=1,
        actuation_stiffness=2.0,
        **CONTACT[contact],
    )
    precompute = time.perf_counter() - t0
    settings = StepSettings(dt=1 / 30, tolerance=1e-4)
    problem = GaitProblem(model, settings, ground_under(model), direction=np.array([1.0, 0.0, 0.0]), steps=steps)
    gait = find_gait(problem, generations=generations, population=population, seed=0)
    best = rollout(problem, gait.sinusoids, record=True)
    assert best.Z is not None
    Y, ground = model.subspace.basis, problem.ground
    below, below_samples, inverted = 0.0, 0.0, 0
    for Z in best.Z:  # after the search, for the checks only: full positions, one step at a time
        x = Y @ Z
        below = max(below, ground.height - float(x[:, 2].min()))
        below_samples = max(below_samples, ground.height - float(x[model.samples, 2].min()))
        e = x[mesh.T[:, 1:]] - x[mesh.T[:, :1]]
        inverted = max(inverted, int((np.linalg.det(e) <= 0).sum()))
    sim_seconds = steps * settings.dt
    travelled = float(best.com[-1, 0] - best.com[0, 0])
    mean_period = float(gait.sinusoids.period[np.abs(gait.sinusoids.amplitude) > 0].mean())
    row = {
        "contact": contact,
        "vertices": mesh.n,
        "tets": mesh.t,
        "precompute_s": precompute,
        "optimisation_s": gait.seconds,
        "rollouts": gait.evaluations,
        "steps_per_rollout": steps,
        "ms_per_step": 1e3 * gait.seconds / (gait.evaluations * steps),
        "iterations_per_step": best.iterations / steps,
        "unconverged_steps": best.unconverged,
        "energy_rose_steps": best.energy_rose,
        "objective": gait.objective,
        "history": gait.history.tolist(),
        "distance_m": travelled,
        "body_lengths_per_10s": travelled / problem.length * 10.0 / sim_seconds,
        "mean_period_s": mean_period,
        "distance_per_cycle_m": travelled * mean_period / sim_seconds,
        "max_penetration_m": max(below, 0.0),
        "max_sample_penetration_m": max(below_samples, 0.0),
        "max_inverted_tets": inverted,
    }
    ctx.log(
        f"  locomotion {mesh.n} v / {mesh.t} t, {contact}: precompute {precompute:.1f} s, "
        f"optimisation {gait.seconds:.1f} s "
        f"({gait.evaluations} rollouts, {row['ms_per_step']:.2f} ms/step), J = {gait.objective:.3f}, "
        f"{travelled:.3f} m in {sim_seconds:g} s"
    )
    return row


def _plot(ctx: Context, rows: list[dict]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the figures stand without their plot
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for r in rows:
        ax.plot(
            np.arange(1, len(r["history"]) + 1),
            r["history"],
            marker="o",
            ms=3,
            label=f"{r['vertices']:,} v, {r.get('contact', '')}",
        )
    ax.set_xlabel("CMA-ES generation")
    ax.set_ylabel("best J (body lengths)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = ctx.plot_path("locomotion_objective")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path.relative_to(ctx.out))


def report_lines(p: dict) -> list[str]:
    """The section's markdown: conditions, our rows, the seed's Table 1."""
    L = [
        "## Modal actuation locomotion (Benchekroun et al., issue 26)",
        "",
        (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "",
        f"Budget here: {p['generations']} generations of {p['population']}, {p['steps']} steps per rollout, one "
        f"process, one BLAS thread, on {p['cpu']}.",
        "",
        "| contact | vertices | tets | precompute (s) | optimisation (s) | rollouts | ms / step | "
        "iterations / step | J | "
        "distance (m) | body lengths / 10 s | distance / cycle (m) | deepest vertex below ground (mm) | "
        "deepest sample (mm) | inverted tets |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in p["rows"]:
        L.append(
            f"| {r['contact']} | {r['vertices']:,} | {r['tets']:,} | {r['precompute_s']:.1f} | "
            f"{r['optimisation_s']:.0f} | "
            f"{r['rollouts']} | {r['ms_per_step']:.2f} | {r['iterations_per_step']:.1f} | {r['objective']:.3f} | "
            f"{r['distance_m']:.3f} | {r['body_lengths_per_10s']:.2f} | {r['distance_per_cycle_m']:.3f} | "
            f"{1e3 * r['max_penetration_m']:.1f} | {1e3 * r['max_sample_penetration_m']:.2f} | "
            f"{r['max_inverted_tets']} |"
        )
    L += [
        "",
        "Contact holds at the samples only (as in the seed): the deepest-vertex column says how far the "
        "vertices between samples dip below the ground over the best gait's rollout (0.5 m thick slug).  "
        "With the seed's sparse samples the search partly exploits those dips (the body slides between "
        "samples); with the underside sampled densely nothing dips, every contact sticks, and this budget "
        "finds no gait that lifts and places its contacts: a real limit of the damping-friction model "
        "at this budget, not hidden here.",
        "",
        "The seed's Table 1 (200 generations x 16 rollouts of 200-300 steps, hardware not stated), for scale: "
        + "; ".join(f"{n} {v:,} v / {t:,} t: {s:,.0f} s" for n, v, t, s in SEED_TABLE1)
        + ".  If its rollouts ran one at a time, that is about 1-4 ms per simulated step (inferred, not stated).",
        "",
    ]
    if p.get("plot"):
        L += [f"![objective against CMA-ES generations]({p['plot']})", ""]
    return L


def run(ctx: Context) -> dict:
    seed_contact, underside = CONTACT
    if ctx.quick:
        runs, generations, population, steps = [(3, seed_contact), (3, underside)], 2, 4, 20
    else:
        runs, generations, population, steps = [(26, seed_contact), (42, seed_contact), (26, underside)], 20, 8, 150
    rows = [_one(c, contact, generations, population, steps, ctx) for c, contact in runs]
    out = {
        "generations": generations,
        "population": population,
        "steps": steps,
        "cpu": cpu_name(machine_info()),
        "rows": rows,
        "seed_table1": [{"name": n, "vertices": v, "tets": t, "optimisation_s": s} for n, v, t, s in SEED_TABLE1],
    }
    out["plot"] = _plot(ctx, rows)
    (ctx.out / "locomotion.md").write_text("\n".join(report_lines(out)) + "\n")
    return out
