"""Rotation-strain coordinates against skinning eigenmodes, side by side (issue 27; part of the rotstrain section).

The scenes and solvers are ``core/validation/rs_vs_modes.py``'s: a 4 m bar bent 90 degrees by two
bones, a 2 m box spun to two turns a second by its own transform (one bone), and CesiumMan's left
arm (upper arm, forearm, hand: the real character's tet mesh and painted weights, its walk clip's
bone motion, scaled to metres).  Each runs under the full-space reference, skinning eigenmodes at
the add-on's defaults (16 modes, 100 clusters) and RS coordinates carried by the rig at the
add-on's defaults (8 modes, Taylor polynomial), the same model and step for all three.

Per scene and method:

* ms per step, paired: the two reduced solvers' whole runs alternate A B B A in this process
  (``paired.abba``), the figure the median per-round ratio RS / skinning eigenmodes;
* the error against the full-space reference, and the same for the complementary part of the
  secondary motion only (its rig-space part removed) -- RS's own model differs from the
  reference's, this says how much of its error is that;
* the leak: the share of the secondary motion that lies in the rig's space (0: complementary);
* the build seconds (modes, basis, polynomial).

Then seed 000 §9.4 checked with numbers (``rig_pose_reconstruction``: the bent bar's pose rebuilt
through RS, linearised as §9.4 reads it, exactly, and in RS subspaces), and a sweep of both
methods over their mode counts on the bent bar (error against ms per step, the second panel of
``plots/rotstrain_error_vs_time.png``); the RS sweep runs past the add-on's cap of 8 modes.
``--quick`` runs small bars for a few steps and skips the character.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from core.geometry.tetmesh import TetMesh
from core.io.tet_cache import cached_tet_mesh
from core.model.interior_weights import volume_bone_weights
from core.model.rig import lbs_positions, transforms_from_parameters
from core.pipeline.drives import RS_MODES
from core.settings import BY_NAME
from core.validation import rs_vs_modes as rv

from .common import ROOT, Context, Timing
from .paired import abba, per_step

MODES = int(BY_NAME["modes"].default)
CLUSTERS = int(BY_NAME["clusters"].default)
ROUNDS = 5
LIMB_DUMP = ROOT / "build" / "rigs" / "cesium_man.npz"
LIMB_BONES = ("Node_13", "Node_14", "Node_15")  # CesiumMan's left upper arm, forearm, hand
LIMB_TETS = 12000  # the whole character's (lattice mesher: one mesh with or without fTetWild); the arm: 680
LIMB_FRAMES = 38  # the walk's first 1.5 s at 24 fps, one step per frame
SWEEP_RS = (2, 3, 4, 5, 6, 8, 10, 12)
SWEEP_MODES = (1, 2, 4, 8, 16, 32)
QUICK_SWEEP_RS = (2, 5)
QUICK_SWEEP_MODES = (2, 4)


def limb(ctx: Context) -> rv.RigScene | None:
    """CesiumMan's left arm from the rig dump (made with ``tools.rig_dump`` when missing), or None if it cannot be."""
    if not LIMB_DUMP.exists():
        ctx.log("  rs_vs_modes: dumping CesiumMan's rig (python -m tools.rig_dump --only cesium_man)")
        proc = subprocess.run(
            [sys.executable, "-m", "tools.rig_dump", "--only", "cesium_man"], cwd=ROOT, capture_output=True, text=True
        )
        if proc.returncode != 0 or not LIMB_DUMP.exists():
            ctx.log(f"  rs_vs_modes: no character limb ({proc.stderr.strip().splitlines()[-1:]})")
            return None
    d = np.load(LIMB_DUMP)
    tet = cached_tet_mesh(d["rest"], d["faces"], LIMB_TETS, "lattice", "join", None, [])
    W = volume_bone_weights(tet.X, tet.T, d["rest"], d["faces"], d["bone_weights"])
    names = [str(n) for n in d["bone_names"]]
    A = np.array([transforms_from_parameters(p) for p in d["p"][:LIMB_FRAMES]])
    # The glTF is imported at x100 (centimetres read as metres): back to metres, so the material means flesh.
    scale = 0.01
    A[..., 3] *= scale
    X = scale * TetMesh.from_arrays(tet.X, tet.T).X
    return rv.limb_scene("cesium_man_arm", X, tet.T, W, A, [names.index(b) for b in LIMB_BONES], 1.0 / float(d["fps"]))


