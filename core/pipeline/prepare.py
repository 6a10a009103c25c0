"""From a skinned character to secondary motion per frame: the product's data flow, without bpy.

The add-on reads a character out of Blender into a :class:`CharacterInput`
(render-mesh rest surface, painted bone weights, optional painted masks) and
a rig trajectory (one world transform per bone per frame).  This module

1. tetrahedralises the rest surface (cached by a hash of its inputs),
2. extends the bone weights and the painted masks into the volume,
3. builds (or loads) the reduced model: modes, clusters and products,
4. embeds the render vertices so the modes can be evaluated on them, and
5. simulates frames with sub-steps, keeping one small state per frame so any
   frame can be shown by simulating forward from the nearest cached one.

The bake, the live preview and the CLI all go through :class:`FrameSimulation`,
which is why they agree frame for frame.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from .dynamics.reconstruct import Reconstructor
from .dynamics.simulator import FILM_FPS, SimState, SimulationSettings, Simulator, StepReport
from .dynamics.wobble import implicit_euler_controls, natural_frequencies
from .errors import RigError, SimulationError, SkinmodesError
from .geometry.embedding import Embedding, embed_points, embedded_positions, interpolate
from .geometry.tetmesh import TetMesh, boundary_faces
from .geometry.tetrahedralize import TetResult, tetrahedralize
from .io.atomic import remove_stale_partials, save_npz_atomic
from .io.model_cache import input_hash, load_or_build
from .model.interior_weights import volume_bone_weights
from .model.leak import (
    appendage_bones,
    appendage_chains,
    automatic_mask,
    default_leak_field,
    leak_from_mask,
    planted_chain_bones,
    surface_depth,
)
from .model.materials import Material, scaled_field
from .model.planted import planted_tet_vertices
from .model.rig import LBSRig, lbs_basis
from .model.rigid import rigid_pieces
from .physskin.rig import PhysicsRig, render_correction
from .posespace.model import PoseSpaceModel, build_pose_space, detect_contacts, rest_pose
from .posespace.points import PosePoints
from .posespace.rbf import pose_features
from .posespace.simulator import PoseSpaceSimulator, PoseSpaceState
from .settings import core_default
from .subspace.reduced import ReducedModel, rig_matrix


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
    # Loose pieces bound to one bone follow it (core.model.rigid); False gives them secondary motion.
    rigid_parts: bool = True


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
    amount: float = float(core_default("amount"))

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
    _omega0: dict[bool, float] = field(default_factory=dict, repr=False)
    _physics: dict[float, PhysicsRig] = field(default_factory=dict, repr=False)

    def slowest_frequency(self, arap: bool) -> float:
        """The model's slowest angular frequency (rad/s) as built, for ARAP or co-rotational; computed once."""
        if arap not in self._omega0:
            self._omega0[arap] = float(natural_frequencies(self.model, arap)[0])
        return self._omega0[arap]

    def physics_rig(self, pin_depth: float) -> PhysicsRig:
        """The character's physics skin (Song et al.), built once per pin depth.

        Bones without a segment (a character read without its armature's bones)
        pin only their heaviest vertex each: the solve still runs, on fewer pins.
        """
        if pin_depth not in self._physics:
            b = self.tet_bone_weights.shape[1]
            heads, tails = self.segments if self.segments is not None else (np.full((b, 3), np.nan),) * 2
            if heads.shape != (b, 3) or tails.shape != (b, 3):
                raise RigError(f"bone segments must have shape ({b}, 3), one per weight column, got {heads.shape}")
            self._physics.clear()  # one at a time: each holds a factorisation
            self._physics[pin_depth] = PhysicsRig.build(
                self.mesh, self.tet_bone_weights, heads, tails, self.material.mu, self.material.lam, pin_depth
            )
        return self._physics[pin_depth]


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
        str(sorted(asdict(subspace).items())),
        str(sorted(asdict(material).items())),
    )


