"""REPORT.md from results.json: one table per section, the plots, and where we are behind.

Targets (from the issues and the seed) are checked against the measured
ratios and every miss is stated in the "Behind" list with its size.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from .common import machines_note, markdown_table
from .convergence import summary_rows as convergence_rows
from .physskin import summary_rows as physskin_rows
from .posespace import summary_rows as posespace_rows
from .side_by_side import headline

TARGETS = {
    "step_vs_fastcody": 0.5,  # our step at most half fast-cody's (issue 14)
    "preparation_vs_fastcody": 0.25,  # issue 14: raw arrays to a ready simulator, at ~20k vertices
    "bake_vs_frame_set": 1.5,  # bake at most 1.5x Blender's frame_set loop
    "preview_vs_frame_set": 0.5,  # live preview at most 0.5x Blender's frame evaluation
    "table1_speedup": 5.8,  # the seed's smallest skinning/displacement speed-up
    "step_vs_simkit": 0.2,  # at least 5x faster than simkit's tutorial simulator
    "reference_speedup": 1000.0,  # reduced step at least 1000x the full-space step at 10k vertices
    "scaling_flat": 1.1,  # step(100k) / step(10k) at most 1.1
    "first_jiggle_s": 5.0,  # issue 11: fresh character to first previewed jiggle, at 3.5k vertices / 15k tets
    "max_offset_pct": 25.0,  # issue 11's plausibility checks, % of the body diagonal, default settings
    "first_offset_pct": 1.0,
    "settled_offset_pct": 1.0,
}
# The first-jiggle target is stated at 3.5k render vertices: it is checked on characters up to this many.
FIRST_JIGGLE_UP_TO_VERTICES = 4000
PLAUSIBILITY = (
    ("max_offset_pct", "max offset"),
    ("first_offset_pct", "first-frame offset"),
    ("settled_offset_pct", "settled offset"),
)


def _med(x: Any) -> float:
    return float(x["median"]) if isinstance(x, dict) else float(x)


def _ms(x: Any) -> str:
    if not isinstance(x, dict):
        return f"{1e3 * float(x):.3g}"
    return f"{1e3 * x['median']:.3g} ({1e3 * x['min']:.3g}–{1e3 * x['max']:.3g})"


def _s(x: Any) -> str:
    """Seconds of a timing: median (min–max)."""
    return f"{x['median']:.3g} ({x['min']:.3g}–{x['max']:.3g})"


def _ratio(q: dict) -> str:
    """A paired ratio: median of the per-round ratios (quartiles; range)."""
    return f"{q['median']:.2f}× (IQR {q['q1']:.2f}–{q['q3']:.2f}; range {q['min']:.2f}–{q['max']:.2f})"


def _model_sizes(rows: list[dict]) -> str:
    """The real m and r of a section's models: one pair when every size has the same, else each."""
    pairs = sorted({(r["modes"], r["clusters"]) for r in rows})
    if len(pairs) == 1:
        return f"m={pairs[0][0]}, r={pairs[0][1]} at every size"
    return "m, r = " + ", ".join(f"{r['modes']}, {r['clusters']}" for r in rows) + " (NOT equal across sizes)"


def implausible(row: dict) -> list[str]:
    """What fails issue 11's checks in one character's default bake (empty: plausible)."""
    out = [
        f"{label} {row[key]:.3g} % (target ≤ {TARGETS[key]:g} %)"
        for key, label in PLAUSIBILITY
        if not row[key] <= TARGETS[key]  # NaN fails too
    ]
    if row["nan"]:
        out.append("NaN in the bake")
    said = row["messages"] + row["warnings"]
    if said:
        out.append(f'{len(said)} message(s) from the bake, first: "{said[0]}"')
    return out