def _method_row(scene: rv.RigScene, u: np.ndarray, ref: np.ndarray, project, build_s: float, t: Timing) -> dict:
    m = scene.masses
    return {
        "ms_per_step": Timing(1e3 * t.median, 1e3 * t.min, 1e3 * t.max, t.repeats),
        "build_s": build_s,
        "error_vs_full_space": rv.relative_error(m, u, ref),
        "error_complementary_part": rv.relative_error(m, u - project(u), ref),
        "leak_max": float(rv.rig_leak(scene, u).max()),
        "motion_vs_reference": float(rv.mass_norms(m, u).max() / rv.mass_norms(m, ref).max()),
    }


def compare(ctx: Context, scene: rv.RigScene, modes: int, rs_modes: int) -> dict:
    """Both reduced methods against the reference on one scene (the module doc's rows)."""
    ref, ref_s = rv.reference_run(scene)
    sim, modes_build = rv.modes_simulator(scene, modes, CLUSTERS)
    rs, rs_build = rv.rs_model(scene, rs_modes)
    um, _ = rv.modes_run(scene, sim)
    ur, _ = rs.run(scene.A)
    paired = abba(
        lambda: float(rs.run(scene.A)[1].sum()),
        lambda: float(rv.modes_run(scene, sim)[1].sum()),
        1 if ctx.quick else ROUNDS,
    )
    project = rv.rig_projection(scene)
    out = {
        "vertices": scene.mesh.n,
        "tets": scene.mesh.t,
        "bones": scene.weights.shape[1],
        "steps": scene.steps,
        "time_step": scene.h,
        "youngs_modulus": scene.youngs,
        "reference_ms_per_step": 1e3 * ref_s,
        "reference_motion_rms_m": float(rv.mass_norms(scene.masses, ref).max() / np.sqrt(scene.masses.sum())),
        "reference_leak_max": float(rv.rig_leak(scene, ref).max()),
        "skinning_eigenmodes": _method_row(scene, um, ref, project, modes_build, per_step(paired["b"], scene.steps)),
        "rotation_strain": _method_row(scene, ur, ref, project, rs_build, per_step(paired["a"], scene.steps)),
        "time_ratio_rs_over_modes": paired["ratio"],
    }
    s, r = out["skinning_eigenmodes"], out["rotation_strain"]
    ctx.log(
        f"  rs_vs_modes {scene.name} ({scene.mesh.n} vertices): modes {s['ms_per_step'].median:.3g} ms, "
        f"error {100 * s['error_vs_full_space']:.0f} %, leak {s['leak_max']:.1e}; RS {r['ms_per_step'].median:.3g} ms, "
        f"error {100 * r['error_vs_full_space']:.0f} % ({100 * r['error_complementary_part']:.0f} % complementary "
        f"part), leak {100 * r['leak_max']:.0f} %"
    )
    return out


def sweep(ctx: Context, scene: rv.RigScene) -> dict:
    """Error and ms per step (median of one run) of both methods over their mode counts on one scene."""
    ref, _ = rv.reference_run(scene)
    m = scene.masses
    out: dict = {"skinning_eigenmodes": [], "rotation_strain": []}
    for k in QUICK_SWEEP_MODES if ctx.quick else SWEEP_MODES:
        sim, build = rv.modes_simulator(scene, k, CLUSTERS)
        u, sec = rv.modes_run(scene, sim)
        row = {"modes": k, "ms_per_step": 1e3 * float(np.median(sec)), "build_s": build}
        out["skinning_eigenmodes"].append({**row, "error_vs_full_space": rv.relative_error(m, u, ref)})
    for k in QUICK_SWEEP_RS if ctx.quick else SWEEP_RS:
        rs, build = rv.rs_model(scene, k)
        u, sec = rs.run(scene.A)
        row = {"modes": k, "basis": int(rs.body.map.fit.B.shape[0]), "ms_per_step": 1e3 * float(np.median(sec))}
        out["rotation_strain"].append({**row, "build_s": build, "error_vs_full_space": rv.relative_error(m, u, ref)})
        ctx.log(f"  rs_vs_modes sweep RS {k} modes: {row['ms_per_step']:.3g} ms/step, build {build:.2f} s")
    return out


def reconstruction(scene: rv.RigScene) -> dict:
    """§9.4: one tet turned 90 degrees about z through the linearised split, and the bent bar's pose rebuilt."""
    Rz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    out = rv.rig_pose_reconstruction(scene, -1, (2, 5, 8))
    x = lbs_positions(scene.mesh.X, scene.weights, scene.A[-1])
    F = np.einsum("tai,taj->tij", x[scene.mesh.T], scene.mesh.gradients)
    out["pose_volume"] = float(scene.mesh.volumes @ np.linalg.det(F) / scene.mesh.volumes.sum())
    out["one_tet_90deg"] = np.round(rv.linearised_rs_gradient(Rz), 12).tolist()
    return out


