"""Does the flesh jiggle at the Wobble asked? Per-region figures of issue 37 on real characters.

Reads a rig dump (``build/rigs/<name>.npz``, :mod:`testkit.rig_dump`: the core input exactly as the
add-on built it, planted feet included, and the rig of every frame of the clip and its hold), prepares
it with the default settings and simulates it at a Wobble, then reports per region of render vertices:

- soft regions (a torso, a belly, a body, a fleshy head; named per character in :data:`REGIONS` by the
  bones that own them): the response ratio peak / (a / (2 pi f)^2) and the decay frequency after the
  rig stops (``core/validation/flesh_response.py``);
- appendage tips: the peak offset in % of the body diagonal;
- grounded flesh (the planted vertices): the peak offset in %;
- one-bone regions (every bone owning at least :data:`ONE_BONE_VERTICES` render vertices at weight
  :data:`ONE_BONE_WEIGHT` or more): the largest change of their extent along their bone;
- the plausibility limits of the earlier issues (max, first frame, one second after the stop) and the
  reported max against the played one;
- per soft region and tip bone, where the subspace can move it (item 1's diagnosis,
  ``core/validation/region_spectrum.py``): its lowest own natural frequency at the Wobble's stiffness,
  its share of the modes and of the mass.

``tools/flesh.py`` is its command line; ``tests/testkit/test_flesh.py`` holds the issue's limits.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.dynamics.simulator import uses_arap
from core.dynamics.wobble import stiffness_scale
from core.model.planted import body_diagonal, rig_positions
from core.pipeline import FrameSimulation, PreparedCharacter, SolverSettings, prepare_character
from core.pipeline.drives import fiber_scale
from core.subspace.rest_stiffness import rest_hessian
from core.validation.flesh_response import (
    SAG_PERCENTILE,
    accelerations,
    decay_frequency,
    extent_change,
    response_ratio,
)
from core.validation.region_spectrum import RegionSpectrum, mode_energy, natural_modes, region_spectrum
from testkit.rig_dump import character_input

ROOT = Path(__file__).resolve().parent.parent
RIGS = ROOT / "build" / "rigs"

# A one-bone region: the render vertices at this weight or more on one bone, if at least this many.
ONE_BONE_WEIGHT = 0.95
ONE_BONE_VERTICES = 12


@dataclass(frozen=True)
class Regions:
    """The bones owning a character's soft regions and its appendage tips (by dominant weight)."""

    soft: dict[str, tuple[str, ...]]
    tips: tuple[str, ...] = ()


# Per dump: the soft regions are the torso / belly / body (and a head where it is flesh on its own bone);
# the tips are the ends of its tails, ears, wings and flippers.
REGIONS: dict[str, Regions] = {
    "husky": Regions({"torso": ("Body", "Back", "Torso", "Torso2", "Torso3")}, ("Tail6", "Ear4.L", "Ear4.R")),
    "stag": Regions({"torso": ("Body", "Back", "Torso", "Torso2", "Torso3")}, ("Tail3",)),
    "frog": Regions({"body": ("Body", "Torso", "Hips", "Back", "Shoulders"), "head": ("Head",)}),
    "bee": Regions({"body": ("Body",)}, ("Wing2.L", "Wing2.R")),
    "dolphin": Regions({"body": ("Spine1", "Spine2", "Spine3")}, ("Tail", "BottomFlipper.L", "BottomFlipper.R")),
    "platformer": Regions({"body": ("Body", "Hips", "Abdomen", "Torso"), "head": ("Head",)}, ("Ear3.L", "Ear3.R")),
    "creature": Regions({"belly": ("body",)}, ("tail.3",)),
}


@dataclass
class FleshReport:
    """One character at one Wobble (the module doc's figures; offsets in % of the body diagonal)."""

    name: str
    wobble_hz: float
    soft: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # ratio, peak, expect, Hz
    tips: dict[str, float] = field(default_factory=dict)
    grounded: float = 0.0
    extents: dict[str, float] = field(default_factory=dict)  # bone -> largest relative change
    max_pct: float = 0.0
    first_pct: float = 0.0
    settled_pct: float = 0.0
    reported_pct: float = 0.0
    modes: int = 0
    ms_per_frame: float = 0.0
    # Per soft region, per frame: its offset (SAG_PERCENTILE over its vertices) and a / (2 pi f)^2 with a its mean
    # rig acceleration, both in % of the diagonal; the frame the rig stops; fps.
    series: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    stop: int = 0
    fps: float = 24.0
    # Per soft region and tip bone: where the subspace can move it (core/validation/region_spectrum.py).
    spectrum: dict[str, RegionSpectrum] = field(default_factory=dict)

    @property
    def worst_extent(self) -> tuple[str, float]:
        if not self.extents:
            return ("", 0.0)
        bone = max(self.extents, key=lambda b: self.extents[b])
        return bone, self.extents[bone]