def summary_rows(res: dict) -> list[list[str]]:
    """The README's summary: one line per headline figure."""
    s = res["sections"]
    rows: list[list[str]] = []
    if "scaling" in s:
        sc = s["scaling"]
        rows.append(
            [
                f"step time, {sc['smallest']:,} → {sc['largest']:,} vertices ({_model_sizes(sc['rows'])})",
                f"{_ms(sc['rows'][0]['step_lbs'])} → {_ms(sc['rows'][-1]['step_lbs'])} ms",
                f"×{sc['ratio_largest_to_smallest']:.2f} for ×{sc['largest'] / sc['smallest']:.0f} vertices",
            ]
        )
    peers = s.get("peers", {})
    for row in peers.get("steps", []):
        model = f"m={row['modes']}, r={row['clusters']}"
        if row.get("step_ratio_ours_over_simkit"):
            q = row["step_ratio_ours_over_simkit"]
            rows.append(
                [
                    f"step vs simkit's tutorial simulator, {row['vertices']:,} vertices ({model}), paired",
                    f"{_ms(row['step_ours_beside_simkit'])} vs {_ms(row['step_simkit'])} ms",
                    f"{1 / q['median']:.1f}× faster ({_ratio(q)} theirs)",
                ]
            )
        q = row["step_ratio_ours_over_fastcody"]
        rows.append(
            [
                f"step vs fast-cody (C++), {row['vertices']:,} vertices ({model}), paired",
                f"{_ms(row['step_ours'])} vs {_ms(row['step_fastcody'])} ms",
                f"{_ratio(q)} theirs",
            ]
        )
        if "converged" in row:
            c = row["converged"]
            rows.append(
                [
                    f"step vs fast-cody, both converged ({_converged_terms(c)}), {row['vertices']:,} vertices, paired",
                    f"{_ms(c['step_ours'])} vs {_ms(c['step_fastcody'])} ms",
                    f"{_ratio(c['step_ratio_ours_over_fastcody'])} theirs",
                ]
            )
    for row in peers.get("preparation", []):
        q = row["ratio_ours_over_fastcody"]
        o, f = row["ours"], row["fastcody"]
        rows.append(
            [
                f"preparation (raw arrays to a ready simulator) vs fast-cody, {row['vertices']:,} vertices "
                f"(ours m={o['m']}, r={o['r']}; theirs m={f['m']}, r={f['r']}), paired",
                f"{_s(o['seconds'])} vs {_s(f['seconds'])} s",
                f"{_ratio(q)} theirs",
            ]
        )
    if "accuracy" in s:
        for row in s["accuracy"]["speed"]:
            rows.append(
                [
                    f"reduced vs full-space step, {row['vertices']:,} vertices",
                    f"{_ms(row['reduced_step'])} ms vs {_med(row['reference_step']):.2f} s",
                    f"{row['ratio']:.0f}× faster",
                ]
            )
    if "table1" in s:
        for row in s["table1"]["rows"]:
            if "ratio" in row:
                rows.append(
                    [
                        f"10 skinning vs 120 displacement modes, {row['vertices']:,} vertices",
                        f"{row['skinning_s']:.2f} vs {row['displacement_s']:.1f} s",
                        f"{row['ratio']:.1f}× faster",
                    ]
                )
    if "physskin" in s:
        rows += physskin_rows(s["physskin"])
    if "posespace" in s:
        rows += posespace_rows(s["posespace"])
    if "convergence" in s:
        rows += convergence_rows(s["convergence"])
    rows += new_section_rows(s)
    b = s.get("blender")
    if b:
        mpf = b["ms_per_frame"]
        rows.append(
            [
                f"bake, {b['vertices']:,}-vertex character, {b['frames']} frames",
                f"{mpf['bake']:.2f} ms/frame vs frame_set {mpf['frame_set']:.2f}",
                f"{b['ratios']['bake_over_frame_set']:.2f}× frame_set "
                f"({b['ratios']['bake_over_frame_set_read']:.2f}× frame_set + read)",
            ]
        )
        rows.append(
            [
                "live preview per frame (simulating / replaying)",
                f"{mpf['preview_simulating']:.2f} / {mpf['preview_replay']:.2f} ms",
                f"{b['ratios']['preview_simulating_over_frame_set']:.2f}× / "
                f"{b['ratios']['preview_replay_over_frame_set']:.2f}× frame_set",
            ]
        )
        rows.append(
            [
                "Blender Soft Body, same mesh and frames",
                f"{mpf['soft_body']:.2f} ms/frame",
                f"{b['ratios']['soft_body_over_bake']:.2f}× our bake",
            ]
        )
    chars = s.get("characters", {}).get("characters", [])
    if chars:
        # The character nearest the size the first-jiggle target is stated at.
        c = min(chars, key=lambda r: abs(r["vertices"] - 3500))
        t = c["first_jiggle_s"]
        rows.append(
            [
                f"time to first jiggle, {c['name']}, {c['vertices']:,} vertices / {c['tets']:,} tets",
                f"{_s(t)} s",
                f"{t['median'] / TARGETS['first_jiggle_s']:.2f}× the 5 s target",
            ]
        )
        worst = max(chars, key=lambda r: r["max_offset_pct"])
        rows.append(
            [
                "real characters plausible with default settings (max ≤ 25 %, first ≤ 1 %, settled ≤ 1 %)",
                f"{sum(not implausible(r) for r in chars)} of {len(chars)}",
                f"largest max offset {worst['max_offset_pct']:.3g} % ({worst['name']})",
            ]
        )
    return rows


# Rows for today's sections (issue 29): locomotion, RS vs skinning eigenmodes, contact and the
# pose-space claim.  Each reads only its section's result dict, so a partial results.json still renders.
LOCOMOTION_SEARCH_S = 300.0  # goal: a gait search in at most 5 minutes (the seed's Table 1: 900-3,590 s)
CLAIM_METHODS = ("seed", "warped", "pca", "skinning")  # the seed's method, warped, PCA, rest skinning eigenmodes


def locomotion_rows(p: dict) -> list[list[str]]:
    """One row: the blob at each size, gait search seconds, body lengths per 10 s and ms per step (every
    creature when no blob ran, as in --quick)."""
    blobs = [r for r in p["rows"] if r["creature"].startswith("blob")]
    name = "blob" if blobs else " / ".join(r["creature"] for r in p["rows"])
    blobs = blobs or p["rows"]
    if not blobs:
        return []
    seed = [r["optimisation_s"] for r in p.get("seed_table1", [])]
    seed_note = f"; seed's Table 1 {min(seed):,.0f}–{max(seed):,.0f} s, its machine" if seed else ""
    slowest = max(r["optimisation_s"] for r in blobs)
    return [
        [
            f"locomotion, {name} at " + " / ".join(f"{r['vertices']:,}" for r in blobs) + " vertices (gait search "
            f"at {blobs[0]['searched_vertices']:,}, refined on the larger): search s, body lengths per 10 s, ms/step",
            " / ".join(f"{r['optimisation_s']:.0f}" for r in blobs)
            + " s; "
            + " / ".join(f"{r['body_lengths']:.2f}" for r in blobs)
            + " lengths; "
            + " / ".join(f"{r['ms_per_step']:.2f}" for r in blobs)
            + " ms",
            f"slowest search {slowest / LOCOMOTION_SEARCH_S:.2f}× the {LOCOMOTION_SEARCH_S:.0f} s goal{seed_note}",
        ]
    ]


def rotstrain_rows(p: dict) -> list[list[str]]:
    """One row: rotation-strain (RS) vs skinning eigenmodes per scene, paired time ratio and error vs full space."""
    c = p.get("comparison")
    if not c:
        return []
    sc = c["scenes"]
    parts = []
    for n, s in sc.items():
        rs, ours = s["rotation_strain"], s["skinning_eigenmodes"]
        parts.append(
            f"{n.replace('_', ' ')} {rs['ms_per_step']['median']:.3g} vs {ours['ms_per_step']['median']:.3g} ms, "
            f"error {rs['error_vs_full_space']:.2f} vs {ours['error_vs_full_space']:.2f}"
        )
    ratios = " / ".join(f"{s['time_ratio_rs_over_modes']['median']:.2f}×" for s in sc.values())
    seed = p.get("seed", {})
    beam = p.get("rows", {}).get("taylor_polynomial", {}).get("ms_per_step")
    beam_note = (
        f"; seed 003's beam {seed['ms_per_step']:g} ms beside our RS {beam['median']:.3g} ms "
        f"({p['vertices']:,} vertices)"
        if seed and beam
        else ""
    )
    return [
        [
            f"RS vs skinning eigenmodes (m = {c['modes']}, r = {c['clusters']}; RS {c['rs_modes']} modes), "
            f"{' / '.join(n.replace('_', ' ') for n in sc)}, paired, error vs full space",
            "; ".join(parts),
            f"RS {ratios} our time, paired{beam_note}",
        ]
    ]