def _tet_mesh(inp: CharacterInput, subspace: SubspaceSettings, cache_dir: Path | None, log: list[str]) -> TetResult:
    """Tetrahedralise, reusing a cached result for identical surface and resolution.

    The cache heals: a damaged file (empty, truncated, not an archive, arrays
    missing or inconsistent) is reported in one line, deleted and recomputed,
    never trusted and never fatal.  Temporary files that killed runs left
    for this same cache file are removed first.  A cache that cannot be
    written (a full disk, a read-only folder) costs the reuse, not the result.
    """
    key = input_hash(
        "skinmodes-tets-2", inp.rest, inp.faces, subspace.target_tets, subspace.tet_method, subspace.loose_parts
    )
    path = None if cache_dir is None else cache_dir / f"tets-{key[:16]}.npz"
    if path is not None:
        # "tets-*.tmp.npz": what numpy wrote for earlier versions' temporary name.
        remove_stale_partials(path, time.time(), legacy=[f"tets-{key[:16]}.tmp.npz"])
        if path.exists():
            try:
                with np.load(path, allow_pickle=False) as data:
                    if str(data["key"]) != key:
                        raise ValueError("written for other inputs")
                    return TetResult.from_saved(data)
            except Exception as exc:  # whatever the damage, the file must not block the character
                log.append(f"tet cache {path.name} is damaged ({type(exc).__name__}); deleted it, recomputing")
                try:
                    path.unlink()
                except OSError:
                    pass  # cannot delete it (read-only folder): the fresh result below overwrites it if it can
    res = tetrahedralize(
        inp.rest,
        inp.faces,
        target_tets=subspace.target_tets,
        method=subspace.tet_method,
        loose_parts=subspace.loose_parts,
    )
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_npz_atomic(path, {"key": np.str_(key), **res.to_arrays()})
        except OSError as exc:
            log.append(f"could not cache the tet mesh in {path.parent} ({exc.strerror or exc}); recomputed next time")
    return res


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

    def stage(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("computing modes was cancelled; nothing was changed")
        if progress is not None:
            progress(name, fraction)

    stats: dict[str, float] = {}
    log: list[str] = []
    cache = None if cache_dir is None else Path(cache_dir)
    rest = np.asarray(inp.rest, dtype=np.float64)
    W = np.asarray(inp.bone_weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != len(rest):
        raise RigError(f"bone weights must have one row per vertex ({len(rest)}), got shape {W.shape}")
    stage("meshing", 0.0)
    t0 = time.perf_counter()
    if tets is None:
        tet = _tet_mesh(inp, subspace, cache, log)
    else:
        tet = TetResult.from_arrays(*tets, method="given")
    log.extend(tet.messages)
    stats["tetrahedralize_s"] = time.perf_counter() - t0
    mesh = TetMesh.from_arrays(tet.X, tet.T)
    stage("volume weights", 0.15)
    t0 = time.perf_counter()
    tet_w = volume_bone_weights(mesh.X, mesh.T, rest, inp.faces, W)
    stiff = _extend_mask(mesh.X, mesh.T, inp, inp.stiffness)
    dens = _extend_mask(mesh.X, mesh.T, inp, inp.density)
    free = _extend_mask(mesh.X, mesh.T, inp, inp.leak)
    stats["volume_weights_s"] = time.perf_counter() - t0
    E = scaled_field(mesh.T, material.youngs_modulus, stiff, *material.stiffness_range)
    rho = scaled_field(mesh.T, material.density, dens, *material.density_range)
    mat = Material.from_fields(E, np.full(mesh.t, material.poisson_ratio), rho)
    rig = LBSRig.from_weights(tet_w)
    held, emb, planted = None, None, None
    if inp.planted is not None and np.shape(inp.planted) != (len(rest),):
        raise RigError(f"planted vertices need one flag per vertex ({len(rest)}), got shape {np.shape(inp.planted)}")
    # Planted feet, and rigid parts (issue 23: a loose piece bound to one bone follows it): both hold
    # the corners of their tets still (found before the modes, which vanish there).
    rigid = rigid_pieces(rest, inp.faces, W) if subspace.rigid_parts else None
    if (inp.planted is not None and np.any(inp.planted)) or (rigid is not None and rigid.any()):
        emb = embed_points(mesh.X, mesh.T, rest)
    if inp.planted is not None and np.any(inp.planted):
        assert emb is not None
        planted, held = _held_corners(mesh.T, emb, inp.planted)
        if held is not None:
            stats["planted_vertices"] = float(len(held))
    hold = held
    if rigid is not None and rigid.any():
        assert emb is not None
        _, still = _held_corners(mesh.T, emb, rigid)
        if still is not None:
            stats["rigid_vertices"] = float(len(still))
            hold = still if held is None else np.union1d(held, still)
    # The momentum-leak field from a mask f (0 follows the rig, 0.5 the depth field, 1 swings the
    # whole depth): the painted one replaces the automatic one, which frees appendages.
    mask = free
    extra, chains = None, None
    if inp.bone_parents is not None and subspace.swing_appendages:
        parents = np.asarray(inp.bone_parents, dtype=np.int64)
        if parents.shape != (W.shape[1],):
            raise RigError(f"bone parents need one entry per weight column ({W.shape[1]}), got {parents.shape}")
        feet = None if held is None else np.unique(W[planted].argmax(axis=1))
        grounded = None if feet is None else np.isin(np.arange(W.shape[1]), feet)
        appendage = appendage_bones(tet_w, parents, surface_depth(mesh), grounded, mesh.X, held)
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
            extra, chains = tet_w[:, root >= 0], root[root >= 0]
    d0 = default_leak_field(mesh)
    d = d0 if mask is None else leak_from_mask(d0, mask)
    key = character_key(inp, subspace, material)
    model_path = None if cache is None else cache / f"model-{key[:16]}.npz"
    stage("modes and clusters", 0.22)
    t0 = time.perf_counter()
    model = load_or_build(
        model_path,
        mesh,
        mat,
        rig,
        subspace.modes,
        subspace.clusters,
        leak=d,
        seed=subspace.seed,
        log=log,
        held=hold,
        extra_weights=extra,
        extra_groups=chains,
    )
    stats["subspace_s"] = time.perf_counter() - t0
    # The model's stiffness is the material's, softened where appendages swing (swing_softening).
    mat = replace(mat, mu=model.mu, lam=model.lam)
    stage("embedding", 0.95)
    t0 = time.perf_counter()
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
    rec = Reconstructor(model, render_w, where, dtype=np.float32)
    stats["embedding_s"] = time.perf_counter() - t0
    stats.update(vertices=float(mesh.n), tets=float(mesh.t), modes=float(model.m), clusters=float(model.r))
    stage("done", 1.0)
    return PreparedCharacter(
        tets=tet,
        mesh=mesh,
        tet_bone_weights=tet_w,
        material=mat,
        leak=d,
        model=model,
        embedding=emb,
        reconstructor=rec,
        key=key,
        stats=stats,
        messages=log,
        base=material,
        segments=_segments(inp),
        keep=keep,
        render_points=where,
        leak_mask=mask,
    )


def _segments(inp: CharacterInput) -> tuple[np.ndarray, np.ndarray] | None:
    if inp.bone_heads is None or inp.bone_tails is None:
        return None
    return np.asarray(inp.bone_heads, dtype=np.float64), np.asarray(inp.bone_tails, dtype=np.float64)


# A pose's contact: "auto" (skin the pose presses together, :func:`contact_vertices`), None (no
# contact) or a painted render-vertex mask (k,) in [0, 1] (its surface, extended into the volume).
ContactSpec = str | np.ndarray | None
# A painted contact mask holds the tet surface vertices where its extension exceeds this.
CONTACT_MASK_LEVEL = 0.5


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


def pose_contacts(prepared: PreparedCharacter, p: np.ndarray, spec: ContactSpec) -> np.ndarray | None:
    """Tet vertices (c,) held still in the pose with rig parameters p (12 b,), per :data:`ContactSpec`."""
    mesh = prepared.mesh
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != "auto":
            raise SimulationError(f"a pose's contact must be 'auto', None or a painted mask, got {spec!r}")
        return detect_contacts(prepared.model, np.asarray(p)[None])[0]
    mask = np.asarray(spec, dtype=np.float64)
    count = len(prepared.embedding.tet)
    if mask.shape != (count,):
        raise SimulationError(f"a contact mask needs one value per mesh vertex ({count}), got shape {mask.shape}")
    inside = interpolate_mask_to_tets(prepared, mask)
    surface = np.zeros(mesh.n, dtype=bool)
    surface[np.unique(boundary_faces(mesh.T))] = True
    return np.flatnonzero(surface & (inside > CONTACT_MASK_LEVEL))


def interpolate_mask_to_tets(prepared: PreparedCharacter, mask: np.ndarray) -> np.ndarray:
    """A render-vertex mask (k,) carried to the tet vertices (n,): each tet vertex takes the largest
    value of the render vertices embedded in its tets (a painted patch marks the tets it touches)."""
    emb, T = prepared.embedding, prepared.mesh.T
    out = np.zeros(prepared.mesh.n)
    np.maximum.at(out, T[emb.tet].ravel(), np.repeat(np.clip(mask, 0.0, 1.0), 4))
    return out


def _check_distinct(poses: np.ndarray, frames: Sequence[int]) -> None:
    """Refuse, naming the frames, two training poses (or one and the rest) with the same bone rotations:
    the RBF cannot tell them apart."""
    b = poses.shape[1] // 12
    features = np.array([pose_features(p) for p in [rest_pose(b), *poses]])  # loop over poses, a handful
    names = ["the rest frame", *[f"frame {f}" for f in frames]]
    D = np.linalg.norm(features[:, None] - features[None], axis=2)
    same = np.argwhere(np.triu(D <= 1e-9, k=1))
    if len(same):
        i, j = same[0]
        raise SimulationError(
            f"the training poses at {names[i]} and {names[j]} have the same bone rotations "
            "(only a move of the whole rig tells them apart); remove one of them"
        )


def prepare_pose_space(
    prepared: PreparedCharacter,
    poses: np.ndarray,
    frames: Sequence[int],
    contacts: Sequence[ContactSpec] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> PoseSpaceCharacter:
    """Pose-space modes for training poses (k', 12 b) taken at ``frames`` (k',), with their contacts.

    progress(done, total) after each pose; cancelled() is asked before each (raises :class:`Cancelled`).
    """
    t0 = time.perf_counter()
    model = prepared.model
    if model.rig_weights is None:
        raise RigError("pose-space modes need the character's bone weights")
    poses = np.atleast_2d(np.asarray(poses, dtype=np.float64))
    if len(frames) != len(poses):
        raise SimulationError(f"expected one frame per pose, got {len(frames)} for {len(poses)}")
    specs = list(contacts) if contacts is not None else [None] * len(poses)
    _check_distinct(poses, frames)
    sticks = [pose_contacts(prepared, p, c) for p, c in zip(poses, specs)]

    def step(done: int, total: int) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("computing the pose-space modes was cancelled; nothing was changed")
        if progress is not None:
            progress(done, total)

    step(0, len(poses))
    ps = build_pose_space(model, prepared.material, poses, progress=step, contacts=sticks)
    emb, T = prepared.embedding, prepared.mesh.T
    render_w = np.stack([interpolate(emb, T, W) for W in ps.alignment.bases])
    if prepared.keep is not None:
        render_w[:, ~prepared.keep] = 0.0  # skipped loose parts follow the rig only
    where = prepared.render_points
    assert where is not None  # prepare_character sets it
    probes = guard_probes(model.X)
    return PoseSpaceCharacter(
        model=ps,
        render=PosePoints(ps, render_w, where, dtype=np.float32),
        probes=PosePoints(ps, ps.alignment.bases[:, probes], model.X[probes]),
        # _check_distinct refused a pose at the rest, so build_pose_space put the rest first.
        frames=(-1, *[int(f) for f in frames]),
        contacts=(0, *[0 if c is None else len(c) for c in sticks]),
        seconds=time.perf_counter() - t0,
    )


def physical_scale(prepared: PreparedCharacter, solver: SolverSettings) -> float:
    """kappa for the solver's physical material on a model built with ``prepared.base``.

    The motion depends on stiffness over density only (the rig's inertial
    force scales with the mass too), so kappa = (E / E_base) (rho_base / rho).
    """
    base = prepared.base
    return (solver.youngs_modulus / base.youngs_modulus) * (base.density / solver.density)


RigFrames = Mapping[int, np.ndarray] | Callable[[int], np.ndarray]
# (wobble_hz, damping_ratio) of a frame, for animated controls.
ControlFrames = Callable[[int], tuple[float, float]]

# The guard speaks when the secondary motion exceeds this share of the
# character's size (twice its largest distance from the centroid).
OFFSET_WARNING = 0.5
# Every simulated frame's state is kept (scrubbing back replays it at once)
# until they take STATE_BUDGET bytes (a state is 4 x 12m floats: 6 KB at 16
# modes, so 256 MB is ~40k frames); beyond that only one state every
# CHECKPOINT frames (and the newest) is kept, and going back re-simulates at
# most CHECKPOINT - 1 frames: a 100k-frame bake stays bounded.
STATE_BUDGET = 256 * 2**20
CHECKPOINT = 24
# A rig whose probe points accelerate by more than this share of the
# character's size in one frame (second difference) has a cut or a jump: at
# 24 fps and 1.8 m that is 26 g, beyond any performed motion.
JUMP_WARNING = 0.25
# ... and it is a cut only where that frame's step is a discontinuity: at some probe point that
# accelerates so, the step is more than CUT_RATIO times the largest step of the same point in the
# CUT_WINDOW frames either side.  A fast periodic motion (a wasp's wing flapping 45 % of the body
# per frame) accelerates as hard, but its steps repeat within a few frames: it is not a cut.
CUT_RATIO = 2.0
CUT_WINDOW = 4
# Tet vertices the guard measures each frame (the farthest from the centroid
# and an even spread): the offset's maximum sits on the outside.
GUARD_PROBES = 512


def guard_probes(X: np.ndarray, count: int = GUARD_PROBES) -> np.ndarray:
    """Indices (k,) of at most ``count`` tet vertices X (n, 3) that the offset guard watches."""
    n = len(X)
    if n <= count:
        return np.arange(n)
    r = np.sum((X - X.mean(axis=0)) ** 2, axis=1)
    far = np.argsort(-r, kind="stable")[: count // 2]
    spread = np.linspace(0, n - 1, count - len(far)).astype(np.int64)
    return np.unique(np.concatenate([far, spread]))


def check_frame_range(start: int, end: int) -> tuple[int, int]:
    """(start, end) as ints, or a one-line :class:`SimulationError` when the range holds no frame.

    Both ends are simulated (end == start is one frame).  The bake, the
    session and :class:`FrameSimulation` all refuse through here, before any
    work, with the same words.
    """
    start, end = int(start), int(end)
    if end < start:
        raise SimulationError(f"the frame range {start} to {end} is empty; set the end frame after the start frame")
    return start, end


def _remember_near(cache: dict[int, np.ndarray], frame: int, value: np.ndarray) -> None:
    """Store ``value`` for ``frame`` and forget frames more than two away: a few, not one per frame of a long bake."""
    cache[frame] = value
    for old in [g for g in cache if abs(g - frame) > 2]:
        del cache[old]


def frame_ranges(frames: Sequence[int]) -> str:
    """Sorted frames as ranges: [1, 2, 3, 7] -> "1-3, 7"."""
    out: list[str] = []
    i = 0
    while i < len(frames):
        j = i
        while j + 1 < len(frames) and frames[j + 1] == frames[j] + 1:
            j += 1
        out.append(str(frames[i]) if i == j else f"{frames[i]}-{frames[j]}")
        i = j + 1
    return ", ".join(out)


class FrameSimulation:
    """Simulates a frame range with sub-steps; any frame can be asked for, in any order.

    rig: the LBS rig parameters (12 b,) of the tet mesh for each integer frame
    (world transforms of each bone applied to object-space rest positions),
    as a mapping or a function; with pre-roll it is also asked for the
    ``solver.preroll`` frames before ``start``.  Sub-steps interpolate the
    parameters linearly between frames; the rig is never sampled between
    frames.  The state at the first simulated frame is at rest relative to
    the rig, moving with the rig's velocity there: its previous pose is
    extrapolated one *sub-step* back, the spacing of every solver step.
    controls: (wobble_hz, damping_ratio) per frame when they are animated
    (default: the solver settings' values).  posespace: training poses' modes
    (:func:`prepare_pose_space`); every step then runs in the subspace blended at
    its pose, and the render vertices and guard follow the blend.  With the
    physics skin on they are not used (its shape, not the bones, drives the
    jiggle) and a warning says so.
    """

    def __init__(
        self,
        prepared: PreparedCharacter,
        solver: SolverSettings,
        start: int,
        end: int,
        rig: RigFrames,
        controls: ControlFrames | None = None,
        bone_names: Sequence[str] | None = None,
        posespace: PoseSpaceCharacter | None = None,
    ):
        check_frame_range(start, end)
        if solver.preroll < 0:
            raise SimulationError(f"pre-roll {solver.preroll} must be zero or more frames")
        self.prepared = prepared
        self.solver = solver
        self.start, self.end = int(start), int(end)
        self._rig = rig
        self._bone_names = list(bone_names) if bone_names is not None else None
        self._cuts: set[int] = set()
        self._pending: dict[int, np.ndarray] = {}  # frames the rig may jump at: (k,) probe accelerations
        self._controls = controls
        self._guard_warnings: list[str] = []  # one line each; ``warnings`` adds the solver's
        self._warned: set[str] = set()
        if posespace is not None and solver.physics_skin:
            self._guard_warnings.append(
                "the training poses are not used with Physics Skin on: its shape, not the bones, drives the jiggle"
            )
            posespace = None
        self.posespace = posespace
        self.simulator: Simulator | PoseSpaceSimulator = (
            Simulator(prepared.model, solver.simulation())
            if posespace is None
            else PoseSpaceSimulator(posespace.model, solver.simulation())
        )
        self.omega0 = prepared.slowest_frequency(self.simulator.arap)
        model = prepared.model
        probes = guard_probes(model.X)
        self._probe_basis = model.basis(model.weights[probes], model.X[probes])
        self._probe_rig = None if model.rig_weights is None else lbs_basis(model.rig_weights[probes], model.X[probes])
        self._rig_cache: dict[int, np.ndarray] = {}
        self.physics = prepared.physics_rig(solver.pin_depth) if solver.physics_skin else None
        self._physics_cache: dict[int, np.ndarray] = {}
        self.max_offset = 0.0  # largest guarded offset so far, as a share of the character's size
        first = self.start - solver.preroll
        a0 = self._drive(first)
        a1 = self._drive(first + 1) if self.end > first else a0
        state = self.simulator.initial_state(
            **a0, **{k + "_prev": v - (a1[k] - v) / solver.substeps for k, v in a0.items()}
        )
        self._states: dict[int, SimState | PoseSpaceState] = {first: state}
        self._state_bytes = 4 * state.z.nbytes  # z, z_prev, q, q_prev
        # Per simulated frame: each sub-step's solver iterations, and how many steps stopped unconverged.
        self.iterations: dict[int, tuple[int, ...]] = {}
        self.unconverged: dict[int, int] = {}
        if solver.preroll:
            state = self.state(self.start)
            self._states = {self.start: state}

    def rig(self, frame: int) -> np.ndarray:
        src = self._rig
        p = src(frame) if callable(src) else src[frame]
        return np.asarray(p, dtype=np.float64)

    def physics_positions(self, frame: int) -> np.ndarray:
        """Physics-skinned tet positions (n, 3) at an integer ``frame`` (requires Physics Skin)."""
        assert self.physics is not None
        x = self._physics_cache.get(frame)
        if x is None:
            x = self.physics.positions(self.rig(frame))
            _remember_near(self._physics_cache, frame, x)  # a step needs two frames, a bake one more
        return x

    def _drive(self, frame: int) -> dict[str, np.ndarray]:
        """What drives the solver at an integer frame: {"p": LBS parameters} or {"x_rig": physics positions}.

        Sub-steps interpolate either linearly between frames.
        """
        if self.physics is not None:
            return {"x_rig": self.physics_positions(frame)}
        return {"p": self.rig(frame)}

    def controls(self, frame: int) -> tuple[float, float]:
        """(stiffness scale kappa, damping c in 1/s) of the solver at ``frame``."""
        hz, zeta = (
            (self.solver.wobble_hz, self.solver.damping_ratio) if self._controls is None else self._controls(frame)
        )
        if self.solver.stiffness_mode == "physical":
            kappa = physical_scale(self.prepared, self.solver)
            return kappa, 2.0 * zeta * self.omega0 * float(np.sqrt(kappa))
        # Matched to the stepped motion: backward Euler's own damping and slowing are compensated.
        h = 1.0 / (self.solver.fps * self.solver.substeps)
        kappa, c, reached = implicit_euler_controls(self.omega0, hz, zeta, h)
        if reached - zeta > 0.05 and "damping floor" not in self._warned:  # 5 points of damping ratio
            self._warned.add("damping floor")
            self._guard_warnings.append(
                f"frame {frame}: a damping ratio of {zeta:g} is below what {self.solver.substeps} sub-step(s) can "
                f"resolve at {hz:g} Hz; the wobble dies out at {reached:.2g} instead; add sub-steps"
            )
        return kappa, c

    @property
    def cached_frames(self) -> list[int]:
        return sorted(self._states)

    def state(self, frame: int) -> SimState | PoseSpaceState:
        """The state at ``frame`` (clamped to the range), simulating forward as needed."""
        f = min(max(int(frame), self.start), self.end)
        if f in self._states:
            return self._states[f]
        if f - 1 in self._states:  # playing forward: the common case, O(1)
            k = f - 1
        else:
            frames = self.cached_frames
            k = frames[bisect.bisect_left(frames, f) - 1]  # the nearest simulated frame before f
        state = self._states[k]
        S = self.solver.substeps
        self._probe_rig_positions(k, self.rig(k))
        if k - 1 not in self._rig_cache and k - 1 >= self.start - self.solver.preroll:
            self._probe_rig_positions(k - 1, self.rig(k - 1))
        d_a = self._drive(k)
        for g in range(k + 1, f + 1):
            d_b = self._drive(g)
            if self._rig_guard(g, self.rig(g)) and self.solver.reset_at_cuts:
                fresh = self.simulator.initial_state(**d_b)
                state = (
                    fresh.with_step(state.step)
                    if isinstance(fresh, PoseSpaceState)
                    else replace(fresh, step=state.step)
                )
                self._states[g] = state
                self._forget_between_checkpoints(g - 1)
                d_a = d_b
                continue
            kappa, c = self.controls(g)
            its, missed = [], 0
            for s in range(1, S + 1):
                a = s / S
                between = {key: (1.0 - a) * d_a[key] + a * d_b[key] for key in d_b}
                state, rep = self._advance(state, between, g - 1 + a, kappa, c)
                its.append(rep.iterations)
                missed += not rep.converged
            self._states[g] = state
            self.iterations[g] = tuple(its)
            self.unconverged[g] = missed
            self._guard(g, state)
            self._confirm_cuts(g)
            self._forget_between_checkpoints(g - 1)
            d_a = d_b
        return state

    @property
    def warnings(self) -> list[str]:
        """What the bake and the panel say, one line each: the guard's, then the solver's (if any)."""
        line = self.convergence_warning()
        return self._guard_warnings + ([line] if line else [])

    def solver_stats(self) -> dict[str, float | int | list[int]]:
        """Solver iterations per step over the simulated frames: mean, max, steps at the cap, unconverged frames."""
        its = [i for f in sorted(self.iterations) for i in self.iterations[f]]
        cap = self.solver.iterations
        return {
            "steps": len(its),
            "mean_iterations": round(float(np.mean(its)), 2) if its else 0.0,
            "max_iterations": max(its, default=0),
            "iteration_cap": cap,
            "steps_at_cap": sum(i >= cap for i in its),
            "unconverged_steps": sum(self.unconverged.values()),
            "unconverged_frames": sorted(f for f, n in self.unconverged.items() if n),
        }

    def convergence_warning(self) -> str:
        """One line naming the frames whose steps stopped at the iteration cap unconverged, or ""."""
        frames = sorted(f for f, n in self.unconverged.items() if n)
        if not frames:
            return ""
        steps = sum(self.unconverged.values())
        return (
            f"{steps} solver step{'s' if steps > 1 else ''} stopped unconverged at the cap of "
            f"{self.solver.iterations} iterations (frames {frame_ranges(frames)}); raise Iterations"
        )

    def _advance(
        self, state: SimState | PoseSpaceState, drive: dict[str, np.ndarray], frame: float, kappa: float, c: float
    ) -> tuple[SimState | PoseSpaceState, StepReport]:
        """One solver step to ``drive`` ({"p": ...} or {"x_rig": ...}) at stiffness kappa and damping c."""
        sim = self.simulator
        if isinstance(sim, PoseSpaceSimulator):
            assert isinstance(state, PoseSpaceState)
            return sim.step(state, p=drive["p"], frame=frame, stiffness_scale=kappa, damping=c)
        assert isinstance(state, SimState)
        return sim.step(
            state, p=drive.get("p"), x_rig=drive.get("x_rig"), frame=frame, stiffness_scale=kappa, damping=c
        )

    def _forget_between_checkpoints(self, frame: int) -> None:
        """Over the memory budget, drop the state of ``frame`` unless it is a checkpoint (or the start)."""
        if len(self._states) * self._state_bytes <= STATE_BUDGET:
            return
        if frame > self.start and (frame - self.start) % CHECKPOINT and frame in self._states:
            del self._states[frame]  # its iterations stay: they are the bake's statistics

    def _probe_rig_positions(self, frame: int, p: np.ndarray) -> np.ndarray | None:
        """Rig positions (k, 3) of the guard's probe points at ``frame`` (None without an LBS rig)."""
        if self._probe_rig is None:
            return None
        x = self._rig_cache.get(frame)
        if x is None:
            x = self._probe_rig @ rig_matrix(p)
            _remember_near(self._rig_cache, frame, x)  # the guard looks two frames back
        return x

    def _bone(self, index: int) -> str:
        names = self._bone_names
        return f"'{names[index]}'" if names is not None and 0 <= index < len(names) else str(index)

    def _rig_guard(self, frame: int, p: np.ndarray) -> bool:
        """Say, once per kind, when the rig collapses, flips or jumps at ``frame``; True at a jump (a cut)."""
        A = p.reshape(-1, 3, 4)[:, :, :3]
        det = np.linalg.det(A)
        if np.any(np.abs(det) < 1e-9) and "collapse" not in self._warned:
            self._warned.add("collapse")
            self._guard_warnings.append(
                f"frame {frame}: bone {self._bone(int(np.argmin(np.abs(det))))} of the rig is scaled to zero, "
                "which crushes the flesh; fix the bone's scale keys"
            )
        if np.any(det < 0) and "flip" not in self._warned:
            self._warned.add("flip")
            self._guard_warnings.append(
                f"frame {frame}: bone {self._bone(int(np.argmin(det)))} of the rig has a negative scale "
                "(a mirror flip); the jiggle there is unreliable: use rotations instead of negative scale"
            )
        x_b = self._probe_rig_positions(frame, p)
        if x_b is None or frame - 1 not in self._rig_cache:
            return False
        x_a = self._rig_cache[frame - 1]
        # No earlier frame, or a cut at the previous one: the rig starts from rest there.
        x_z = x_a if frame - 1 in self._cuts else self._rig_cache.get(frame - 2, x_a)
        acc = np.sqrt(np.sum((x_b - 2.0 * x_a + x_z) ** 2, axis=1)) / self.simulator.size
        if acc.max() <= JUMP_WARNING:
            return False
        if not self.solver.reset_at_cuts:
            # Told once the frames after it are simulated (and sampled: a bake samples the rig as it
            # goes), so a flap starting with the clip is seen to go on (:meth:`_confirm_cuts`).
            self._pending[frame] = acc
            return False
        # Restarting cannot wait: only the frames before it tell a flap (the first flap of a clip
        # that starts with one may restart once).
        isolated = self._isolated_steps(frame, frame) & (acc > JUMP_WARNING)
        if not isolated.any():
            return False  # fast motion that goes on (a flap), not a discontinuity
        jump = float(acc[isolated].max())
        self._cuts.add(frame)
        if f"cut {frame}" in self._warned:  # simulated again from a checkpoint: said already
            return True
        self._warned.add(f"cut {frame}")
        self._guard_warnings.append(
            f"frame {frame}: the rig jumps by {100 * jump:.0f}% of the character's size; the simulation "
            "restarts at rest there (Reset at Cuts)"
        )
        return True

    def _confirm_cuts(self, simulated: int) -> None:
        """Say "the rig jumps" for the pending frames whose CUT_WINDOW frames after them are simulated."""
        for frame in sorted(self._pending):
            if frame + CUT_WINDOW > simulated and simulated < self.end:
                break
            acc = self._pending.pop(frame)
            isolated = self._isolated_steps(frame, frame + CUT_WINDOW) & (acc > JUMP_WARNING)
            if not isolated.any() or "jump" in self._warned:
                continue  # fast motion that goes on (a flap), not a discontinuity; or said already
            self._warned.add("jump")
            self._guard_warnings.append(
                f"frame {frame}: the rig jumps by {100 * float(acc[isolated].max()):.0f}% of the character's "
                "size in one frame (a cut?); turn on Reset at Cuts or smooth the animation there"
            )

    def _isolated_steps(self, frame: int, last: int) -> np.ndarray:
        """(k,) bool: probe points whose rig step into ``frame`` exceeds CUT_RATIO x their own steps nearby.

        Nearby: the steps into the other frames from CUT_WINDOW before ``frame`` to ``last`` (at most
        CUT_WINDOW after it) inside the simulated range, cuts included: a restart on a flap's first
        stroke must not make the next stroke look isolated.  Only asked where the rig accelerates
        beyond JUMP_WARNING: the extra rig samples are rare but in such motion.
        """
        assert self._probe_rig is not None
        lo = max(self.start - self.solver.preroll, frame - CUT_WINDOW - 1)
        hi = min(self.end, last)
        x = {g: self._probe_rig @ rig_matrix(self.rig(g)) for g in range(lo, hi + 1)}
        step = {g: np.linalg.norm(x[g] - x[g - 1], axis=1) for g in range(lo + 1, hi + 1)}
        around = np.zeros(len(step[frame]))
        for g, s in step.items():
            if g != frame:
                around = np.maximum(around, s)
        return step[frame] > CUT_RATIO * around

    def pose_weights(self, frame: int) -> np.ndarray | None:
        """The training poses' weights (k,) at an integer ``frame``, or None without pose-space modes."""
        if self.posespace is None:
            return None
        return self.posespace.model.pose_weights(self.rig(frame))

    def _guard(self, frame: int, state: SimState | PoseSpaceState) -> None:
        """Record the largest offset and say, once, when it passes OFFSET_WARNING of the character's size."""
        if frame < self.start:
            return  # pre-roll frames are discarded
        ps = self.posespace
        if ps is None:
            probe_u = self._probe_basis @ state.z
        else:
            probe_u = ps.probes.displacement(ps.model.pose_weights(self.rig(frame)), state.z)
        share = float(np.sqrt(np.max(np.sum(probe_u**2, axis=1)))) / self.simulator.size
        self.max_offset = max(self.max_offset, share)
        if share > OFFSET_WARNING and "offset" not in self._warned:
            self._warned.add("offset")
            hint = (
                "raise the wobble frequency, then the damping ratio"
                if self.solver.stiffness_mode == "frequency"
                else "raise Young's modulus or switch the stiffness to Wobble Frequency"
            )
            self._guard_warnings.append(
                f"frame {frame}: the secondary motion reached {100 * share:.0f}% of the character's size "
                f"(a plausible jiggle stays under {100 * OFFSET_WARNING:.0f}%); {hint}, or check the rig for jumps"
            )

    def offsets(self, frame: int) -> np.ndarray:
        """World-space displacement (k, 3) of the render vertices from their linear blend skinning at
        ``frame`` (0 outside the range): the secondary motion, plus the physics skin's correction
        when it is on; with Secondary Motion off, the correction alone."""
        rec = self.prepared.reconstructor
        if frame < self.start or frame > self.end:
            return np.zeros((rec.count, 3), dtype=rec.basis.dtype)
        jiggle = self.solver.secondary_motion or self.physics is None
        if not jiggle:
            u = np.zeros((rec.count, 3), dtype=rec.basis.dtype)
        elif self.posespace is not None:
            ps = self.posespace
            u = ps.render.displacement(ps.model.pose_weights(self.rig(frame)), self.state(frame).z)
        else:
            u = rec.displacement(self.state(frame).z)
        if self.solver.amount != 1.0:
            # Amount: how much of the follow-through shows.  A gain on the result, so the wobble and the
            # damping keep meaning what they say, and complementarity and invariances are untouched.
            u = u * u.dtype.type(self.solver.amount)
        if self.physics is not None:
            p = self.prepared
            c = self.physics.correction(self.rig(frame), self.physics_positions(frame))
            u = u + render_correction(p.embedding, p.mesh.T, c, p.keep).astype(u.dtype)
        return u

    def invalidate_after(self, frame: int) -> None:
        """Forget states after ``frame`` (e.g. the rig changed there)."""
        keep = max(frame, self.start)
        self._states = {f: s for f, s in self._states.items() if f <= keep}
        self._rig_cache = {f: x for f, x in self._rig_cache.items() if f <= keep}
        self._cuts = {f for f in self._cuts if f <= keep}
        self._pending = {f: a for f, a in self._pending.items() if f <= keep}
        self.iterations = {f: i for f, i in self.iterations.items() if f <= keep}
        self.unconverged = {f: n for f, n in self.unconverged.items() if f <= keep}
        self._physics_cache = {f: x for f, x in self._physics_cache.items() if f <= keep}
