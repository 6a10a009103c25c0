"""Section 3: peers on identical inputs — fast-cody (the paper authors' C++ core) and simkit.

Per step: skinmodes' reduced solver and fast-cody's ``fast_cd_pyb`` get the
same tet mesh, skinning weights, cluster labels, rig weights, rig parameters
per step, material (ARAP, mu), density, time step and a fixed 10 local-global
iterations.  Both are timed in the same run, each with one BLAS thread; the
trajectories are compared too (they should agree to solver round-off).

Subspace construction: each tool's own pipeline from mesh and rig to a
ready-to-step model with the same modes and clusters.  fast-cody's is its
rig-animation app's pipeline (constraint, modes, clusters, then the C++
precomputation); simkit 0.1.8 computes constrained skinning eigenmodes
(``simkit.skinning_eigenmodes`` with ``Aeq``) but ships no complementary-
dynamics time stepper (its local-global solver raises NotImplementedError), so
it appears in the subspace column only, fed our weight-space constraint, and
its modes are compared with ours by their largest principal angle.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import grid_scene

from .common import Context, Timing, run_peer

H = 1.0 / 60.0
M, R, ITERS = 16, 100, 10


def write_step_inputs(path: Path, scene, mat: Material, model, **rig: np.ndarray) -> None:
    """What every per-step peer runner reads: mesh, our weights and clusters, rig weights, material, h, iterations.

    rig: the motion, ``P`` (steps + 1, 12 b) parameters or ``Xrig`` (steps + 1, n, 3) positions.
    """
    np.savez(
        path,
        X=scene.mesh.X,
        T=scene.mesh.T,
        W=model.weights,
        labels=model.labels,
        Wrig=scene.rig.weights,
        mu=float(mat.mu[0]),
        rho=float(mat.density[0]),
        h=H,
        iters=ITERS,
        **rig,
    )


def our_steps(model, P: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Our trajectory U (steps, n, 3) and step times for rig parameters P (steps + 1, 12 b), as the peers run."""
    # The peers implement the paper's energy, relative to the elastic rest shape.
    settings = SimulationSettings(time_step=H, max_iterations=ITERS, tolerance=0.0, material="arap", rest_state="rest")
    sim = Simulator(model, settings)
    # The rig's velocity at the start is (P1 - P0) / h, as the peer runner sets it.
    state = sim.initial_state(P[0], p_prev=2.0 * P[0] - P[1])
    U, times = [], []
    for s in range(1, len(P)):
        t0 = time.perf_counter()
        state, _ = sim.step(state, P[s])
        times.append(time.perf_counter() - t0)
        U.append(sim.displacement(state))
    return np.asarray(U), times


def run(ctx: Context) -> dict:
    if not ctx.peer_python:
        ctx.log("  peers: no bench environment (run `python3.11 tasks.py bench`); section skipped")
        return {"skipped": "no bench-only environment with the peers"}
    sizes = [7] if ctx.quick else [13, 22]  # vertices per axis: 2.2k, 10.6k
    steps = 8 if ctx.quick else 120
    m, r = (6, 20) if ctx.quick else (M, R)
    rows = []
    for v in sizes:
        scene = grid_scene(v, bones=6)
        mat = Material.uniform(scene.mesh.t, 5e4, 0.0, 1000.0)
        t0 = time.perf_counter()
        model = build_reduced_model(scene.mesh, mat, scene.rig, m=m, r=r)
        ours_subspace = time.perf_counter() - t0
        P = np.array([scene.parameters(k * H, amplitude=0.8, frequency=1.0) for k in range(steps + 1)])
        U_ours, our_times = our_steps(model, P)
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
            write_step_inputs(src, scene, mat, model, P=P)
            fc = run_peer(ctx.peer_python, "fastcody_runner.py", str(src), str(dst), "--subspace", timeout=3600)
            sk_step = _simkit_step(ctx, scene, mat, model, P, tmp)
            U_fc = np.load(dst)["U"]
            sk = _simkit(ctx, scene, mat, model, tmp)
        extent = float(np.ptp(scene.mesh.X, axis=0).max())
        ours = Timing.of(our_times)
        peer = Timing(fc["step_median_s"], fc["step_min_s"], fc["step_max_s"], fc["steps"])
        row = {
            "vertices": scene.mesh.n,
            "tets": scene.mesh.t,
            "modes": model.m,
            "clusters": model.r,
            "step_ours": ours,
            "step_fastcody": peer,
            "step_ratio_ours_over_fastcody": ours.median / peer.median,
            "subspace_ours_s": ours_subspace,
            "subspace_ours_breakdown_s": model.timings,
            "subspace_fastcody_s": fc.get("subspace_s"),
            "precompute_fastcody_s": fc.get("precompute_s"),
            "step_simkit": sk_step,
            "step_ratio_ours_over_simkit": ours.median / sk_step.median if sk_step else None,
            "trajectory_max_diff_over_extent": float(np.abs(U_ours - U_fc).max() / extent),
            "secondary_max_over_extent": float(np.abs(U_ours).max() / extent),
            **sk,
        }
        fc_total = (fc.get("subspace_s") or 0.0) + (fc.get("precompute_s") or 0.0)
        row["fastcody_total_s"] = fc_total
        row["subspace_ratio_ours_over_fastcody"] = ours_subspace / fc_total if fc_total else None
        rows.append(row)
        ctx.log(
            f"  peers n={scene.mesh.n}: step ours {ours.ms()} vs fast-cody {peer.ms()} "
            f"({row['step_ratio_ours_over_fastcody']:.2f}x); subspace ours {ours_subspace:.2f} s vs fast-cody "
            f"{fc_total:.2f} s, simkit modes {sk.get('subspace_simkit_modes_s', float('nan')):.2f} s; "
            f"trajectory diff {row['trajectory_max_diff_over_extent']:.1e} of the extent"
        )
    try:
        _plot(ctx, rows)
    except ImportError:
        pass
    return {"rows": rows, "time_step": H, "iterations": ITERS, "steps": steps}