def contact_rows(p: dict) -> list[list[str]]:
    """One row: step time with 0..1,000 active contacts and its paired ratio to no contact."""
    s = p.get("speed")
    if not s:
        return []
    counts = [k for k in s["ms_per_step"] if k != "off"]
    pic = p.get("picture")
    pen = (
        f"; {pic['character']} tail penetration {pic['penetration_pct_off']:.0f} % of its thickness off, "
        f"{pic['penetration_pct_on']:.2g} % on"
        if pic
        else ""
    )
    return [
        [
            f"contact step with {' / '.join(f'{int(k):,}' for k in counts)} active contacts, {s['vertices']:,} "
            f"vertices (m = {s['m']}, r = {s['r']}), paired",
            " / ".join(f"{s['ms_per_step'][k]:.3g}" for k in counts) + f" ms vs {s['ms_per_step']['off']:.3g} off",
            " / ".join(f"{s['ratio_over_off'][k]['median']:.2f}×" for k in counts) + f" no contact{pen}",
        ]
    ]


def claim_rows(p: dict) -> list[list[str]]:
    """One row: the pose-space claim, mean error vs full space of each basis at each m."""
    c = p.get("claim")
    if not c:
        return []
    ms = sorted({r["m"] for r in c["rows"]})
    err = {(r["method"], r["m"]): r["mean"] for r in c["rows"]}
    names = {"seed": "seed", "warped": "warped", "pca": "PCA", "skinning": "rest skinning eigenmodes"}
    methods = [k for k in CLAIM_METHODS if all((k, m) in err for m in ms)]
    seed_over = " / ".join(f"{err['seed', m] / err['skinning', m]:.1f}×" for m in ms) if "skinning" in methods else ""
    return [
        [
            f"pose-space claim, {c['vertices']:,} vertices, {c['steps']} steps, m = {' / '.join(map(str, ms))}: "
            "mean error vs full space",
            "; ".join(f"{names[k]} " + " / ".join(f"{err[k, m]:.3f}" for m in ms) for k in methods),
            f"seed {seed_over} rest skinning eigenmodes' error" if seed_over else "n/a",
        ]
    ]


def new_section_rows(s: dict) -> list[list[str]]:
    """The rows of the sections above present in ``s`` (results.json's "sections")."""
    rows: list[list[str]] = []
    if "posespace" in s:
        rows += claim_rows(s["posespace"])
    for name, fn in (("locomotion", locomotion_rows), ("rotstrain", rotstrain_rows), ("contact", contact_rows)):
        if name in s:
            rows += fn(s[name])
    return rows


def new_section_behind(s: dict) -> list[str]:
    """Goals the sections above miss: a locomotion search over 300 s; RS both faster and more accurate
    than skinning eigenmodes in a scene; our RS step slower than the seed's beam.  (RS faster but less
    accurate is a trade, not a miss.)"""
    out = []
    for r in s.get("locomotion", {}).get("rows", []):
        if r["optimisation_s"] > LOCOMOTION_SEARCH_S:
            out.append(
                f"Locomotion search for the {r['creature']} ({r['vertices']:,} vertices) takes "
                f"{r['optimisation_s']:.0f} s (goal ≤ {LOCOMOTION_SEARCH_S:.0f} s)."
            )
    rs = s.get("rotstrain", {})
    for n, sc in rs.get("comparison", {}).get("scenes", {}).items():
        q = sc["time_ratio_rs_over_modes"]["median"]
        e_rs, e_ours = sc["rotation_strain"]["error_vs_full_space"], sc["skinning_eigenmodes"]["error_vs_full_space"]
        if q < 1.0 and e_rs <= e_ours:
            out.append(
                f"RS beats skinning eigenmodes on the {n.replace('_', ' ')}: {q:.2f}× our time, paired, and error "
                f"{e_rs:.2f} vs our {e_ours:.2f} of the full-space motion."
            )
    beam = rs.get("rows", {}).get("taylor_polynomial", {}).get("ms_per_step")
    if beam and rs.get("seed") and beam["median"] > rs["seed"]["ms_per_step"]:
        out.append(f"Our RS beam step is {beam['median']:.3g} ms against seed 003's {rs['seed']['ms_per_step']:g} ms.")
    return out


# What was tried toward the step goal (issue 14: at most 0.5x fast-cody), measured 2026-11-23 with the
# same A B B A pairing on this machine.  Not re-measured by the bench: a record of the attempts.
STEP_ATTEMPTS = [
    "**Toward a step at half fast-cody's time: what was tried** (2026-11-23, paired A B B A, 3k-vertex grid, "
    "m = 16, r = 140, 10 iterations; not re-measured by this run):",
    "",
    "- Readable step with explicit per-step terms, Z stored transposed and cluster matrices as rows so each "
    "product is one broadcast matmul (products with 3-column matrices cost 34-39 µs in OpenBLAS here, as three "
    "matrix-vector products 10-16 µs): with the closed-form rotation below, 0.59-0.69× the previous step "
    "(1.30-1.44× fast-cody before, 0.86-0.93× after).",
    "- Closest rotation of 140 matrices: batched Newton 115-130 µs; Newton-Schulz (4 iterations) 64-72 µs but "
    "needs ~10 µs of determinant and convergence checks; scipy's Rotation.from_matrix 620 µs; closed form "
    "(Cayley-Hamilton on F, F C, cof F with Horn's quartic root by Newton from an upper bound, SVD for "
    "near-degenerate F) 92-96 µs, kept (≤ 6e-14 from the SVD on 20,000 random matrices).",
    "- Warm starts from the previous rotation: Newton-type polar iterations converge by singular values, so "
    "they gain nothing; a warm quartic root would save at most ~6 µs per call once guarded. Not kept.",
    "- Where a step's time goes now: 65-70 % the closest rotation, ~20 % the matrix-vector products, ~8 % "
    "per-step overhead. A numpy call on 140 numbers costs 0.7-1.2 µs here; 0.5× needs about 1.0-1.1 ms per "
    "step, so the rotation would have to fit in ~50 µs (~60 numpy calls; the closed form uses ~70). Reaching "
    "it needs fewer clusters' worth of calls per iteration or a compiled kernel with wheels for every platform.",
    "",
]