def run(ctx: Context) -> dict:
    """The comparison: {"scenes": {name: compare}, "sweep": on the bent bar, "reconstruction": §9.4}."""
    steps = 6 if ctx.quick else 36
    cells = 2 if ctx.quick else 3
    bar = rv.bent_bar(steps=steps, cells=cells)
    scenes = [bar, rv.spun_object(steps=steps, cells=cells if ctx.quick else 4)]
    arm = None if ctx.quick else limb(ctx)
    if arm is not None:
        scenes.append(arm)
    # Quick meshes are too small for 16 complementary modes: 4 of each check the plumbing (the spun box's
    # three slowest RS modes, two bendings and a twist, are orthogonal to the spin's loads).
    modes, rs_modes = (4, 4) if ctx.quick else (MODES, RS_MODES)
    return {
        "modes": modes,
        "clusters": CLUSTERS,
        "rs_modes": rs_modes,
        "scenes": {sc.name: compare(ctx, sc, modes, rs_modes) for sc in scenes},
        "sweep": sweep(ctx, bar),
        "reconstruction": reconstruction(bar),
    }


def _times(ratio: float) -> str:
    return f"{ratio:.2g}x slower" if ratio >= 1 else f"{1 / ratio:.2g}x faster"


def in_short(p: dict, free: list[dict]) -> str:
    """One paragraph: where RS wins and where it loses, by how much, from the figures; free: the rotstrain
    section's sweep on the clamped bar under gravity (no rig), rows with modes, ms_per_step, error."""
    sc = p["scenes"].values()
    ratios = [c["time_ratio_rs_over_modes"]["median"] for c in sc]
    err_rs = [c["rotation_strain"]["error_vs_full_space"] for c in sc]
    err_sk = [c["skinning_eigenmodes"]["error_vs_full_space"] for c in sc]
    leaks = [c["rotation_strain"]["leak_max"] for c in sc]
    build = [c["rotation_strain"]["build_s"] / c["skinning_eigenmodes"]["build_s"] for c in sc]
    rec = p["reconstruction"]
    fast = [r for r in ratios if r < 1]
    speed = (
        f"RS steps {1 / min(fast):.1f}x faster at best ({len(fast)} of {len(ratios)} scenes), {max(ratios):.1f}x "
        f"slower at worst"
        if fast
        else f"RS steps {min(ratios):.1f}-{max(ratios):.1f}x slower"
    )
    return (
        f"In short: {speed}; it prepares {min(build):.0f}-{max(build):.0f}x slower; under a rig it is "
        f"{min(err_rs) / max(err_sk):.1f}x or more further from full space ({100 * min(err_rs):.0f}-"
        f"{100 * max(err_rs):.0f} % against {100 * min(err_sk):.0f}-{100 * max(err_sk):.0f} %), because "
        f"{100 * min(leaks):.0f}-{100 * max(leaks):.0f} % of its motion is the rig's own (the core does not follow the "
        f"object or the bones), where skinning eigenmodes are complementary to round-off.  §9.4: the collapse is "
        f"real for the linearised split ({100 * rec['linearised']['volume_kept']:.0f} % of the volume kept) and does "
        f"not happen with RS coordinates as seed 003 computes them (the rotation's log: exact; RS subspaces keep "
        f"{100 * min(rec[k]['volume_kept'] for k in rec if k.startswith('subspace_')):.0f} % or more), but those "
        f"subspaces miss the rig's pose by {100 * min(rec[k]['error'] for k in rec if k.startswith('subspace_')):.0f} "
        f"% or more, which the skinning subspace holds exactly.  RS wins where there is no rig to be complementary "
        f"to: a body's own large rotations{_free_figure(free)}."
    )


def _free_figure(free: list[dict]) -> str:
    if not free:
        return ""
    best = min(free, key=lambda r: r["error_vs_full_space"])
    t = best["ms_per_step"]
    ms = t["median"] if isinstance(t, dict) else t.median
    return (
        f" (the clamped bar above, its tip turned about 90°: {100 * best['error_vs_full_space']:.1f} % from full "
        f"space with {best['modes']} RS coordinates at {ms:.2g} ms per step)"
    )


def verdict(p: dict) -> list[str]:
    """Plain sentences from the figures: per scene, time, error and leak of RS beside skinning eigenmodes."""
    L = []
    for name, c in p["scenes"].items():
        s, r = c["skinning_eigenmodes"], c["rotation_strain"]
        L.append(
            f"- **{name}**: RS is {_times(c['time_ratio_rs_over_modes']['median'])} per step "
            f"({r['ms_per_step']['median']:.3g} vs {s['ms_per_step']['median']:.3g} ms); error against full space "
            f"{100 * r['error_vs_full_space']:.0f} % vs {100 * s['error_vs_full_space']:.0f} % "
            f"({100 * r['error_complementary_part']:.0f} % for RS's complementary part alone); "
            f"{100 * r['leak_max']:.0f} % of RS's secondary motion is motion the rig itself makes "
            f"(skinning eigenmodes {s['leak_max']:.0e}, the reference {c['reference_leak_max']:.0e})."
        )
    return L