def _plot(ctx: Context, rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['vertices']:,} v" for r in rows]
    x = np.arange(len(rows))
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for i, (key, name) in enumerate((("step_ours", "skinmodes"), ("step_fastcody", "fast-cody (C++)"))):
        med = np.array([1e3 * r[key].median for r in rows])
        err = [med - [1e3 * r[key].min for r in rows], [1e3 * r[key].max for r in rows] - med]
        a.bar(x + 0.38 * i, med, 0.38, yerr=err, capsize=3, label=name)
    a.set_xticks(x + 0.19, labels)
    a.set_ylabel("ms per step (10 iterations)")
    a.set_title("per-step time, identical inputs")
    a.legend()
    cols = (
        ("subspace_ours_s", "skinmodes (modes, clusters, products)"),
        ("fastcody_total_s", "fast-cody (subspace + C++ precompute)"),
        ("subspace_simkit_modes_s", "simkit (modes only)"),
    )
    for i, (key, name) in enumerate(cols):
        b.bar(x + 0.27 * i, [r.get(key) or 0.0 for r in rows], 0.27, label=name)
    b.set_xticks(x + 0.27, labels)
    b.set_yscale("log")
    b.set_ylabel("seconds")
    b.set_title("subspace construction")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("peers"), dpi=110)
    plt.close(fig)


def _simkit_step(ctx: Context, scene, mat: Material, model, P: np.ndarray, tmp: str) -> Timing | None:
    """simkit's tutorial Fast CoDy simulator on the same weights, clusters and rig motion."""
    path = Path(tmp) / "simkit_step.npz"
    steps = min(len(P), 41)  # its steps are slow; 40 are plenty for a median
    Xrig = np.array([scene.rig.positions(scene.mesh.X, P[k]) for k in range(steps)])
    write_step_inputs(path, scene, mat, model, Xrig=Xrig)
    try:
        res = run_peer(ctx.peer_python or "", "simkit_runner.py", "--step", str(path), timeout=3600)
    except Exception as exc:
        ctx.log(f"  simkit step failed: {exc}")
        return None
    return Timing(res["step_median_s"], res["step_min_s"], res["step_max_s"], res["steps"])


def _simkit(ctx: Context, scene, mat: Material, model, tmp: str) -> dict:
    """simkit's constrained skinning eigenmodes on our operator inputs, and how far its span is from ours."""
    from core.model.constraint import constraint_basis, weight_space_constraint

    masses = lumped_mass(scene.mesh, mat.density)
    A = weight_space_constraint(scene.mesh.X, scene.rig, masses, default_leak_field(scene.mesh))
    # simkit's saddle-point solve needs full-rank constraint rows (with
    # redundant ones its KKT matrix is singular and ARPACK returns spurious
    # negative modes), which is why its own weight-space constraint strips
    # them; (M Y)^T spans the same rows with the redundancy removed.
    Aeq = (masses[:, None] * constraint_basis(A, masses)).T
    path = Path(tmp) / "simkit_in.npz"
    np.savez(path, X=scene.mesh.X, T=scene.mesh.T, Aeq=Aeq, mu=mat.mu, k=model.m)
    try:
        res = run_peer(ctx.peer_python or "", "simkit_runner.py", str(path), timeout=3600)
    except Exception as exc:  # a peer failing must not sink the report; it says why instead
        ctx.log(f"  simkit failed: {exc}")
        return {"subspace_simkit_error": str(exc)}
    Ws = np.load(Path(tmp) / "simkit_in.npz.out.npz")["W"]
    return {
        "subspace_simkit_modes_s": res["seconds"],
        "simkit_vs_ours_max_principal_angle_sin": principal_angle_sin(model.weights, Ws, masses),
    }


def principal_angle_sin(A: np.ndarray, B: np.ndarray, mass: np.ndarray) -> float:
    """Sine of the largest principal angle between span(A) and span(B), A, B: (n, k), in the M inner product."""
    s = np.sqrt(mass)[:, None]
    Qa, _ = np.linalg.qr(s * A)
    Qb, _ = np.linalg.qr(s * B)
    cos = np.linalg.svd(Qa.T @ Qb, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - cos.min() ** 2)))