def _converged_terms(c: dict) -> str:
    """How a converged pairing was converged: each side's stop and iterations, and the accuracy."""
    o, f = c["ours"], c["fastcody"]
    return (
        f"ours tolerance {o['tolerance']:g}, {o['iterations']['mean']:.1f} iterations per step (max "
        f"{o['iterations']['max']}); fast-cody threshold {f['threshold']:.2g}, {f['iterations']['mean']:.1f} "
        f"(max {f['iterations']['max']}); trajectory error {o['error']:.1e} vs {f['error']:.1e} of the extent"
    )


# Sections that write their own report lines (``report_lines``) and, where they have targets,
# their own "behind" lines (``behind``), in report order.
SELF_REPORTING = (
    "physskin",
    "posespace",
    "locomotion",
    "rotstrain",
    "contact",
    "wheremoves",
    "whole_characters",
    "flesh",
    "convergence",
)


def _section_lines(sections: dict, hook: str) -> list[str]:
    """The lines each self-reporting section present in ``sections`` gives through its function ``hook``.

    Imported only when present: some sections pull in Blender or the peers' helpers.
    """
    lines: list[str] = []
    for name in SELF_REPORTING:
        if name in sections:
            fn = getattr(importlib.import_module(f"{__package__}.{name}"), hook, None)
            if fn is not None:
                lines += fn(sections[name])
    return lines


def behind(res: dict) -> list[str]:
    """Every target or peer we do not beat, with by how much."""
    s = res["sections"]
    out = []
    peers = s.get("peers", {})
    for row in peers.get("steps", []):
        r = row["step_ratio_ours_over_fastcody"]["median"]
        if r > TARGETS["step_vs_fastcody"]:
            out.append(
                f"Per-step time at {row['vertices']:,} vertices is {r:.2f}× fast-cody's C++, paired (target ≤ 0.5×)."
            )
        c = row.get("converged")
        if c and c["step_ratio_ours_over_fastcody"]["median"] > TARGETS["step_vs_fastcody"]:
            out.append(
                f"Per-step time at {row['vertices']:,} vertices with both sides converged to the same accuracy is "
                f"{c['step_ratio_ours_over_fastcody']['median']:.2f}× fast-cody's C++, paired (target ≤ 0.5×; "
                f"{_converged_terms(c)})."
            )
        rk = row.get("step_ratio_ours_over_simkit", {}).get("median")
        if rk and rk > TARGETS["step_vs_simkit"]:
            out.append(
                f"Per-step time at {row['vertices']:,} vertices is {rk:.2f}× simkit's tutorial simulator, paired "
                f"({1 / rk:.1f}× faster; target ≥ 5×)."
            )
    for row in peers.get("preparation", []):
        rs = row["ratio_ours_over_fastcody"]["median"]
        if row["vertices"] >= 15_000 and rs > TARGETS["preparation_vs_fastcody"]:
            out.append(
                f"Preparation at {row['vertices']:,} vertices is {rs:.2f}× fast-cody's, paired (target ≤ 0.25×)."
            )
    sc = s.get("scaling")
    if sc:
        rows = {r["vertices"]: r for r in sc["rows"]}
        big = max(rows)
        ten = min(rows, key=lambda n: abs(n - 10_000))
        if big > ten:
            r = _med(rows[big]["step_lbs"]) / _med(rows[ten]["step_lbs"])
            if r > TARGETS["scaling_flat"]:
                out.append(f"Step time at {big:,} vertices is {r:.2f}× that at {ten:,} (target ≤ 1.1×).")
    for row in s.get("accuracy", {}).get("speed", []):
        if row["vertices"] >= 8000 and row["ratio"] < TARGETS["reference_speedup"]:
            out.append(
                f"Reduced step is only {row['ratio']:.0f}× faster than full space at {row['vertices']:,} vertices."
            )
    t1 = s.get("table1", {}).get("rows", [])
    if t1:
        big = max(t1, key=lambda r: r["vertices"])
        if big["vertices"] >= 90_000 and big["skinning_s"] > 5.14:
            out.append(
                f"10 skinning modes at {big['vertices']:,} vertices ({big['tets']:,} tets) take "
                f"{big['skinning_s']:.1f} s here against the seed's 5.14 s for its 99,813-vertex dragon "
                "(its machine, MATLAB with CHOLMOD-class solvers; our grid has more tets per vertex than a "
                "surface-conforming mesh)."
            )
    for row in t1:
        if "ratio" in row and row["ratio"] < TARGETS["table1_speedup"]:
            out.append(
                f"Table 1 at {row['vertices']:,} vertices: skinning modes are {row['ratio']:.1f}× faster than "
                f"displacement modes, below the seed's smallest reported 5.8×."
            )
    b = s.get("blender")
    if b:
        r = b["ratios"]
        if r["bake_over_frame_set"] > TARGETS["bake_vs_frame_set"]:
            out.append(
                f"Bake is {r['bake_over_frame_set']:.2f}× Blender's bare frame_set loop (target ≤ 1.5×); "
                f"against frame_set plus reading the evaluated mesh (what any cache writer pays) it is "
                f"{r['bake_over_frame_set_read']:.2f}×."
            )
        for key, label in (
            ("preview_simulating_over_frame_set", "simulating"),
            ("preview_replay_over_frame_set", "replaying"),
        ):
            if r[key] > TARGETS["preview_vs_frame_set"]:
                out.append(f"Live preview ({label}) costs {r[key]:.2f}× Blender's frame evaluation (target ≤ 0.5×).")
    for row in s.get("characters", {}).get("characters", []):
        t = row["first_jiggle_s"]["median"]
        if row["vertices"] <= FIRST_JIGGLE_UP_TO_VERTICES and t > TARGETS["first_jiggle_s"]:
            out.append(
                f"Time to first jiggle for {row['name']} ({row['vertices']:,} vertices, {row['tets']:,} tets) is "
                f"{t:.1f} s (target ≤ 5 s at 3.5k vertices / 15k tets)."
            )
        failed = implausible(row)
        if failed:
            out.append(f"{row['name']} with default settings is not plausible: {'; '.join(failed)}.")
    out += _section_lines(s, "behind")
    out += new_section_behind(s)
    for name, err in res.get("errors", {}).items():
        out.append(f"Section `{name}` failed: {err}")
    return out