def measure(
    name: str, wobble_hz: float = 3.0, rigs: Path = RIGS, cache: Path | None = None, **solver: float
) -> FleshReport:
    """Prepare and simulate dump ``name`` with the defaults at ``wobble_hz`` and read its regions; ``solver``:
    other :class:`core.pipeline.SolverSettings` values (a preset's damping ratio and amount)."""
    d = np.load(rigs / f"{name}.npz")
    inp = character_input(d)
    prep = prepare_character(inp, cache_dir=cache or ROOT / "build" / "flesh_cache")
    P = d["p"]
    start, stop, end, fps = int(d["start"]), int(d["stop"]), int(d["end"]), float(d["fps"])
    settings = SolverSettings(fps=fps, wobble_hz=wobble_hz, **solver)  # type: ignore[arg-type]
    sim = FrameSimulation(prep, settings, start, end, lambda f: P[min(max(f - start, 0), len(P) - 1)])
    t0 = time.perf_counter()
    u = np.array([np.asarray(sim.offsets(f), dtype=np.float64) for f in range(start, end + 1)])
    elapsed = time.perf_counter() - t0
    rig = rig_positions(inp.rest, inp.bone_weights, P)
    diag = body_diagonal(rig[0])
    names = [str(n) for n in d["bone_names"]]
    W = np.asarray(inp.bone_weights, dtype=np.float64)
    W = W / np.maximum(W.sum(axis=1, keepdims=True), 1e-12)
    dominant = W.argmax(axis=1)
    planted = np.zeros(len(W), bool) if inp.planted is None else np.asarray(inp.planted, bool)
    regions = REGIONS[name]
    rep = FleshReport(name=name, wobble_hz=wobble_hz, modes=prep.model.m, ms_per_frame=1e3 * elapsed / len(u))
    pct = 100.0 * np.linalg.norm(u, axis=2) / diag
    after = stop - start
    for region, bones in regions.soft.items():
        mask = np.isin(dominant, [names.index(b) for b in bones]) & ~planted
        ratio, peak, expect = response_ratio(u[:, mask], rig[:, mask], fps, wobble_hz)
        hz = decay_frequency(u[after:, mask], fps)
        rep.soft[region] = (ratio, 100.0 * peak / diag, 100.0 * expect / diag, hz)
        offset = np.percentile(np.linalg.norm(u[:, mask], axis=2), SAG_PERCENTILE, axis=1)
        accel = np.linalg.norm(accelerations(rig[:, mask], fps), axis=2).mean(axis=1)
        rep.series[region] = (100.0 * offset / diag, 100.0 * accel / (2.0 * np.pi * wobble_hz) ** 2 / diag)
    rep.stop, rep.fps = after, fps
    for bone in regions.tips:
        rep.tips[bone] = float(pct[:, dominant == names.index(bone)].max())
    rep.grounded = float(pct[:, planted].max()) if planted.any() else 0.0
    A = np.asarray(P, dtype=np.float64).reshape(len(P), W.shape[1], 3, 4)
    heads, tails = np.asarray(d["bone_heads"]), np.asarray(d["bone_tails"])
    for b, bone in enumerate(names):
        own = (W[:, b] >= ONE_BONE_WEIGHT) & ~planted
        if own.sum() < ONE_BONE_VERTICES or b >= len(heads) or not np.all(np.isfinite(heads[b])):
            continue
        axes = np.einsum("fij,j->fi", A[:, b, :, :3], tails[b] - heads[b])
        rep.extents[bone] = extent_change(rig[:, own] + u[:, own], rig[:, own], axes)
    rep.spectrum = spectra(prep, settings, {**regions.soft, **{b: (b,) for b in regions.tips}}, names)
    rep.max_pct = float(pct.max())
    rep.first_pct = float(pct[:2].max())
    rep.settled_pct = float(pct[after + math.ceil(fps) :].max()) if after + math.ceil(fps) < len(pct) else 0.0
    rep.reported_pct = 100.0 * sim.max_offset * sim.size / diag
    return rep


