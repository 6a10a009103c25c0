"""Section 1: per-step cost against mesh size, and reconstruction cost per vertex.

The LBS-parameter path's step works only with reduced quantities, so its cost
must not grow with the vertex count; the rig-positions path projects an
(n, 3) rig shape every step, O(n m); reconstruction is one (k x 4m) @ (4m x 3)
product (float64, and float32 as the add-on runs it), timed beside a plain
numpy copy of an output of the same size: it reads 4m numbers per vertex, so
it is memory-bound and costs far more than the copy of its 3 outputs.
"""

from __future__ import annotations

import resource
import time

import numpy as np

from core.dynamics.reconstruct import Reconstructor
from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.materials import Material
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import grid_scene

from .common import Context, Timing, time_calls

M, R = 16, 100
BONES = 20  # the scale test: 100k vertices, a 20-bone rig, 16 modes, 100 clusters


def step_timings(sim: Simulator, scene, steps: int, positions: bool) -> Timing:
    """Median step time over an animation, fixed 10 iterations (tolerance 0), after a warm-up."""
    h = sim.settings.time_step
    if positions:
        xs = [scene.positions(k * h, amplitude=0.8) for k in range(steps + 2)]
        state = sim.initial_state(x_rig=xs[0])
        frames = iter(range(1, steps + 2))

        def one() -> None:
            nonlocal state
            state, _ = sim.step(state, x_rig=xs[next(frames)])
    else:
        ps = [scene.parameters(k * h, amplitude=0.8) for k in range(steps + 2)]
        state = sim.initial_state(ps[0])
        frames = iter(range(1, steps + 2))

        def one() -> None:
            nonlocal state
            state, _ = sim.step(state, ps[next(frames)])

    return time_calls(one, repeats=steps, warmup=1)


def run(ctx: Context) -> dict:
    sizes = [8, 12] if ctx.quick else [13, 22, 37, 47]  # vertices per axis: 2.2k, 10.6k, 50.7k, 103.8k
    steps = 10 if ctx.quick else 60
    rows = []
    for v in sizes:
        scene = grid_scene(v, bones=BONES if not ctx.quick else 4)
        mat = Material.uniform(scene.mesh.t, 5e4, 0.0, 1000.0)
        t0 = time.perf_counter()
        model = build_reduced_model(
            scene.mesh, mat, scene.rig, m=M if not ctx.quick else 6, r=R if not ctx.quick else 20
        )
        prepare_s = time.perf_counter() - t0
        # Peak resident memory of this process so far (sizes ascend, so it is this size's peak or less).
        peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        sim = Simulator(model, SimulationSettings(time_step=1 / 48, max_iterations=10, tolerance=0.0))
        lbs = step_timings(sim, scene, steps, positions=False)
        pos = step_timings(sim, scene, max(5, steps // 4), positions=True)
        rec = Reconstructor(model)
        z = np.random.default_rng(0).standard_normal((4 * model.m, 3))
        out = np.empty((model.n, 3))
        recon = time_calls(lambda: rec.displacement(z, out=out), repeats=30 if not ctx.quick else 5)
        # The add-on reconstructs render vertices in float32 (Blender's and .pc2's precision): half the bytes.
        rec32 = Reconstructor(model, dtype=np.float32)
        out32 = np.empty((model.n, 3), dtype=np.float32)
        recon32 = time_calls(lambda: rec32.displacement(z, out=out32), repeats=30 if not ctx.quick else 5)
        src = out.copy()
        copy = time_calls(lambda: np.copyto(out, src), repeats=30 if not ctx.quick else 5)
        rows.append(
            {
                "vertices": model.n,
                "tets": scene.mesh.t,
                "modes": model.m,
                "clusters": model.r,
                "bones": scene.rig.weights.shape[1],
                "prepare_s": prepare_s,
                "prepare_breakdown_s": model.timings,
                "peak_memory_gb": peak_gb,
                "step_lbs": lbs,
                "step_positions": pos,
                "reconstruct": recon,
                "reconstruct_float32": recon32,
                "numpy_copy": copy,
            }
        )
        ctx.log(
            f"  scaling n={model.n}: prepared in {prepare_s:.1f} s (peak {peak_gb:.1f} GB), step {lbs.ms()}, "
            f"positions path {pos.ms()}, reconstruct {recon.ms()}"
        )
    first, last = rows[0], rows[-1]
    ratio = last["step_lbs"].median / first["step_lbs"].median
    result = {
        "rows": rows,
        "ratio_largest_to_smallest": ratio,
        "largest": last["vertices"],
        "smallest": first["vertices"],
    }
    try:
        _plot(ctx, rows)
    except ImportError:  # matplotlib is in the main environment; a bare one still gets the numbers
        pass
    return result


def _plot(ctx: Context, rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["vertices"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("step_lbs", "step, LBS parameters"), ("step_positions", "step, rig positions (O(n m))")):
        med = np.array([1e3 * r[key].median for r in rows])
        lo = med - [1e3 * r[key].min for r in rows]
        hi = [1e3 * r[key].max for r in rows] - med
        a.errorbar(n, med, yerr=[lo, hi], marker="o", capsize=3, label=label)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("tet-mesh vertices")
    a.set_ylabel("ms per step (10 iterations)")
    a.set_title(f"step cost vs mesh size (m={rows[0]['modes']}, r≈{rows[0]['clusters']})")
    a.legend()
    for key, label in (
        ("reconstruct", "reconstruct u = Y z, float64"),
        ("reconstruct_float32", "reconstruct, float32 (the add-on)"),
        ("numpy_copy", "numpy copy of u"),
    ):
        b.plot(n, [1e9 * r[key].median / r["vertices"] for r in rows], marker="o", label=label)
    b.set_xscale("log")
    b.set_xlabel("vertices")
    b.set_ylabel("ns per vertex")
    b.set_title("reconstruction per vertex")
    b.legend()
    fig.tight_layout()
    fig.savefig(ctx.plot_path("scaling"), dpi=110)
    plt.close(fig)
