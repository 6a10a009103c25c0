"""Preparing a skinned character for the frame loop: the settings it is prepared with, and the stages.

The add-on reads a character out of Blender into a :class:`CharacterInput`
(render-mesh rest surface, painted bone weights, optional painted masks).
:func:`prepare_character`

1. tetrahedralises the rest surface (cached by a hash of its inputs, :mod:`core.io.tet_cache`),
2. extends the bone weights and the painted masks into the volume,
3. finds what the modes vanish on (planted feet, rigid parts) and the leak field,
4. builds (or loads) the reduced model: modes, clusters and products, and
5. embeds the render vertices so the modes can be evaluated on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..contact.colliders import Ground
from ..contact.scene import ColliderTrack, Obstacles
from ..dynamics.reconstruct import Reconstructor
from ..dynamics.simulator import FILM_FPS, SimulationSettings
from ..dynamics.wobble import natural_frequencies
from ..errors import RigError, SkinmodesError
from ..geometry.embedding import Embedding, embed_points, embedded_positions, interpolate
from ..geometry.tetmesh import TetMesh
from ..geometry.tetrahedralize import TetResult
from ..io.cache_names import model_cache_file
from ..io.model_cache import input_hash, load_or_build
from ..io.tet_cache import cached_tet_mesh
from ..model.fem import lumped_mass
from ..model.fibers import Fibers, tet_fibers
from ..model.interior_weights import volume_bone_weights
from ..model.leak import (
    appendage_bones,
    appendage_chains,
    automatic_mask,
    default_leak_field,
    leak_from_mask,
    planted_chain_bones,
    surface_depth,
)
from ..model.materials import Material, scaled_field
from ..model.parts import Parts, body_parts
from ..model.planted import leg_tet_vertices, planted_tet_vertices
from ..model.rig import LBSRig
from ..model.rigid import held_pieces
from ..physskin.rig import PhysicsRig
from ..posespace.model import PoseSpaceModel
from ..posespace.points import PosePoints
from ..settings import core_default
from ..subspace.reduced import ReducedModel


@dataclass
class PoseSpaceCharacter:
    """A prepared character's pose-space model (Xu & Barbič) with its render vertices and guard probes.

    frames: the frames the training poses were taken at (pose 0, the rest, has none: -1);
    contacts: the number of tet vertices held still in each pose.
    """

    model: PoseSpaceModel
    render: PosePoints
    probes: PosePoints
    frames: tuple[int, ...]
    contacts: tuple[int, ...]
    seconds: float = 0.0


@dataclass(frozen=True)
class CharacterInput:
    """A skinned character at rest, in object space (metres).

    rest: (k, 3) render-mesh vertices; faces: (f, 3) triangles; bone_weights:
    (k, b) painted weights (rows are normalised here, as Blender's Armature
    modifier does); stiffness, density: optional (k,) painted masks in [0, 1];
    leak: optional (k,) painted momentum-leak mask, 1 = the flesh swings freely,
    0 = it follows the rig.  bone_heads, bone_tails: optional (b, 3) rest-pose
    bone segments in the same frame as ``rest`` (NaN rows for a weight column
    without a bone); the physics skin pins the flesh around them.
    planted: optional (k,) bool, render vertices the rig puts on the ground
    (:func:`core.model.planted.planted_vertices`): every mode vanishes there.
    bone_parents: optional (b,) parent weight column of each column, -1 at a root;
    with it, thin chains the rig does not plant swing from their base
    (:func:`core.model.leak.appendage_bones`).
    rigid: optional (k,) painted Rigid Group weights in [0, 1] (Rigid Pieces "group": the vertices at 0.5 or
    more follow their bone exactly, :func:`core.model.rigid.held_pieces`).
    """

    rest: np.ndarray
    faces: np.ndarray
    bone_weights: np.ndarray
    stiffness: np.ndarray | None = None
    density: np.ndarray | None = None
    leak: np.ndarray | None = None
    bone_heads: np.ndarray | None = None
    bone_tails: np.ndarray | None = None
    planted: np.ndarray | None = None
    bone_parents: np.ndarray | None = None
    rigid: np.ndarray | None = None


@dataclass(frozen=True)
class SubspaceSettings:
    """What shapes the tet mesh and the subspace; field names are those of core/settings.py."""

    modes: int = int(core_default("modes"))
    clusters: int = int(core_default("clusters"))
    target_tets: int = int(core_default("target_tets"))
    tet_method: str = str(core_default("tet_method"))
    loose_parts: str = str(core_default("loose_parts"))
    swing_appendages: bool = bool(core_default("swing_appendages"))
    seed: int = 0
    # Which loose pieces bound to one bone follow it exactly (core.model.rigid.held_pieces).
    rigid_pieces: str = str(core_default("rigid_pieces"))
    # Every part of the body answers the rig at the Wobble (core/subspace/flesh_model.py, issue 37); False
    # builds the seed's model, whose Wobble is its slowest mode's.
    flesh: bool = True


@dataclass(frozen=True)
class MaterialSettings:
    """Base material, and how far painted stiffness/density masks (0..1) scale it."""

    youngs_modulus: float = float(core_default("youngs_modulus"))
    poisson_ratio: float = float(core_default("poisson_ratio"))
    density: float = float(core_default("density"))
    stiffness_range: tuple[float, float] = (0.1, 1.0)
    density_range: tuple[float, float] = (0.5, 1.5)


@dataclass(frozen=True)
class SolverSettings:
    """How a character is simulated per frame (none of it needs new modes).

    Fields named after a user setting take their defaults from core/settings.py
    and are filled from it by name (:func:`core.settings.core_values`).

    stiffness_mode: "frequency" (scale-free: the slowest secondary motion wobbles
    at ``wobble_hz``, whatever the character's size and the material's
    pascals) or "physical" (``youngs_modulus`` (Pa) and ``density`` (kg/m^3)
    in SI units; the modes were built with the character's MaterialSettings,
    and only the ratio of the two matters to the motion, so these scale it).
    damping_ratio: of the slowest motion (0 rings on, 1 is critically damped).
    rest_state: "pose" settles on the animated pose, "rest" relaxes towards the elastic rest shape (see the simulator).
    preroll: frames simulated before the start and discarded, so a shot that
    starts mid-motion starts with its flesh already in motion.
    reset_at_cuts: at a rig discontinuity (see JUMP_WARNING) restart the
    simulation at rest on the new pose instead of flinging the flesh.
    ground, ground_height (world Z, scene units: times ``world_unit`` in metres),
    colliders (a collection's name), contact_friction, collider_tracks: what
    the surface touches (issue 29, :mod:`core.contact`); off by default.
    """

    # User settings default as core/settings.py defines them; the rest as the solver's own settings.
    fps: float = FILM_FPS
    substeps: int = int(core_default("substeps"))
    iterations: int = SimulationSettings.max_iterations
    tolerance: float = SimulationSettings.tolerance
    stiffness_mode: str = str(core_default("stiffness_mode"))
    wobble_hz: float = float(core_default("wobble_hz"))
    damping_ratio: float = float(core_default("damping_ratio"))
    youngs_modulus: float = float(core_default("youngs_modulus"))
    density: float = float(core_default("density"))
    rest_state: str = SimulationSettings.rest_state
    material_model: str = SimulationSettings.material
    preroll: int = int(core_default("preroll"))
    reset_at_cuts: bool = bool(core_default("reset_at_cuts"))
    physics_skin: bool = bool(core_default("physics_skin"))
    secondary_motion: bool = bool(core_default("secondary_motion"))
    pin_depth: float = float(core_default("pin_depth"))
    pin_rigid: bool = bool(core_default("pin_rigid"))
    physics_gravity: bool = bool(core_default("physics_gravity"))
    physics_skin_from: str = str(core_default("physics_skin_from"))
    amount: float = float(core_default("amount"))
    ground: bool = bool(core_default("ground"))
    ground_height: float = float(core_default("ground_height"))
    colliders: str = str(core_default("colliders"))
    contact_friction: float = float(core_default("contact_friction"))
    self_contact: bool = bool(core_default("self_contact"))
    # The colliders' meshes over the shot, in the simulation's space (read per frame by the add-on), and
    # metres per scene unit; not settings: data, never compared (staleness compares the collection's name).
    collider_tracks: tuple[ColliderTrack, ...] = field(default=(), compare=False, repr=False)
    world_unit: float = field(default=1.0, compare=False, repr=False)

    def obstacles(self) -> Obstacles:
        """The ground (when on) and the colliders the surface touches, in the simulation's space (metres)."""
        ground = Ground(height=self.world_unit * self.ground_height) if self.ground else None
        return Obstacles(ground, self.collider_tracks)

    def simulation(self) -> SimulationSettings:
        """The solver's settings; the stiffness scale and damping are set per frame by FrameSimulation."""
        return SimulationSettings(
            time_step=1.0 / (self.fps * self.substeps),
            max_iterations=self.iterations,
            tolerance=self.tolerance,
            material=self.material_model,
            rest_state=self.rest_state,
        )


@dataclass
class PreparedCharacter:
    """Everything needed to simulate a character; built once per mesh/rig/settings."""

    tets: TetResult
    mesh: TetMesh
    tet_bone_weights: np.ndarray
    material: Material
    leak: np.ndarray
    model: ReducedModel
    embedding: Embedding
    reconstructor: Reconstructor
    key: str
    stats: dict[str, float] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    base: MaterialSettings = MaterialSettings()
    segments: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)  # bone heads, tails (b, 3)
    keep: np.ndarray | None = field(default=None, repr=False)  # (k,) False for render vertices not simulated
    render_points: np.ndarray | None = field(default=None, repr=False)  # (k, 3) where render vertices are evaluated
    posespace: PoseSpaceCharacter | None = field(default=None, repr=False)  # training poses' modes, if any
    leak_mask: np.ndarray | None = field(default=None, repr=False)  # (n,) the mask f the leak came from
    # The material before the flesh calibration (core/subspace/flesh_model.py): the physics skin's.
    skin_material: Material | None = field(default=None, repr=False)
    _omega0: dict[bool, float] = field(default_factory=dict, repr=False)
    _physics: dict[tuple[float, bool, bool], PhysicsRig] = field(default_factory=dict, repr=False)

    def slowest_frequency(self, arap: bool) -> float:
        """The frequency (rad/s, stiffness as built) the Wobble setting is mapped to, for ARAP or co-rotational;
        computed once.

        A flesh-calibrated model's is its parts' common frequency (``ReducedModel.reference_frequency``: each
        part then sags a / (2 pi f)^2 under an acceleration a at Wobble f), found for the material model the
        calibration used (ARAP where the Poisson ratio is 0) and carried to the other one by the ratio of
        the two slowest frequencies.  The seed's model's is its slowest mode's.
        """
        if arap not in self._omega0:
            slowest = float(natural_frequencies(self.model, arap)[0])
            ref = self.model.reference_frequency()
            if ref is not None:
                built = not bool(np.any(self.model.cluster_lam > 0))
                ref *= 1.0 if built == arap else slowest / float(natural_frequencies(self.model, built)[0])
            self._omega0[arap] = slowest if ref is None else ref
        return self._omega0[arap]

    def physics_rig(self, pin_depth: float, pin_rigid: bool = True, from_bones: bool = False) -> PhysicsRig:
        """The character's physics skin (Song et al.), built once per choice (pins; weights or bones only).

        Bones without a segment (a character read without its armature's bones)
        pin only their heaviest vertex each: the solve still runs, on fewer pins.
        """
        key = (pin_depth, pin_rigid, from_bones)
        if key not in self._physics:
            b = self.tet_bone_weights.shape[1]
            heads, tails = self.segments if self.segments is not None else (np.full((b, 3), np.nan),) * 2
            if heads.shape != (b, 3) or tails.shape != (b, 3):
                raise RigError(f"bone segments must have shape ({b}, 3), one per weight column, got {heads.shape}")
            self._physics.clear()  # one at a time: each holds a factorisation
            # The material as given, not the jiggle's calibration: the physics skin is the rig's own elastic
            # shape, which the Wobble does not soften (calibrated, its ground let a soft part sink 1.5 %).
            m, W = self.skin_material or self.material, self.tet_bone_weights
            if from_bones and not np.isfinite(heads).all(axis=1).any():
                raise RigError("Physics Skin From Bones Only needs the armature's bones; none were read")
            self._physics[key] = (
                PhysicsRig.from_bones(self.mesh, W, heads, tails, m.mu, m.lam)
                if from_bones
                else PhysicsRig.build(self.mesh, W, heads, tails, m.mu, m.lam, pin_depth, pin_rigid=pin_rigid)
            )
        return self._physics[key]


