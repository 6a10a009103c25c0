"""Section 2: the reduced solver against the full-space reference — speed and accuracy.

Speed: one step of full-space complementary dynamics (Newton on the KKT
system) against one reduced step (m = 16, r = 100, 10 iterations) on the same
mesh, rig and time step, at about 2k and 10k vertices.

Accuracy (seed §9.10): the displacement after one step, and after ten, on a
756-vertex bar under a bending rig, for growing numbers of modes (every tet
its own cluster) and of clusters (32 modes).
"""

from __future__ import annotations

import numpy as np

from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.subspace.reduced import build_reduced_model
from core.validation.reference import FullSpaceReference
from core.validation.scenes import bar_scene, grid_scene

from .common import Context, Timing, time_calls, time_once

H = 1.0 / 60.0


def _reference_run(scene, mat, steps: int, amplitude: float = 1.2):
    masses = lumped_mass(scene.mesh, mat.density)
    leak = default_leak_field(scene.mesh)
    ref = FullSpaceReference(scene.mesh, mat, scene.rig, masses, leak, H)

    def x(k: int) -> np.ndarray:
        return scene.positions(max(k, 0) * H, amplitude=amplitude, frequency=1.5)

    u = np.zeros_like(scene.mesh.X)
    u_prev = u.copy()
    out, seconds = [], []
    for k in range(steps):
        (new, _), dt = time_once(lambda: ref.step(u, u_prev, x(k + 1), x(k), x(k - 1)))
        u_prev, u = u, new
        out.append(u)
        seconds.append(dt)
    return out, Timing.of(seconds), leak


def _reduced_errors(scene, mat, leak, ref_u, m: int, r: int, amplitude: float = 1.2) -> list[float]:
    model = build_reduced_model(scene.mesh, mat, scene.rig, m=m, r=r, leak=leak)
    sim = Simulator(model, SimulationSettings(time_step=H, max_iterations=50, tolerance=1e-8))
    state = sim.initial_state(scene.parameters(0.0, amplitude=amplitude, frequency=1.5))
    errs = []
    for k in range(len(ref_u)):
        state, _ = sim.step(state, scene.parameters((k + 1) * H, amplitude=amplitude, frequency=1.5))
        errs.append(float(np.linalg.norm(sim.displacement(state) - ref_u[k]) / np.linalg.norm(ref_u[k])))
    return errs


def run(ctx: Context) -> dict:
    speed = []
    for v in [8] if ctx.quick else [13, 22]:
        scene = grid_scene(v, bones=3)
        mat = Material.uniform(scene.mesh.t, 3e4, 0.0, 1000.0)
        _, ref_t, _ = _reference_run(scene, mat, 1 if ctx.quick else 2)
        model = build_reduced_model(
            scene.mesh, mat, scene.rig, m=16 if not ctx.quick else 6, r=100 if not ctx.quick else 20
        )
        sim = Simulator(model, SimulationSettings(time_step=H, max_iterations=10, tolerance=0.0))
        state = [sim.initial_state(scene.parameters(0.0, amplitude=1.2, frequency=1.5))]
        k = [0]

        def one() -> None:
            k[0] += 1
            state[0], _ = sim.step(state[0], scene.parameters(k[0] * H, amplitude=1.2, frequency=1.5))

        red_t = time_calls(one, repeats=20 if not ctx.quick else 3)
        speed.append(
            {
                "vertices": scene.mesh.n,
                "tets": scene.mesh.t,
                "reference_step": ref_t,
                "reduced_step": red_t,
                "ratio": ref_t.median / red_t.median,
            }
        )
        ctx.log(
            f"  reference n={scene.mesh.n}: full {ref_t.s()} vs reduced {red_t.ms()}: "
            f"{ref_t.median / red_t.median:.0f}x"
        )

    scene = bar_scene(cells_per_unit=3 if ctx.quick else 5, bones=3)
    mat = Material.uniform(scene.mesh.t, 3e4, 0.0, 1000.0)
    steps = 2 if ctx.quick else 10
    ref_u, _, leak = _reference_run(scene, mat, steps)
    modes = [4, 8] if ctx.quick else [4, 8, 16, 32, 64]
    by_modes = []
    for m in modes:
        e = _reduced_errors(scene, mat, leak, ref_u, m, scene.mesh.t)
        by_modes.append(
            {"modes": m, "clusters": scene.mesh.t, "first_step": e[0], "mean": float(np.mean(e)), "last": e[-1]}
        )
    clusters = [10, 50] if ctx.quick else [10, 30, 100, 300, 1000, scene.mesh.t]
    by_clusters = []
    for r in clusters:
        e = _reduced_errors(scene, mat, leak, ref_u, 8 if ctx.quick else 32, r)
        by_clusters.append(
            {
                "modes": 8 if ctx.quick else 32,
                "clusters": r,
                "first_step": e[0],
                "mean": float(np.mean(e)),
                "last": e[-1],
            }
        )
    result = {
        "speed": speed,
        "ablation_mesh": {"vertices": scene.mesh.n, "tets": scene.mesh.t, "steps": steps},
        "by_modes": by_modes,
        "by_clusters": by_clusters,
    }
    try:
        _plot(ctx, by_modes, by_clusters)
    except ImportError:
        pass
    return result


def _plot(ctx: Context, by_modes: list[dict], by_clusters: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("first_step", "after one step"), ("mean", "mean over 10 steps")):
        a.plot([r["modes"] for r in by_modes], [r[key] for r in by_modes], marker="o", label=label)
        b.plot([r["clusters"] for r in by_clusters], [r[key] for r in by_clusters], marker="o", label=label)
    a.set_xscale("log", base=2)
    a.set_xlabel("modes (every tet its own cluster)")
    b.set_xscale("log")
    b.set_xlabel(f"clusters ({by_clusters[0]['modes']} modes)")
    for ax in (a, b):
        ax.set_yscale("log")
        ax.set_ylabel("relative error vs full space")
        ax.legend()
    fig.suptitle("reduced vs full-space complementary dynamics (seed §9.10)")
    fig.tight_layout()
    fig.savefig(ctx.plot_path("accuracy"), dpi=110)
    plt.close(fig)