def _threads(threads: dict) -> str:
    """How each side's process was pinned, in one line."""
    parts = []
    for side, t in threads.items():
        libs = ", ".join(f"{k.split('-')[0].removeprefix('lib')} {v}" for k, v in t.get("openblas", {}).items())
        env = ", ".join(f"{k}={v}" for k, v in t.get("env", {}).items())
        parts.append(f"{side}: {env}; OpenBLAS threads: {libs or 'none loaded'}")
    return "; ".join(parts)


def fastcody_modes_lines(fm: dict) -> list[str]:
    """The peers section's paragraph on fast-cody's skinning eigenmodes against ours (issue 43, item 4)."""
    if "sin_full" not in fm:
        return [f"fast-cody's eigenmodes failed: {fm['error']}.", ""] if "error" in fm else []
    return [
        f"fast-cody's skinning eigenmodes against ours at {fm['vertices']:,} vertices, {fm['modes']} modes, on its "
        f"momentum-leak field: its `lbs_weight_space_constraint` keeps {fm['shipped_rank']} of the "
        f"{fm['rank']} directions of its own constraint rows (its `orthonormalize` rebuilds the SVD on the "
        f"first k rows, `bench/peers/fastcody_modes.py`), so its modes as shipped leave the complementary "
        f"space (largest principal-angle sine {fm['sin_shipped']:.2g}); given all its rows, its modes and ours "
        f"span the same space to {fm['sin_full']:.1e}.  Our default leak field (normalised to [0, 1]) is another "
        f"field than its dt = 1e-3 diffusion: with it the sine is {fm['sin_full_our_leak']:.2g}.",
        "",
    ]