def report_lines(p: dict, free: list[dict] | None = None) -> list[str]:
    """REPORT.md lines of the comparison (appended to the rotstrain section); free: see :func:`in_short`."""
    L = [
        "### Rotation-strain coordinates against skinning eigenmodes (issue 27)",
        "",
        f"Same mesh, rig motion, elastic model (co-rotational, ν = 0), backward Euler step and tolerance for the "
        f"full-space reference (exactly complementary), skinning eigenmodes ({p['modes']} modes, {p['clusters']} "
        f"clusters; 16 and 100 are the add-on's defaults) and RS coordinates carried by the rig, p = LBS(X + B x(q)) "
        f"({p['rs_modes']} modes, Taylor polynomial; 8 is the add-on's cap).  Times paired (A B B A, whole runs, one "
        "BLAS thread); error: worst step's mass-norm distance to the reference over the reference's largest "
        "secondary motion; leak: share of the secondary motion's mass norm in the rig's space (0 = complementary).",
        "",
        "| scene | vertices / tets / bones | method | ms per step (min–max) | build s | error | error, "
        "complementary part | leak | motion / reference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in p["scenes"].items():
        for method in ("skinning_eigenmodes", "rotation_strain"):
            r, t = c[method], c[method]["ms_per_step"]
            L.append(
                f"| {name} | {c['vertices']} / {c['tets']} / {c['bones']} | {method} | {t['median']:.3g} "
                f"({t['min']:.3g}–{t['max']:.3g}) | {r['build_s']:.2f} | {100 * r['error_vs_full_space']:.1f} % | "
                f"{100 * r['error_complementary_part']:.1f} % | {r['leak_max']:.2g} | {r['motion_vs_reference']:.2f} |"
            )
    L += ["", "Where each wins, from these figures:", "", *verdict(p), "", in_short(p, free or []), ""]
    rec = p["reconstruction"]
    sub = [k for k in rec if k.startswith("subspace_")]
    L += [
        f"Seed 000 §9.4, with numbers.  One tet turned 90° about z, split linearly (F − I = ω + ε) and rebuilt as "
        f"exp(ω)(I + ε): {rec['one_tet_90deg']} -- the collapse onto the z axis, as §9.4 says.  The bent bar's pose "
        f"(its largest tet rotation {rec['bend_deg']:.0f}°; linear blend skinning itself keeps "
        f"{100 * rec['pose_volume']:.0f} % of the volume) rebuilt through RS and the Poisson fit:",
        "",
        "| RS reconstruction | error | volume kept |",
        "|---|---|---|",
    ]
    for k in ["linearised", "exact", *sub]:
        L.append(f"| {k} | {100 * rec[k]['error']:.1f} % | {100 * rec[k]['volume_kept']:.0f} % |")
    L += [
        "",
        "Sweep on the bent bar (second panel of the plot; RS past the add-on's cap of 8 modes):",
        "",
        "| method | modes | ms per step | build s | error |",
        "|---|---|---|---|---|",
    ]
    for method, rows in p["sweep"].items():
        for r in rows:
            L.append(
                f"| {method} | {r['modes']} | {r['ms_per_step']:.3g} | {r['build_s']:.2f} | "
                f"{100 * r['error_vs_full_space']:.1f} % |"
            )
    return [*L, ""]


def plot_panel(ax, p: dict) -> None:
    """Error against ms per step of both methods' sweeps on the bent bar, on a matplotlib axis."""
    for method, style in (("skinning_eigenmodes", "-s"), ("rotation_strain", "-o")):
        rows = p["sweep"][method]
        ms = [r["ms_per_step"] for r in rows]
        err = [100 * r["error_vs_full_space"] for r in rows]
        ax.plot(ms, err, style, label=method.replace("_", " "))
        for r, x, y in zip(rows, ms, err):
            ax.annotate(str(r["modes"]), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    bar = p["scenes"]["bent_bar"]
    ax.axvline(bar["reference_ms_per_step"], color="k", ls="--", lw=1, label="full space (error 0)")
    ax.set_xscale("log")
    ax.set_xlabel("ms per step (one thread)")
    ax.set_ylabel("error vs full space [%]")
    ax.set_title(f"Bar bent 90° by two bones, {bar['vertices']} vertices", fontsize=9)
    ax.legend(fontsize=7)