def _extend_mask(X: np.ndarray, T: np.ndarray, inp: CharacterInput, mask: np.ndarray | None) -> np.ndarray | None:
    """A painted surface mask (k,) extended harmonically into the volume: (n,) in [0, 1]."""
    if mask is None:
        return None
    m = np.clip(np.asarray(mask, dtype=np.float64), 0.0, 1.0)
    # Two complementary channels form a partition of unity, which is what the
    # bone-weight extension preserves; the first channel is the mask.
    return volume_bone_weights(X, T, inp.rest, inp.faces, np.stack([m, 1.0 - m], axis=1))[:, 0]


def character_key(inp: CharacterInput, subspace: SubspaceSettings, material: MaterialSettings) -> str:
    """Hash of everything that shapes the prepared character (not the solver settings)."""
    return input_hash(
        "skinmodes-character-1",
        inp.rest,
        inp.faces,
        inp.bone_weights,
        inp.stiffness,
        inp.density,
        inp.leak,
        None if inp.planted is None else np.asarray(inp.planted, dtype=bool),
        None if inp.bone_parents is None else np.asarray(inp.bone_parents, dtype=np.int64),
        inp.rigid if subspace.rigid_pieces == "group" else None,
        str(sorted(asdict(subspace).items())),
        str(sorted(asdict(material).items())),
    )