def peers_report(p: dict) -> list[str]:
    """Section 3: the paired step and preparation tables, the pinning, and the run-to-run difference."""
    L = ["## 3. Peers on identical inputs, paired", ""]
    if "skipped" in p:
        return [*L, f"Skipped: {p['skipped']}.", ""]
    if p.get("method") != "paired":
        return [*L, "Measured by an older, unpaired method: re-run `python3.11 tasks.py bench --only peers`.", ""]
    L += [
        "Each side runs in its own warm worker process (ours with the main environment, the peers with the "
        "bench-only one), timed in rounds of A B B A over the same work; each figure is the median of the "
        "per-round ratios (A1 + A2) / (B1 + B2), with their quartiles (IQR) and range.  Per-side times are "
        "medians (min–max) over every block of that side.  Thread pinning, set by the bench whatever launches it: "
        + _threads(p.get("threads", {}))
        + ".",
        "",
        f"**Steps.**  The same model on every side (our modes and clusters), h = 1/{round(1 / p['time_step'])} s, "
        f"{p['iterations']} local-global iterations, blocks of {p['steps'][0]['block_steps'] if p['steps'] else '?'} "
        "steps.",
        "",
    ]
    L += markdown_table(
        [
            "vertices",
            "tets",
            "m",
            "r",
            "ours [ms/step]",
            "fast-cody [ms/step]",
            "ours/fast-cody",
            "simkit tutorial [ms/step]",
            "ours/simkit",
            "trajectory diff vs fast-cody / extent",
        ],
        [
            [
                f"{r['vertices']:,}",
                f"{r['tets']:,}",
                r["modes"],
                r["clusters"],
                _ms(r["step_ours"]),
                _ms(r["step_fastcody"]),
                _ratio(r["step_ratio_ours_over_fastcody"]),
                _ms(r["step_simkit"]) if r.get("step_simkit") else "—",
                _ratio(r["step_ratio_ours_over_simkit"]) if r.get("step_ratio_ours_over_simkit") else "—",
                f"{r['trajectory_max_diff_over_extent']:.1e}",
            ]
            for r in p["steps"]
        ],
    )
    conv = [r for r in p["steps"] if "converged" in r]
    if conv:
        L += [
            "**Converged steps** (issue 23): the same problem, each side stopping on its own criterion at the "
            "same accuracy.  Reference: our trajectory at "
            f"{conv[0]['converged']['reference_iterations']} local-global iterations, no early stop (both sides "
            "solve the same equations).  Ours: its defaults (tolerance relative to the character's size, "
            "Iterations cap).  fast-cody: `fast_cd_sim(..., max_iters, threshold)` with the loosest threshold "
            "(decades, then three bisections of its logarithm) whose trajectory error against the reference is "
            f"at most ours, max_iters {conv[0]['converged']['fastcody']['cap']}.  Errors: the largest vertex "
            f"deviation over {conv[0]['converged']['trajectory_steps']} steps, over the extent; iterations: per "
            "step over those steps (mean, max).",
            "",
        ]
        L += markdown_table(
            [
                "vertices",
                "ours: tolerance, iterations (max)",
                "ours error",
                "fast-cody: threshold, iterations (max)",
                "fast-cody error",
                "ours [ms/step]",
                "fast-cody [ms/step]",
                "ours/fast-cody",
            ],
            [
                [
                    f"{r['vertices']:,}",
                    f"{c['ours']['tolerance']:g}, {c['ours']['iterations']['mean']:.1f} "
                    f"({c['ours']['iterations']['max']})",
                    f"{c['ours']['error']:.1e}",
                    f"{c['fastcody']['threshold']:.2g}, {c['fastcody']['iterations']['mean']:.1f} "
                    f"({c['fastcody']['iterations']['max']})" + ("" if c["fastcody"]["matched"] else " (not matched)"),
                    f"{c['fastcody']['error']:.1e}",
                    _ms(c["step_ours"]),
                    _ms(c["step_fastcody"]),
                    _ratio(c["step_ratio_ours_over_fastcody"]),
                ]
                for r in conv
                for c in [r["converged"]]
            ],
        )
    L += [
        "**Preparation**: raw arrays (vertices, tets, rig weights, material) to a ready simulator, all inside "
        "the timer on both sides.  Ours: tet-mesh set-up, leak field, skinning modes, clusters, reduced "
        "products, Simulator construction.  fast-cody: its rig-animation app's pipeline (LBS Jacobian, "
        "complementarity constraint, `skinning_subspace`, then the C++ `fast_cd_sim` precomputation).",
        "",
    ]
    L += markdown_table(
        [
            "vertices",
            "tets",
            "ours: m, r",
            "fast-cody: m, r",
            "ours [s]",
            "fast-cody [s]",
            "ours/fast-cody",
            "ours, by stage [s]",
        ],
        [
            [
                f"{r['vertices']:,}",
                f"{r['tets']:,}",
                f"{r['ours']['m']}, {r['ours']['r']}",
                f"{r['fastcody']['m']}, {r['fastcody']['r']}",
                _s(r["ours"]["seconds"]),
                _s(r["fastcody"]["seconds"]),
                _ratio(r["ratio_ours_over_fastcody"]),
                ", ".join(f"{k} {v:.2f}" for k, v in r.get("ours_breakdown_s", {}).items()),
            ]
            for r in p["preparation"]
        ],
    )
    prev = p.get("previous_run")
    if prev:
        now = headline(p)
        common = [k for k in now if k in prev["ratios"]]
        L += [
            f"**Two runs of this section** (this one, and the one before it, {prev['date']}): the same paired "
            "ratios, and how far they differ.",
            "",
        ]
        L += markdown_table(
            ["ratio (ours/theirs, median of rounds)", "this run", "previous run", "difference"],
            [
                [
                    k,
                    f"{now[k]:.3f}",
                    f"{prev['ratios'][k]:.3f}",
                    f"{100 * (now[k] / prev['ratios'][k] - 1):+.1f} %",
                ]
                for k in common
            ],
        )
    else:
        L += ["(No earlier paired run of this section to compare with: run `--only peers` again.)", ""]
    L += STEP_ATTEMPTS
    sm = p.get("simkit_modes", {})
    if "simkit_vs_ours_max_principal_angle_sin" in sm:
        L += [
            f"simkit's constrained skinning eigenmodes, fed our weight-space constraint, span ours at "
            f"{sm['vertices']:,} vertices to a largest principal angle of sine "
            f"{sm['simkit_vs_ours_max_principal_angle_sin']:.1e} (an accuracy check; not timed).",
            "",
        ]
    elif "subspace_simkit_error" in sm:
        L += [f"simkit's eigenmodes failed: {sm['subspace_simkit_error']}.", ""]
    L += fastcody_modes_lines(p.get("fastcody_modes", {}))
    L += [
        "simkit 0.1.8 ships no complementary-dynamics simulator; its repository's tutorial builds one from "
        "library calls (reduced products, `block_coord` with a `polar_svd` local step and a Cholesky global "
        "step), run here in 3D on the same model and rig motion (its rig parameters fitted to the same rig "
        "positions), the solve only.",
        "",
        "![peers](plots/peers.png)",
        "",
    ]
    return L


