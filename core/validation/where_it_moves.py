"""Where the secondary motion goes, per region of a character, and why (issue 31).

For a prepared character and a simulated clip this reports, per region of
render vertices (a tail tip, the feet on the ground, the core):

- peak offset: the largest |u| over the region and the clip, in % of the body diagonal;
- leak: the mean momentum-leak value d on the tet vertices under the region
  (0: rig momentum may leak into the flesh, 1: the constraint holds it);
- mode share: the modes' mass in the region, summed over the modes, out of
  the number of modes (a region that no mode reaches has 0; one mode living
  wholly in it gives 1/m);
- stiffness: the region's effective frequency relative to the slowest mode,
  sqrt(lambda_i / lambda_0) weighted by each mode's share in it (the wobble
  frequency calibrates lambda_0: a region at 4x wobbles 4x faster and moves
  about 16x less under the same push);
- swing capture: how much of a small rigid turn of the region about its
  centre of mass the modes can represent (1: all of it, 0: none), the direct
  test of "the constraint forbids the segment's swing".

Everything is numpy over arrays; the regions come from the caller (see
``tools/where_it_moves.py`` for the ones taken from the rig).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..model.planted import grounded


@dataclass(frozen=True)
class RegionReport:
    """One region's figures (see the module doc)."""

    name: str
    vertices: int
    peak_offset_pct: float
    leak: float
    mode_share: float
    stiffness: float
    swing_capture: float


def region_tet_vertices(T: np.ndarray, embedding_tets: np.ndarray, region: np.ndarray) -> np.ndarray:
    """Sorted tet vertices (c,) under a render-vertex region (k,) bool: the corners of the tets holding it."""
    return np.unique(np.asarray(T)[np.asarray(embedding_tets)[np.asarray(region, dtype=bool)]])


def mode_participation(weights: np.ndarray, masses: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """(m,) share of each mode's M-norm on ``vertices``: sum_v m_v W_vi^2 over them / over all."""
    W2 = np.asarray(masses)[:, None] * np.asarray(weights) ** 2
    return W2[vertices].sum(axis=0) / np.maximum(W2.sum(axis=0), 1e-300)


def effective_stiffness(eigenvalues: np.ndarray, participation: np.ndarray) -> float:
    """Participation-weighted sqrt(lambda_i / lambda_0): (m,), (m,) -> float (NaN where no mode reaches)."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    ratio = np.sqrt(np.maximum(lam, 0.0) / max(float(lam[0]), 1e-300))
    total = float(np.sum(participation))
    return float(np.sum(participation * ratio) / total) if total > 1e-12 else float("nan")


def swing_capture(basis: np.ndarray, masses: np.ndarray, X: np.ndarray, vertices: np.ndarray) -> float:
    """Share (0..1) of a small rigid turn of ``vertices`` about their centre the subspace represents.

    basis: (n, 4m) scalar skinning basis (``ReducedModel.basis()``); X: (n, 3) rest
    positions.  The turn is linearised (u = a x (X - c) on the region, 0 elsewhere)
    about each axis; the result is 1 - the M-norm of the least-squares residual over
    that of the turn, averaged over the three axes.
    """
    M = np.asarray(masses)
    G = basis.T @ (M[:, None] * basis)
    G = 0.5 * (G + G.T) + 1e-12 * np.trace(G) / len(G) * np.eye(len(G))
    c = np.average(X[vertices], axis=0, weights=M[vertices])
    out = []
    for axis in np.eye(3):
        u = np.zeros_like(X)
        u[vertices] = np.cross(axis, X[vertices] - c)
        Z = sla.solve(G, basis.T @ (M[:, None] * u), assume_a="pos")
        r = u - basis @ Z
        out.append(1.0 - np.sqrt((M[:, None] * r * r).sum() / max((M[:, None] * u * u).sum(), 1e-300)))
    return float(np.mean(out))


def region_reports(
    prepared: object, offsets: np.ndarray, diagonal: float, regions: dict[str, np.ndarray]
) -> list[RegionReport]:
    """A :class:`RegionReport` per region.

    prepared: a :class:`core.pipeline.PreparedCharacter`; offsets: (f, k, 3) world
    offsets of the render vertices over the clip; regions: name -> (k,) bool.
    """
    model = prepared.model  # type: ignore[attr-defined]
    T, tets = prepared.mesh.T, prepared.embedding.tet  # type: ignore[attr-defined]
    pct = 100.0 * np.linalg.norm(offsets, axis=2) / diagonal
    Y = model.basis()
    out = []
    for name, region in regions.items():
        region = np.asarray(region, dtype=bool)
        if not region.any():
            continue
        v = region_tet_vertices(T, tets, region)
        part = mode_participation(model.weights, model.masses, v)
        out.append(
            RegionReport(
                name=name,
                vertices=int(region.sum()),
                peak_offset_pct=float(pct[:, region].max()),
                leak=float(model.leak[v].mean()),
                mode_share=float(part.sum() / model.m),
                stiffness=effective_stiffness(model.eigenvalues, part),
                swing_capture=swing_capture(Y, model.masses, model.X, v),
            )
        )
    return out


def grounded_offset_pct(offsets: np.ndarray, positions: np.ndarray, diagonal: float) -> float:
    """Largest offset (% of the diagonal) of a vertex at a frame where the rig has it on the ground.

    offsets, positions: (f, k, 3) secondary offsets and rig-only world positions.
    """
    on = grounded(positions, diagonal)
    pct = 100.0 * np.linalg.norm(offsets, axis=2) / diagonal
    return float(pct[on].max()) if on.any() else 0.0


def markdown(rows: list[tuple[str, str, list[RegionReport]]]) -> str:
    """A Markdown table of (character, variant, reports) rows."""
    lines = [
        "| character | variant | region | vertices | peak offset % | leak d | mode share | stiffness (x slowest) "
        "| swing capture |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for character, variant, reports in rows:
        for r in reports:
            lines.append(
                f"| {character} | {variant} | {r.name} | {r.vertices} | {r.peak_offset_pct:.3f} | {r.leak:.2f} "
                f"| {r.mode_share:.3f} | {r.stiffness:.2f} | {r.swing_capture:.2f} |"
            )
    return "\n".join(lines)