def spectra(
    prep: PreparedCharacter, solver: SolverSettings, regions: dict[str, tuple[str, ...]], names: list[str]
) -> dict[str, RegionSpectrum]:
    """Each region's :class:`RegionSpectrum` at the Wobble's stiffness as the solver sets it (continuous time:
    kappa = (2 pi f / omega_ref)^2, the fibers at their own scale); a region is the tet vertices whose
    heaviest bone is one of its bones."""
    model, simulation = prep.model, solver.simulation()
    arap = uses_arap(simulation.material, model)
    kappa = stiffness_scale(prep.slowest_frequency(arap), solver.wobble_hz)
    kf = fiber_scale(prep, simulation, solver)
    hz, V = natural_modes(kappa * rest_hessian(model, arap, kf / kappa), model.A_M)
    energy = mode_energy(model.basis(), model.masses, V)
    assert model.rig_weights is not None
    dominant = np.asarray(model.rig_weights).argmax(axis=1)
    out = {}
    for region, bones in regions.items():
        mask = np.isin(dominant, [names.index(b) for b in bones if b in names])
        out[region] = region_spectrum(hz, energy, model.masses, mask)
    return out


def spectrum_markdown(reports: list[FleshReport]) -> str:
    """Item 1's table: per region, its lowest own frequency against the Wobble and its share of the modes."""
    lines = [
        "| character | Wobble | region: lowest own mode Hz (own modes) · share of the modes / of the mass |",
        "|---|---|---|",
    ]
    for r in reports:
        cells = "; ".join(
            f"{k} {'—' if np.isnan(v.lowest_hz) else f'{v.lowest_hz:.2f}'} ({v.own}) · "
            f"{100 * v.share:.1f} % / {100 * v.mass:.1f} %"
            for k, v in r.spectrum.items()
        )
        lines.append(f"| {r.name} | {r.wobble_hz:g} Hz | {cells} |")
    return "\n".join(lines)


def markdown(reports: list[FleshReport]) -> str:
    """The per-character table of issue 37 (the bench's "where it moves" flesh rows)."""
    lines = [
        "| character | Wobble | soft region: ratio to a/(2πf)² (peak %, decay Hz) | tips % | grounded % "
        "| worst one-bone extent | max % (reported) | settled % | modes | ms/frame |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        soft = "; ".join(f"{k} {v[0]:.2f} ({v[1]:.2f} %, {v[3]:.2f} Hz)" for k, v in r.soft.items())
        tips = ", ".join(f"{k} {v:.2f}" for k, v in r.tips.items()) or "—"
        bone, change = r.worst_extent
        lines.append(
            f"| {r.name} | {r.wobble_hz:g} Hz | {soft} | {tips} | {r.grounded:.3f} | {bone} {100 * change:.1f} % "
            f"| {r.max_pct:.2f} ({r.reported_pct:.2f}) | {r.settled_pct:.3f} | {r.modes} | {r.ms_per_frame:.1f} |"
        )
    return "\n".join(lines)


def plot(reports: list[FleshReport], path: Path) -> Path:
    """A picture of the soft regions' offsets per frame against a / (2 pi f)^2, one panel per report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(reports), 1, figsize=(8, 2.6 * len(reports)), squeeze=False)
    for ax, r in zip(axes[:, 0], reports, strict=True):
        for region, (offset, expect) in r.series.items():
            t = np.arange(len(offset)) / r.fps
            line = ax.plot(t, offset, lw=2, label=f"{region}: offset (95th percentile)")[0]
            ax.plot(t, expect, ls="--", color=line.get_color(), alpha=0.6, label=f"{region}: a / (2 pi f)^2")
        ax.axvline(r.stop / r.fps, color="grey", lw=0.8)
        ax.text(r.stop / r.fps, ax.get_ylim()[1] * 0.92, " rig stops", color="grey", fontsize=8)
        ax.set_title(f"{r.name}, Wobble {r.wobble_hz:g} Hz, default settings", fontsize=10)
        ax.set_ylabel("% of the diagonal")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("seconds")
    fig.suptitle("Flesh that jiggles: soft regions answer their rig's acceleration at the Wobble", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