def write_report(path: Path, res: dict) -> None:
    s = res["sections"]
    m = res["machine"]
    L: list[str] = [
        "# skinmodes benchmark report",
        "",
        f"Produced {res['date']} by `{res['command']}`"
        + (f" (sections re-run since with: {'; '.join(f'`{r}`' for r in res['reruns'])})" if res.get("reruns") else "")
        + "; its sections ran for "
        f"{sum(res.get('section_seconds', {}).values()):.0f} s"
        + (" (**quick mode: tiny sizes, figures are not meaningful**)" if res.get("quick") else "")
        + ".",
        "",
        f"Machine: {machines_note(res)}, {m.get('cores')} cores, {m.get('memory_gb', '?')} GB; "
        f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}; BLAS threads {m['blas_threads']}. "
        "Times are wall-clock medians with (min–max) over the repeats; ratios compare figures measured "
        "side by side in this one run.",
        "",
        "## Summary",
        "",
        *markdown_table(["figure", "measured", "ratio"], summary_rows(res)),
        "## Where we are behind",
        "",
    ]
    gaps = behind(res)
    L += [f"- {g}" for g in gaps] if gaps else ["- Nowhere: every target and peer comparison above is met."]
    L.append("")

    if "scaling" in s:
        sc = s["scaling"]
        L += ["## 1. Scaling: step cost against mesh size", ""]
        L += markdown_table(
            [
                "vertices",
                "tets",
                "bones",
                "m",
                "r",
                "prepare [s]",
                "peak memory [GB]",
                "step, LBS params [ms]",
                "step, rig positions [ms]",
                "reconstruct [ms]",
                "reconstruct, float32 [ms]",
                "numpy copy [ms]",
            ],
            [
                [
                    f"{r['vertices']:,}",
                    f"{r['tets']:,}",
                    r.get("bones", "—"),
                    r["modes"],
                    r["clusters"],
                    f"{r['prepare_s']:.1f}" if "prepare_s" in r else "—",
                    f"{r['peak_memory_gb']:.1f}" if "peak_memory_gb" in r else "—",
                    _ms(r["step_lbs"]),
                    _ms(r["step_positions"]),
                    _ms(r["reconstruct"]),
                    _ms(r["reconstruct_float32"]) if "reconstruct_float32" in r else "—",
                    _ms(r["numpy_copy"]),
                ]
                for r in sc["rows"]
            ],
        )
        L += [
            f"The LBS-parameter step grows ×{sc['ratio_largest_to_smallest']:.2f} from {sc['smallest']:,} to "
            f"{sc['largest']:,} vertices: its cost is independent of mesh size, as the method promises. The "
            "rig-positions path projects an (n, 3) rig shape each step and grows with n.",
            "",
            "![scaling](plots/scaling.png)",
            "",
        ]
    if "accuracy" in s:
        a = s["accuracy"]
        L += ["## 2. Reduced solver against the full-space reference", ""]
        L += markdown_table(
            ["vertices", "tets", "full-space step [s]", "reduced step [ms]", "speed-up"],
            [
                [
                    f"{r['vertices']:,}",
                    f"{r['tets']:,}",
                    f"{_med(r['reference_step']):.3g}",
                    _ms(r["reduced_step"]),
                    f"{r['ratio']:.0f}×",
                ]
                for r in a["speed"]
            ],
        )
        L += [
            "The full-space reference is skinmodes' own Newton/KKT solver (exact, analytic Hessian, sparse "
            "direct solves), written for accuracy, not speed.  The seed reports 3 s per frame for its "
            "full-space complementary dynamics at 10k vertices / 42k tets; against that figure the reduced "
            "step is still three orders of magnitude faster.",
            "",
        ]
        am = a["ablation_mesh"]
        L += [f"Accuracy on a {am['vertices']}-vertex bar over {am['steps']} steps (relative displacement error):", ""]
        L += markdown_table(
            ["modes", "clusters", "after 1 step", "mean", "last"],
            [
                [r["modes"], r["clusters"], f"{r['first_step']:.3f}", f"{r['mean']:.3f}", f"{r['last']:.3f}"]
                for r in a["by_modes"] + a["by_clusters"]
            ],
        )
        L += ["![accuracy](plots/accuracy.png)", ""]
    if "peers" in s:
        L += peers_report(s["peers"])
    if "table1" in s:
        t = s["table1"]
        L += ["## 4. Table 1: 10 skinning modes against 120 displacement modes", ""]
        L += markdown_table(
            ["vertices", "tets", "skinning [s]", "skinning, CHOLMOD [s]", "displacement [s]", "speed-up"],
            [
                [
                    f"{r['vertices']:,}",
                    f"{r['tets']:,}",
                    f"{r['skinning_s']:.2f}",
                    f"{r['skinning_cholmod_s']:.2f}" if r.get("skinning_cholmod_s") else "—",
                    f"{r['displacement_s']:.1f}" if "displacement_s" in r else "— (--full)",
                    f"{r['ratio']:.1f}×" if "ratio" in r else "—",
                ]
                for r in t["rows"]
            ],
        )
        L += ["The seed's Table 1 (its machine, its C++/MATLAB code):", ""]
        L += markdown_table(
            ["mesh", "vertices", "displacement [s]", "skinning [s]", "speed-up"],
            [[n, f"{v:,}", d, k, f"{d / k:.1f}×"] for n, v, d, k in t["paper"]],
        )
    if "meshing" in s:
        me = s["meshing"]
        L += [
            "## Mesh preparation",
            "",
            f"The demo creature's surface, {me['triangles']:,} triangles in four overlapping parts:",
            "",
        ]
        L += markdown_table(
            ["mesher", "target tets", "tets", "vertices", "seconds", "min dihedral [deg]"],
            [
                [
                    r["method"],
                    f"{r['target_tets']:,}",
                    f"{r['tets']:,}",
                    f"{r['vertices']:,}",
                    f"{r['seconds']:.1f}",
                    f"{r['min_dihedral_deg']:.1f}",
                ]
                if "error" not in r
                else [r["method"], r["target_tets"], r["error"], "", "", ""]
                for r in me["rows"]
            ],
        )
    if "blender" in s:
        b = s["blender"]
        mpf = b["ms_per_frame"]
        L += [
            "## 5. In Blender",
            "",
            f"A {b['vertices']:,}-vertex creature ({int(b['tets']):,} tets, {int(b['modes'])} modes, "
            f"{int(b['clusters'])} clusters, {b['substeps']} sub-steps per frame) over {b['frames']} frames; one-off "
            f"preparation {b['prepare_s']:.1f} s (cached afterwards).  Blender runs headless (the `bpy` module), so "
            "a frame's evaluation has no drawing in it: in a viewport every figure below is a smaller share of a "
            "frame.",
            "",
        ]
        L += markdown_table(
            ["what", "ms per frame", "× frame_set"],
            [
                ["Blender frame_set loop", f"{mpf['frame_set']:.2f}", "1"],
                [
                    "frame_set + read evaluated mesh",
                    f"{mpf['frame_set_read']:.2f}",
                    f"{mpf['frame_set_read'] / mpf['frame_set']:.2f}",
                ],
                ["Bake Secondary Motion (.pc2)", f"{mpf['bake']:.2f}", f"{b['ratios']['bake_over_frame_set']:.2f}"],
                [
                    "live preview, simulating (extra)",
                    f"{mpf['preview_simulating']:.2f}",
                    f"{b['ratios']['preview_simulating_over_frame_set']:.2f}",
                ],
                [
                    "live preview, replaying (extra)",
                    f"{mpf['preview_replay']:.2f}",
                    f"{b['ratios']['preview_replay_over_frame_set']:.2f}",
                ],
                [
                    "Blender Soft Body (its bake)",
                    f"{mpf['soft_body']:.2f}",
                    f"{mpf['soft_body'] / mpf['frame_set']:.2f}",
                ],
            ],
        )
        L += ["![in Blender](plots/in_blender.png)", ""]
    if "characters" in s:
        L += _characters(s["characters"], res.get("plots", []))
    L += _section_lines(s, "report_lines")
    if res.get("plots"):
        L += ["## Plots", ""] + [f"- [{Path(p).stem}]({p})" for p in res["plots"]] + [""]
    if res.get("errors"):
        L += ["## Errors", ""] + [f"- `{k}`: {v}" for k, v in res["errors"].items()] + [""]
    dates = res.get("section_dates", {})
    L += [
        "Section wall times: "
        + ", ".join(
            f"{k} {v:.0f} s" + (f" (run {dates[k]})" if k in dates else "") for k, v in res["section_seconds"].items()
        ),
        "",
    ]
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("\n".join(L))
    tmp.replace(path)