class Cancelled(SkinmodesError):
    """:func:`prepare_character` stopped between stages because its caller asked it to."""


def _held_corners(T: np.ndarray, emb: Embedding, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(inside (k,) bool, the sorted corners of their tets or None): the flagged render vertices to hold.

    T: (t, 4) tets; emb: the render vertices' embedding; flags: (k,) bool.  A
    render vertex outside the volume (a loose vertex beyond a tail tip) was
    moved onto its nearest tet; holding that tet would hold flesh the vertex
    does not lie in, so it is left out.
    """
    inside = np.asarray(flags, dtype=bool) & ~emb.outside
    return inside, (planted_tet_vertices(T, emb.tet, inside) if inside.any() else None)


def prepare_character(
    inp: CharacterInput,
    subspace: SubspaceSettings = SubspaceSettings(),
    material: MaterialSettings = MaterialSettings(),
    cache_dir: str | Path | None = None,
    tets: tuple[np.ndarray, np.ndarray] | None = None,
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> PreparedCharacter:
    """Tet mesh, volume weights, material, leak field, reduced model and render embedding.

    cache_dir: where tet meshes and reduced models are cached (None: no cache).
    tets: an explicit (X, T) tet mesh instead of tetrahedralising (tests, benchmarks).
    progress: called with (stage, fraction of the work done before it) as each stage starts; the
    fractions are typical shares of the time on real characters (the modes take three quarters).
    cancelled: asked before each stage; when it returns True, :class:`Cancelled` is raised
    (a stage that has started runs to its end: a worker thread cannot be interrupted).
    """
    stage = _stages(progress, cancelled)
    stats: dict[str, float] = {}
    log: list[str] = []
    cache = None if cache_dir is None else Path(cache_dir)
    rest, W = _checked_weights(inp)
    stage("meshing", 0.0)
    tet = _tet_mesh(inp, subspace, cache, tets, log, stats)
    mesh = TetMesh.from_arrays(tet.X, tet.T)
    stage("volume weights", 0.15)
    vol = _volume(inp, mesh, rest, W, material, stats)
    held = _held(inp, mesh, rest, W, subspace, stats, vol.weights)
    mask, extra, chains = _leak_mask(inp, mesh, rest, W, vol.weights, held, subspace, vol.leak_mask)
    parts = _parts(inp, mesh, vol) if subspace.flesh else None
    d0 = default_leak_field(mesh)
    d = d0 if mask is None else leak_from_mask(d0, mask)
    key = character_key(inp, subspace, material)
    stage("modes and clusters", 0.22)
    t0 = time.perf_counter()
    model = load_or_build(
        None if cache is None else model_cache_file(cache, key),
        mesh,
        vol.material,
        LBSRig.from_weights(vol.weights),
        subspace.modes,
        subspace.clusters,
        leak=d,
        seed=subspace.seed,
        log=log,
        held=held.hold,
        extra_weights=extra,
        extra_groups=chains,
        parts=parts,
        fibers=None if parts is None else _fibers(inp, mesh, vol, parts),
    )
    stats["subspace_s"] = time.perf_counter() - t0
    # The model's stiffness is the material's, softened where appendages swing (swing_softening).
    mat = replace(vol.material, mu=model.mu, lam=model.lam)
    stage("embedding", 0.95)
    t0 = time.perf_counter()
    render = _render(mesh, rest, tet, model, held.embedding, log)
    stats["embedding_s"] = time.perf_counter() - t0
    # The clusters the Clusters setting asked for; the fiber clusters (each split by bone, core/model/fibers.py) apart.
    fiber_clusters = 0 if model.fiber is None else int(np.count_nonzero(model.fiber))
    stats.update(
        vertices=float(mesh.n),
        tets=float(mesh.t),
        modes=float(model.m),
        clusters=float(model.r - fiber_clusters),
        fiber_clusters=float(fiber_clusters),
    )
    stage("done", 1.0)
    return PreparedCharacter(
        tets=tet,
        mesh=mesh,
        tet_bone_weights=vol.weights,
        material=mat,
        skin_material=vol.material,
        leak=d,
        model=model,
        embedding=render.embedding,
        reconstructor=render.reconstructor,
        key=key,
        stats=stats,
        messages=log,
        base=material,
        segments=_segments(inp),
        keep=render.keep,
        render_points=render.points,
        leak_mask=mask,
    )


def _parts(inp: CharacterInput, mesh: TetMesh, vol: _Volume) -> Parts:
    """The body's parts for the flesh calibration (:func:`core.model.parts.body_parts`)."""
    masses = lumped_mass(mesh, vol.material.density)
    return body_parts(vol.weights, masses, surface_depth(mesh), inp.bone_parents, bones=_bone_columns(inp))


def _fibers(inp: CharacterInput, mesh: TetMesh, vol: _Volume, parts: Parts) -> Fibers | None:
    """The tets' fibers along their bones (:func:`core.model.fibers.tet_fibers`); None without bone segments, or
    for a body of one part (a prop on one bone: its bone's direction says nothing of its flesh, and fibers
    there made it jiggle unlike the same mesh moved by its object)."""
    if inp.bone_heads is None or inp.bone_tails is None or parts.count < 2:
        return None
    return tet_fibers(mesh.T, vol.weights, np.asarray(inp.bone_heads), np.asarray(inp.bone_tails))


def _stages(
    progress: Callable[[str, float], None] | None, cancelled: Callable[[], bool] | None
) -> Callable[[str, float], None]:
    """What prepare_character calls as each stage starts: raise :class:`Cancelled` if asked, then report progress."""

    def stage(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("computing modes was cancelled; nothing was changed")
        if progress is not None:
            progress(name, fraction)

    return stage


def _tet_mesh(
    inp: CharacterInput,
    subspace: SubspaceSettings,
    cache: Path | None,
    tets: tuple[np.ndarray, np.ndarray] | None,
    log: list[str],
    stats: dict[str, float],
) -> TetResult:
    """The tet mesh (timed): the given (X, T), or the rest surface tetrahedralised through the cache."""
    t0 = time.perf_counter()
    if tets is None:
        tet = cached_tet_mesh(
            inp.rest, inp.faces, subspace.target_tets, subspace.tet_method, subspace.loose_parts, cache, log
        )
    else:
        tet = TetResult.from_arrays(*tets, method="given")
    log.extend(tet.messages)
    stats["tetrahedralize_s"] = time.perf_counter() - t0
    return tet


def _checked_weights(inp: CharacterInput) -> tuple[np.ndarray, np.ndarray]:
    """(rest (k, 3), bone weights (k, b)) as float64, or a :class:`RigError` when they do not fit."""
    rest = np.asarray(inp.rest, dtype=np.float64)
    W = np.asarray(inp.bone_weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != len(rest):
        raise RigError(f"bone weights must have one row per vertex ({len(rest)}), got shape {W.shape}")
    return rest, W


@dataclass
class _Volume:
    """The painted surface extended into the volume: bone weights (n, b), the material, the leak mask (n,) or None."""

    weights: np.ndarray
    material: Material
    leak_mask: np.ndarray | None


def _volume(
    inp: CharacterInput,
    mesh: TetMesh,
    rest: np.ndarray,
    W: np.ndarray,
    material: MaterialSettings,
    stats: dict[str, float],
) -> _Volume:
    """Bone weights and painted masks extended into the volume (timed), and the material they scale."""
    t0 = time.perf_counter()
    tet_w = volume_bone_weights(mesh.X, mesh.T, rest, inp.faces, W)
    stiff = _extend_mask(mesh.X, mesh.T, inp, inp.stiffness)
    dens = _extend_mask(mesh.X, mesh.T, inp, inp.density)
    free = _extend_mask(mesh.X, mesh.T, inp, inp.leak)
    stats["volume_weights_s"] = time.perf_counter() - t0
    E = scaled_field(mesh.T, material.youngs_modulus, stiff, *material.stiffness_range)
    rho = scaled_field(mesh.T, material.density, dens, *material.density_range)
    return _Volume(tet_w, Material.from_fields(E, np.full(mesh.t, material.poisson_ratio), rho), free)


@dataclass
class _Held:
    """What the modes vanish on: planted feet and rigid parts (issue 23).

    embedding: the render vertices' embedding if it was needed to find them (else None);
    planted: (k,) render vertices planted inside the volume; feet: their tets' corners;
    hold: the corners of the planted and the rigid tets together (None: nothing held).
    """

    embedding: Embedding | None = None
    planted: np.ndarray | None = None
    feet: np.ndarray | None = None
    hold: np.ndarray | None = None


def _held(
    inp: CharacterInput,
    mesh: TetMesh,
    rest: np.ndarray,
    W: np.ndarray,
    subspace: SubspaceSettings,
    stats: dict[str, float],
    tet_weights: np.ndarray,
) -> _Held:
    """Planted feet, and rigid parts (a loose piece bound to one bone follows it): both hold the
    corners of their tets still (found before the modes, which vanish there)."""
    if inp.planted is not None and np.shape(inp.planted) != (len(rest),):
        raise RigError(f"planted vertices need one flag per vertex ({len(rest)}), got shape {np.shape(inp.planted)}")
    out = _Held()
    rigid = held_pieces(rest, inp.faces, W, subspace.rigid_pieces, inp.rigid)
    if (inp.planted is not None and np.any(inp.planted)) or (rigid is not None and rigid.any()):
        out.embedding = embed_points(mesh.X, mesh.T, rest)
    if inp.planted is not None and np.any(inp.planted):
        assert out.embedding is not None
        out.planted, out.feet = _held_corners(mesh.T, out.embedding, inp.planted)
        if out.feet is not None and subspace.flesh:
            depth = surface_depth(mesh)
            bones = _bone_columns(inp)
            legs = leg_tet_vertices(tet_weights, mesh.X, depth, inp.bone_parents, W, rest, out.planted, bones)
            out.feet = np.union1d(out.feet, legs)
        if out.feet is not None:
            stats["planted_vertices"] = float(len(out.feet))
    out.hold = out.feet
    if rigid is not None and rigid.any():
        assert out.embedding is not None
        _, still = _held_corners(mesh.T, out.embedding, rigid)
        if still is not None:
            stats["rigid_vertices"] = float(len(still))
            out.hold = still if out.feet is None else np.union1d(out.feet, still)
    return out


def _leak_mask(
    inp: CharacterInput,
    mesh: TetMesh,
    rest: np.ndarray,
    W: np.ndarray,
    tet_w: np.ndarray,
    held: _Held,
    subspace: SubspaceSettings,
    painted: np.ndarray | None,
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(the leak mask f (n,) or None, the appendage chains' extra weights (n, c) and groups (c,), or None).

    The momentum-leak field comes from a mask f (0 follows the rig, 0.5 the depth field, 1 swings
    the whole depth): the painted one replaces the automatic one, which frees appendages.
    """
    mask = painted
    if inp.bone_parents is None or not subspace.swing_appendages:
        return mask, None, None
    parents = np.asarray(inp.bone_parents, dtype=np.int64)
    if parents.shape != (W.shape[1],):
        raise RigError(f"bone parents need one entry per weight column ({W.shape[1]}), got {parents.shape}")
    feet = None if held.feet is None else np.unique(W[held.planted].argmax(axis=1))
    grounded = None if feet is None else np.isin(np.arange(W.shape[1]), feet)
    appendage = appendage_bones(tet_w, parents, surface_depth(mesh), grounded, mesh.X, held.feet)
    if mask is None:
        mask = automatic_mask(tet_w, appendage)
    # Candidates for the subspace: an appendage chain that no eigenmode reaches (the stag's tail,
    # a few tets long) gets its bones' own weights, swinging at the wobble (build_reduced_model).
    # Only bones with flesh of their own in the volume (not an IK pole, nor a foot left out of
    # it), and no chain the rig plants: the modes vanish there on purpose.
    owns = np.bincount(tet_w.argmax(axis=1), minlength=W.shape[1]) > 0
    root = appendage_chains(parents, appendage & owns)
    if inp.planted is not None and np.any(inp.planted):  # all of them: the robot's feet lie outside
        legs = planted_chain_bones(tet_w, mesh.X, rest[np.asarray(inp.planted, dtype=bool)])
        root[np.isin(root, root[legs])] = -1
    if (root >= 0).any():
        return mask, tet_w[:, root >= 0], root[root >= 0]
    return mask, None, None


@dataclass
class _Render:
    """The render vertices in the volume: embedding, reconstruction, keep (k,) or None, evaluation points (k, 3)."""

    embedding: Embedding
    reconstructor: Reconstructor
    keep: np.ndarray | None
    points: np.ndarray


def _render(
    mesh: TetMesh, rest: np.ndarray, tet: TetResult, model: ReducedModel, emb: Embedding | None, log: list[str]
) -> _Render:
    """Embed the render vertices rest (k, 3) (reusing ``emb`` if found already) and build their reconstruction."""
    emb = embed_points(mesh.X, mesh.T, rest) if emb is None else emb
    render_w = interpolate(emb, mesh.T, model.weights)
    keep = None
    if tet.skipped_vertices is not None and len(tet.skipped_vertices) == len(rest):
        render_w[tet.skipped_vertices] = 0.0  # skipped loose parts follow the rig only
        outside = emb.outside & ~tet.skipped_vertices
        keep = ~tet.skipped_vertices
    else:
        outside = emb.outside
    if outside.any():
        log.append(
            f"{int(outside.sum())} render vertices lay outside the simulated volume (up to "
            f"{float(emb.distance[outside].max()):.3g} m) and were moved onto it for the jiggle"
        )
    # float32: the render positions it adds to are float32 in Blender and in .pc2 files.
    # Evaluated where each vertex is embedded: a vertex outside the volume is
    # projected onto it, so the affine modes are never extrapolated to it.
    where = embedded_positions(emb, mesh.X, mesh.T, rest)
    return _Render(emb, Reconstructor(model, render_w, where, dtype=np.float32), keep, where)


def _bone_columns(inp: CharacterInput) -> np.ndarray | None:
    """(b,) bool: the weight columns that are bones (a finite head), None when no segments were read."""
    return None if inp.bone_heads is None else np.isfinite(np.asarray(inp.bone_heads)).all(axis=1)


def _segments(inp: CharacterInput) -> tuple[np.ndarray, np.ndarray] | None:
    if inp.bone_heads is None or inp.bone_tails is None:
        return None
    return np.asarray(inp.bone_heads, dtype=np.float64), np.asarray(inp.bone_tails, dtype=np.float64)


def physical_scale(prepared: PreparedCharacter, solver: SolverSettings) -> float:
    """kappa for the solver's physical material on a model built with ``prepared.base``.

    The motion depends on stiffness over density only (the rig's inertial
    force scales with the mass too), so kappa = (E / E_base) (rho_base / rho).
    """
    base = prepared.base
    return (solver.youngs_modulus / base.youngs_modulus) * (base.density / solver.density)