def _characters(c: dict, plots: list[str]) -> list[str]:
    """Section 6: per real character, time to first jiggle and its split, bake cost, plausibility, plots."""
    rows = c["characters"]
    L = [
        "## 6. Real characters with default settings",
        "",
        "Public rigged glTF characters (tests/assets/characters/CREDITS.md), loaded by testkit/real_characters.py: "
        f"each clip is followed by a {c['hold_seconds']:g} s hold on its last pose, and every setting is the "
        "default.  *First jiggle*: from the freshly loaded character with an empty cache folder, Live Preview "
        f"turned on at the first frame, to the first frame stepped to whose offsets exceed {c['jiggle_threshold']:g} "
        "of the body size (headless, the preview prepares in the calling thread).  *Bake*: Bake Secondary "
        "Motion to a .pc2 over the clip and its hold, modes prepared and nothing simulated yet.  Offsets are "
        "baked − rig-only world positions in % of the body diagonal (*size*): the largest over the bake, over "
        f"the first two frames, and from {c['settle_seconds']:g} s after the rig stops.  Times are medians "
        f"(min–max) of {c['repeats']} run(s).",
        "",
    ]
    L += markdown_table(
        [
            "character",
            "size [BU]",
            "vertices",
            "tets",
            "first jiggle [s]",
            "at frame",
            "bake [ms/frame]",
            "frames",
            "max %",
            "first %",
            "settled %",
            "NaN",
            "messages",
        ],
        [
            [
                r["name"],
                f"{r['size']:.3g}",
                f"{r['vertices']:,}",
                f"{r['tets']:,}",
                _s(r["first_jiggle_s"]),
                r["first_jiggle_frame"],
                _ms(r["bake_s_per_frame"]),
                r["frames_baked"],
                f"{r['max_offset_pct']:.3g}",
                f"{r['first_offset_pct']:.2g}",
                f"{r['settled_offset_pct']:.3g}",
                "yes" if r["nan"] else "no",
                len(r["messages"]) + len(r["warnings"]),
            ]
            for r in rows
        ],
    )
    stages = [
        ("meshing", "meshing"),
        ("weights", "volume weights"),
        ("modes", "modes"),
        ("clusters_products", "clusters + products"),
        ("embedding", "embedding"),
        ("preview_setup", "preview set-up"),
        ("first_frames", "first frames"),
    ]
    L += ["Where the time to first jiggle goes (seconds, medians per stage):", ""]
    L += markdown_table(
        ["character", "mesher", *[label for _, label in stages], "total"],
        [
            [
                r["name"],
                r["mesher"],
                *[f"{r['first_jiggle_split_s'][k]:.2f}" for k, _ in stages],
                _s(r["first_jiggle_s"]),
            ]
            for r in rows
        ],
    )
    L += [
        "The stages up to embedding are the prepared character's own timers; *preview set-up* is the rest of "
        "turning the preview on (reading the character from Blender, the slowest frequency, sampling the rig "
        "over the frame range); *first frames* is stepping to the first frame that moves.",
        "",
    ]
    for r in rows:
        plot = f"plots/characters_{r['name']}.png"
        if plot in plots:
            L += [
                f"**{r['name']}**, {r['role']}: vertex {r['tip_vertex']} (of those bound mostly to bone "
                f"{r['tip_bone']}, the farthest from the centre) with and without secondary motion.",
                "",
                f"![{r['name']}]({plot})",
                "",
            ]
    return L


README_BEGIN = "<!-- BEGIN BENCH SUMMARY (written by python3.11 tasks.py bench) -->"
README_END = "<!-- END BENCH SUMMARY -->"


# The README's short table: the summary rows whose figure starts with one of these, in this order (the
# last match of each, i.e. the largest mesh); the full table stays in REPORT.md.
README_ROWS = (
    "step time,",
    "step vs fast-cody, both converged",
    "preparation (raw arrays to a ready simulator) vs fast-cody",
    "time to first jiggle",
    "bake,",
    "live preview",
    "Blender Soft Body",
    "physics skin",
    "locomotion,",
    "RS vs skinning eigenmodes",
    "contact step",
    "real characters plausible",
)


def readme_rows(res: dict) -> list[list[str]]:
    """The few summary rows the README shows (see :data:`README_ROWS`), each [figure, measured, ratio]."""
    rows = summary_rows(res)
    picked = []
    for prefix in README_ROWS:
        matches = [r for r in rows if r[0].startswith(prefix)]
        if matches:
            picked.append(matches[-1])
    return picked


def update_readme(readme: Path, res: dict) -> None:
    """Replace the README's summary block with this run's short table, date, machine and command."""
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        return
    m = res["machine"]
    block = [
        README_BEGIN,
        "",
        # the day only: sections re-run later the same day keep one line true (REPORT.md has the times)
        f"Measured {res['date'][:10]} on {machines_note(res)} ({m.get('cores')} cores, one BLAS thread) by "
        f"`{res['command']}`; wall-clock medians; *paired* ratios come from runs interleaved side by side.",
        "",
        *markdown_table(["figure", "measured", "ratio"], readme_rows(res)),
        f"Where we are behind a peer or a target: {len(behind(res))} items, listed in "
        "[bench/REPORT.md](bench/REPORT.md#where-we-are-behind).",
        "",
        README_END,
    ]
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    tmp = readme.with_suffix(".md.tmp")
    tmp.write_text(head + "\n".join(block) + tail)
    tmp.replace(readme)
