"""Real rigged characters baked with the default settings, and how plausible the result is.

The characters are public glTF files stored in ``tests/assets/characters/``
(sources and licences in its CREDITS.md).  Each :class:`CharacterSpec` names
the file, the skinned mesh the add-on is given, the animation, an import
scale and the clip's frame range.  :func:`measure` loads one into a fresh
scene, bakes it through the add-on's Python API with default settings and
measures the secondary motion against the rig.

Offsets are ``baked - rig-only`` positions of the render vertices in world
space (Blender units; the scene's unit scale is 1), where "rig-only" is the
mesh evaluated with the bake's Mesh Cache modifier disabled.  They are given
in % of the character's size, the one the add-on reports everywhere (the
panel's Character Size, the bake summary's ``character_size`` and its
``max_offset_percent``, the guard's messages): twice the largest distance of
the simulated volume from its centre, in world units at the rest frame.  Unlike
a bounding-box diagonal it does not change when the character turns.

Every clip is followed by a hold of :data:`HOLD_SECONDS` on its last pose
(actions hold their last key with constant extrapolation; Cycles modifiers,
which would repeat the clip, are removed and reported), so "settled" can be
measured :data:`SETTLE_SECONDS` after the rig stops.

Used by ``tests/addon/test_real_characters.py`` (the add-on installed by the
tests' fixture), the benchmark suite, and from the command line
(``tools/real_characters.py``), where the add-on is installed into a
throw-away Blender profile first.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from testkit.build_extension import ADDON_MODULE, install_dev

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "tests" / "assets" / "characters"

HOLD_SECONDS = 1.5  # the last pose is held this long after the clip
SETTLE_SECONDS = 1.0  # "settled" is measured from this long after the rig stops to the end of the hold


@dataclass(frozen=True)
class CharacterSpec:
    """One character of the set.

    actions: the glTF animations that make up the clip.  Several are merged
    into one action (older exports store one animation per joint), which is
    then the armature's active action.
    clip: first and last frame of the clip (None: the action's frame range).
    tip_bone: the tracked vertex is, among the vertices bound mostly to this
    bone, the one farthest from the rest shape's centroid (a tail or finger tip).
    join_pieces: join every other mesh parented to the armature into ``mesh``
    first; pieces parented to a bone are bound to it with weight 1 (what a
    rigger does to give a robot of rigid, bone-parented parts one skin).
    abrupt_stop: the frame where the clip stops dead from full speed (a
    velocity discontinuity of the rig): the bake's guard must name it, and
    the overshoot that follows may pass the plausibility limit.
    """

    name: str
    role: str
    file: str
    mesh: str
    actions: tuple[str, ...]
    tip_bone: str
    scale: float = 1.0
    clip: tuple[int, int] | None = None
    join_pieces: bool = False
    abrupt_stop: int | None = None

    @property
    def path(self) -> Path:
        return ASSETS / self.file


def _cesium_man_actions() -> tuple[str, ...]:
    # COLLADA2GLTF wrote the walk as 19 animations, one per joint: Anim_0 .. Anim_18.
    return tuple(f"Anim_{i}" for i in range(19))


CHARACTERS: tuple[CharacterSpec, ...] = (
    CharacterSpec(
        name="cesium_man_x100",
        role="humanoid walk, imported at x100 (a centimetre pipeline)",
        file="CesiumMan.glb",
        mesh="Cesium_Man",
        actions=_cesium_man_actions(),
        tip_bone="Node_15",  # a hand
        scale=100.0,
    ),
    CharacterSpec(
        name="fox",
        role="long tail (native size 175 units)",
        file="Fox.glb",
        mesh="fox",
        actions=("Walk",),
        tip_bone="b_Tail03_014",
    ),
    CharacterSpec(
        name="robot",
        role="robot of 14 rigid parts joined into one skin: loose pieces, open surfaces",
        file="RobotExpressive.glb",
        mesh="Hand.R",
        actions=("Walking",),
        tip_bone="Head",
        join_pieces=True,
    ),
    CharacterSpec(
        name="robot_hand",
        role="robot forearm waving, stopping dead at frame 42",
        file="RobotExpressive.glb",
        mesh="Hand.R",
        actions=("Wave",),
        tip_bone="Middle2.R",
        abrupt_stop=42,
    ),
    CharacterSpec(
        name="rigged_simple",
        role="simple skinned cylinder",
        file="RiggedSimple.gltf",
        mesh="Cylinder",
        actions=("Anim_0",),
        tip_bone="Node_3",
    ),
    CharacterSpec(
        name="stag",
        role="galloping stag with a tail (its horns, a separate rigid mesh, are left out)",
        file="Stag.glb",
        mesh="Stag",
        actions=("AnimalArmature|Gallop",),
        tip_bone="Tail3",
    ),
    CharacterSpec(
        name="trex",
        role="running T-Rex: a five-bone tail",
        file="Trex.glb",
        mesh="Trex",
        actions=("Armature|TRex_Run",),
        tip_bone="Tail5",
    ),
    CharacterSpec(
        name="husky",
        role="galloping husky at x100: a six-bone tail, ears, a deep chest",
        file="Husky.glb",
        mesh="Cube",
        actions=("AnimalArmature|Gallop",),
        tip_bone="Tail6",
        scale=100.0,
    ),
    CharacterSpec(
        name="frog",
        role="fat frog jumping, x100: a round belly on short legs",
        file="Frog.glb",
        mesh="Frog",
        actions=("FrogArmature|Frog_Jump",),
        tip_bone="Head",
        scale=100.0,
    ),
    CharacterSpec(
        name="bee",
        role="flying bee, x100: four wing pieces, each a loose piece bound to one bone",
        file="Bee.glb",
        mesh="Bee",
        actions=("MonsterArmature|Flying",),
        tip_bone="Wing2.L",
        scale=100.0,
    ),
    CharacterSpec(
        name="dolphin",
        role="swimming dolphin, x100: six flippers and a tail fin",
        file="Dolphin.glb",
        mesh="Dolphin",
        actions=("Armature|Swim",),
        tip_bone="Tail",
        scale=100.0,
    ),
    CharacterSpec(
        name="platformer",
        role="platformer character of four meshes (body, head, ears, arms) joined into one, x100",
        file="Character.glb",
        mesh="Body",
        actions=("CharacterArmature|Run",),
        tip_bone="Ear3.L",
        scale=100.0,
        join_pieces=True,
    ),
)

# The character baked at x0.01, x1 and x100 by the scale-invariance test (its x100 bake is shared).
SCALE_TEST_CHARACTER = "cesium_man_x100"


def spec(name: str) -> CharacterSpec:
    for s in CHARACTERS:
        if s.name == name:
            return s
    raise KeyError(f"no character '{name}'; known: {', '.join(s.name for s in CHARACTERS)}")


@dataclass
class Loaded:
    """A character in the current scene, ready to bake."""

    spec: CharacterSpec
    obj: Any  # bpy.types.Object: the skinned mesh
    armature: Any  # bpy.types.Object
    start: int  # first frame of the clip (and of the bake)
    stop: int  # last frame of the clip: the rig stops here
    end: int  # last frame of the hold (and of the bake)
    fps: float
    scale: float  # the import scale applied
    notes: list[str] = field(default_factory=list)


@dataclass
class Measurement:
    """What one default bake of one character gave."""

    name: str
    role: str
    mesh: str
    action: str
    scale: float
    frames: tuple[int, int]
    frames_baked: int  # as the bake's summary says
    rig_stops: int  # last frame of the clip
    settled_from: int  # first frame of the "settled" window (SETTLE_SECONDS after the rig stops)
    size: float  # the character's size (world, Blender units): the bake summary's character_size
    vertices: int  # render vertices
    sim_vertices: int
    tets: int
    clusters: int
    mesher: str
    modes_seconds: float
    bake_seconds: float
    bake_ms_per_frame: float
    max_offset_pct: float
    first_offset_pct: float  # over the start state and the first solver step (frames start, start + 1)
    settled_offset_pct: float
    nan: bool
    messages: list[str]
    warnings: list[str]
    notes: list[str]
    tip_vertex: int
    worst_vertex: int  # the vertex and frame of the max offset, and the bone it is bound to most
    worst_frame: int
    worst_bone: str
    # Per-frame series (kept out of the repr, which test failures print):
    offset_pct_per_frame: list[float] = field(repr=False)  # max over vertices, per baked frame
    tip_rig: list[list[float]] = field(repr=False)  # (frames, 3) world positions of the tracked vertex, rig only
    tip_baked: list[list[float]] = field(repr=False)  # (frames, 3) the same with secondary motion
    # (frames, k, 3) world offsets divided by the size; kept in memory only (not in the JSON)
    relative_offsets: np.ndarray | None = field(default=None, repr=False)

    def summary(self) -> dict[str, Any]:
        """Everything but the per-vertex offsets, as JSON-able values."""
        return {k: v for k, v in asdict(self).items() if k != "relative_offsets"}


# ----------------------------------------------------------------------------------------------
# Loading


def _fcurves(action: Any) -> list[Any]:
    """Every F-curve of an action (layered actions of Blender >= 4.4, or the legacy list)."""
    curves: list[Any] = []
    for layer in getattr(action, "layers", []):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", []):
                curves.extend(bag.fcurves)
    if not curves and hasattr(action, "fcurves"):
        curves = list(action.fcurves)
    return curves


def _copy_keys(src: Any, dst: Any) -> None:
    """Copy the keyframes of F-curve ``src`` into the empty F-curve ``dst``."""
    n = len(src.keyframe_points)
    dst.keyframe_points.add(n)
    for prop, width, dtype in (
        ("co", 2, np.float32),
        ("handle_left", 2, np.float32),
        ("handle_right", 2, np.float32),
        ("interpolation", 1, np.int32),
        ("handle_left_type", 1, np.int32),
        ("handle_right_type", 1, np.int32),
        ("easing", 1, np.int32),
    ):
        buf = np.empty(n * width, dtype=dtype)
        src.keyframe_points.foreach_get(prop, buf)
        dst.keyframe_points.foreach_set(prop, buf)
    dst.extrapolation = src.extrapolation
    dst.update()


def animation_action(bpy: Any, armature: Any, name: str) -> Any:
    """The action the glTF importer made of animation ``name`` for ``armature``.

    The importer puts each animation on an NLA track of that name; the action
    itself is called ``name`` in Blender 5 and ``<name>_<object>`` in 4.2.
    """
    ad = armature.animation_data
    for track in ad.nla_tracks if ad is not None else ():
        if track.name == name and len(track.strips):
            return track.strips[0].action
    action = bpy.data.actions.get(name)
    if action is None:
        raise RuntimeError(f"'{armature.name}' has no animation '{name}'")
    return action


def _merged_action(bpy: Any, armature: Any, names: tuple[str, ...], merged_name: str) -> Any:
    """One action with the F-curves of the animations ``names`` (which animate disjoint channels)."""
    sources = [animation_action(bpy, armature, name) for name in names]
    if len(sources) == 1:
        return sources[0]
    out = bpy.data.actions.new(merged_name)
    if hasattr(out, "slots"):  # layered actions (Blender >= 4.4)
        slot = out.slots.new(id_type="OBJECT", name=armature.name)
        curves = out.layers.new("Layer").strips.new(type="KEYFRAME").channelbag(slot, ensure=True).fcurves
    else:
        curves = out.fcurves
    for source in sources:
        for fc in _fcurves(source):
            _copy_keys(fc, curves.new(fc.data_path, index=fc.array_index))
    return out


def _assign_action(armature: Any, action: Any) -> None:
    ad = armature.animation_data or armature.animation_data_create()
    for track in ad.nla_tracks:
        track.mute = True  # only the chosen clip plays
    ad.action = action
    if hasattr(ad, "action_suitable_slots") and ad.action_slot is None and len(ad.action_suitable_slots):
        ad.action_slot = ad.action_suitable_slots[0]
    ad.action_extrapolation = "HOLD"
    ad.action_blend_type = "REPLACE"
    ad.action_influence = 1.0


def _remove_cycles(action: Any) -> list[str]:
    """Remove Cycles modifiers (the clip must hold its last pose, not repeat); return notes."""
    notes = []
    for fc in _fcurves(action):
        for mod in [m for m in fc.modifiers if m.type == "CYCLES"]:
            fc.modifiers.remove(mod)
            notes.append(f"removed a Cycles modifier from {fc.data_path}[{fc.array_index}]")
    return notes


def _apply_scale(bpy: Any, objects: list[Any], factor: float) -> None:
    """Scale the objects' hierarchies by ``factor`` about the world origin through a new parent empty.

    A parent empty works whatever the roots' own transforms or object-level animation.
    """
    roots = []
    for obj in objects:
        while obj.parent is not None:
            obj = obj.parent
        if obj not in roots:
            roots.append(obj)
    holder = bpy.data.objects.new("import_scale", None)
    bpy.context.scene.collection.objects.link(holder)
    for root in roots:
        root.parent = holder
        root.matrix_parent_inverse.identity()
    holder.scale = (factor, factor, factor)
    bpy.context.view_layer.update()


def join_pieces(bpy: Any, target: Any, armature: Any) -> int:
    """Join every other mesh parented to ``armature`` into ``target``; returns how many were joined.

    Bone-parented pieces get a vertex group of their bone at weight 1, so the
    target's Armature modifier moves them exactly as the parenting did.  Their
    transforms are taken in the armature's rest pose, which is where skinning
    starts from.  Shape keys of the pieces are dropped (they are at rest).
    """
    pieces = [o for o in bpy.data.objects if o.type == "MESH" and o is not target and o.parent is armature]
    pose_position = armature.data.pose_position
    armature.data.pose_position = "REST"
    bpy.context.view_layer.update()
    for piece in pieces:
        world = piece.matrix_world.copy()
        if piece.data.shape_keys is not None:
            piece.shape_key_clear()
        if piece.parent_type == "BONE":
            group = piece.vertex_groups.get(piece.parent_bone) or piece.vertex_groups.new(name=piece.parent_bone)
            group.add(range(len(piece.data.vertices)), 1.0, "REPLACE")
        for mod in list(piece.modifiers):
            piece.modifiers.remove(mod)  # the target's Armature modifier deforms the joined mesh
        piece.parent = None
        piece.matrix_world = world
    armature.data.pose_position = pose_position
    for o in bpy.context.view_layer.objects:
        o.select_set(o in pieces or o is target)
    bpy.context.view_layer.objects.active = target
    if pieces and bpy.ops.object.join() != {"FINISHED"}:
        raise RuntimeError(f"could not join the pieces into '{target.name}'")
    return len(pieces)


def reset_scene(bpy: Any) -> None:
    """An empty scene that keeps the installed add-on registered.

    ``read_factory_settings`` would also reset the preferences and so disable
    the extension; ``read_homefile(use_factory_startup=True)`` loads the same
    factory startup scene and leaves add-ons alone.
    """
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)


def load(bpy: Any, character: CharacterSpec, scale: float | None = None) -> Loaded:
    """Import ``character`` into a fresh empty scene, scaled, with its clip active and held.

    scale: overrides ``character.scale``.
    """
    reset_scene(bpy)
    result = bpy.ops.import_scene.gltf(filepath=str(character.path))
    if result != {"FINISHED"}:
        raise RuntimeError(f"the glTF importer refused {character.path}")
    obj = bpy.data.objects.get(character.mesh)
    if obj is None or obj.type != "MESH":
        raise RuntimeError(f"{character.file} has no mesh object '{character.mesh}'")
    arm_mod = next((m for m in obj.modifiers if m.type == "ARMATURE" and m.object is not None), None)
    if arm_mod is None or not len(obj.vertex_groups):
        raise RuntimeError(f"'{character.mesh}' of {character.file} has no Armature modifier with vertex groups")
    armature = arm_mod.object
    notes = []
    if character.join_pieces:
        notes.append(f"joined {join_pieces(bpy, obj, armature)} bone-parented meshes into '{obj.name}'")
    action = _merged_action(bpy, armature, character.actions, f"{character.name}_clip")
    _assign_action(armature, action)
    notes += _remove_cycles(action)
    factor = character.scale if scale is None else scale
    if factor != 1.0:
        _apply_scale(bpy, [obj, armature], factor)
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    # Importers leave keys a hair off whole frames (0.9999989): round those, else widen to whole frames.
    first, last = action.frame_range
    lo, hi = character.clip or (math.floor(first + 1e-3), math.ceil(last - 1e-3))
    end = hi + math.ceil(HOLD_SECONDS * fps)
    scene.frame_start, scene.frame_end = lo, end
    scene.frame_set(lo)
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return Loaded(character, obj, armature, lo, hi, end, fps, factor, notes)


# ----------------------------------------------------------------------------------------------
# Measuring


def _world_positions(bpy: Any, obj: Any) -> np.ndarray:
    """World positions (k, 3) float64 of the evaluated mesh at the current frame."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    co = np.empty(len(ev.data.vertices) * 3, dtype=np.float32)
    ev.data.vertices.foreach_get("co", co)
    M = np.array(ev.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ M[:3, :3].T + M[:3, 3]


def _object_to_world(bpy: Any, obj: Any) -> np.ndarray:
    """The evaluated object's world matrix (4, 4) at the current frame."""
    return np.array(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world, dtype=np.float64)


def tip_vertex(obj: Any, bone: str) -> int:
    """Among the vertices bound mostly to ``bone``, the one farthest from the rest centroid."""
    group = obj.vertex_groups.get(bone)
    if group is None:
        raise RuntimeError(f"'{obj.name}' has no vertex group '{bone}'")
    mesh = obj.data
    k = len(mesh.vertices)
    co = np.empty(3 * k, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3).astype(np.float64)
    best = np.zeros(k)
    mine = np.zeros(k)
    # Group membership is only exposed per vertex: one pass at load time.
    for v in mesh.vertices:
        for g in v.groups:
            best[v.index] = max(best[v.index], g.weight)
            if g.group == group.index:
                mine[v.index] = g.weight
    candidates = np.flatnonzero((mine > 0) & (mine >= best))
    if candidates.size == 0:
        raise RuntimeError(f"no vertex of '{obj.name}' is bound mostly to '{bone}'")
    d = np.linalg.norm(co[candidates] - co.mean(axis=0), axis=1)
    return int(candidates[np.argmax(d)])


def dominant_bone(obj: Any, vertex: int) -> str:
    """The vertex group with the largest weight on ``vertex`` ('' if none)."""
    groups = list(obj.data.vertices[vertex].groups)
    if not groups:
        return ""
    return str(obj.vertex_groups[max(groups, key=lambda g: g.weight).group].name)


def offsets_percent(baked: np.ndarray, rig: np.ndarray, size: float) -> np.ndarray:
    """Per frame and vertex, |baked - rig| in % of ``size`` (the character's, as the bake summary gives it).

    baked, rig: (frames, k, 3) world positions.  Returns (frames, k); NaN where baked is NaN.
    """
    return 100.0 * np.linalg.norm(baked - rig, axis=2) / size


def bake_and_measure(bpy: Any, loaded: Loaded, work: Path) -> Measurement:
    """Bake ``loaded`` with the add-on's defaults to a .pc2 and measure it against the rig.

    work: a folder for the .blend, the point cache and the subspace cache (the
    add-on's default cache folder is next to the .blend, so nothing is reused
    from earlier runs).
    """
    api = importlib.import_module(ADDON_MODULE + ".api")
    read_pc2 = importlib.import_module(ADDON_MODULE + ".core.io.pc2").read_pc2
    scene = bpy.context.scene
    obj = loaded.obj
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{loaded.spec.name}.blend"))
    tip = tip_vertex(obj, loaded.spec.tip_bone)
    frames = (loaded.start, loaded.end)

    t0 = time.perf_counter()
    api.compute_modes(obj, scene)
    modes_seconds = time.perf_counter() - t0
    summary = api.bake(obj, frames=frames, output="PC2")
    s = api.settings(obj)

    samples, start, _rate = read_pc2(summary["files"][0])
    n = frames[1] - frames[0] + 1
    if samples.shape[0] != n or int(start) != frames[0]:
        raise RuntimeError(f"the .pc2 holds frames {start}+{samples.shape[0]}, expected {frames[0]}-{frames[1]}")
    cache = obj.modifiers.get("Skinmodes Cache")
    if cache is None:
        raise RuntimeError("the bake added no 'Skinmodes Cache' modifier")
    rig = np.empty((n, len(obj.data.vertices), 3))
    baked = np.empty_like(rig)
    cache.show_viewport = False
    try:
        for i, f in enumerate(range(frames[0], frames[1] + 1)):
            scene.frame_set(f)
            rig[i] = _world_positions(bpy, obj)
            M = _object_to_world(bpy, obj)
            baked[i] = samples[i].astype(np.float64) @ M[:3, :3].T + M[:3, 3]
    finally:
        cache.show_viewport = True
        scene.frame_set(frames[0])

    size = float(summary["character_size"])
    pct = offsets_percent(baked, rig, size)
    settled_from = loaded.stop + math.ceil(SETTLE_SECONDS * loaded.fps)
    per_frame = np.max(pct, axis=1)  # NaN propagates: a NaN frame reads as NaN
    worst_frame, worst = np.unravel_index(int(np.nanargmax(pct)), pct.shape) if np.isfinite(pct).any() else (0, 0)
    messages = [str(m) for m in summary.get("messages", [])]
    warnings = [str(m) for m in summary.get("warnings", [])]
    return Measurement(
        name=loaded.spec.name,
        role=loaded.spec.role,
        mesh=loaded.spec.mesh,
        action=loaded.armature.animation_data.action.name,
        scale=loaded.scale,
        frames=frames,
        frames_baked=int(summary["frames_baked"]),
        rig_stops=loaded.stop,
        settled_from=settled_from,
        size=size,
        vertices=len(obj.data.vertices),
        sim_vertices=int(s.stat_vertices),
        tets=int(s.stat_tets),
        clusters=int(s.stat_clusters),
        mesher=str(s.stat_mesher),
        modes_seconds=modes_seconds,
        bake_seconds=float(summary["seconds"]),
        bake_ms_per_frame=1e3 * float(summary["seconds"]) / n,
        max_offset_pct=float(np.max(per_frame)),
        first_offset_pct=float(np.max(per_frame[:2])),
        settled_offset_pct=float(np.max(per_frame[settled_from - frames[0] :])),
        nan=bool(np.isnan(samples).any()),
        messages=messages,
        warnings=warnings,
        notes=list(loaded.notes),
        tip_vertex=tip,
        worst_vertex=int(worst),
        worst_frame=frames[0] + int(worst_frame),
        worst_bone=dominant_bone(obj, int(worst)),
        offset_pct_per_frame=[float(x) for x in per_frame],
        tip_rig=rig[:, tip].tolist(),
        tip_baked=baked[:, tip].tolist(),
        relative_offsets=(baked - rig) / size,
    )


def measure(bpy: Any, character: CharacterSpec, work: Path, scale: float | None = None) -> Measurement:
    """Load ``character`` (at ``scale``, default its own) into a fresh scene, bake it with defaults, measure."""
    return bake_and_measure(bpy, load(bpy, character, scale), work)


# ----------------------------------------------------------------------------------------------
# Physics skin: volume at a bent elbow


@dataclass(frozen=True)
class ElbowSpec:
    """A joint of a character, bent from the rest pose: upper and lower bones, the angle and axis
    (the lower bone's own rotation, in degrees about its local X, Y or Z)."""

    character: str
    upper: str
    lower: str
    degrees: float = 90.0
    axis: str = "X"


# CesiumMan's left arm: upper arm Node_13, forearm Node_14, hand Node_15 (imported at x100).
ELBOW = ElbowSpec("cesium_man_x100", "Node_13", "Node_14")


def bend_elbow(bpy: Any, loaded: Loaded, elbow: ElbowSpec) -> None:
    """Hold ``loaded`` in its rest pose with ``elbow.lower`` turned: the action is unassigned
    (this is the test's own scene) and every pose bone reset, so only the elbow bends."""
    loaded.armature.animation_data.action = None
    for pb in loaded.armature.pose.bones:
        pb.rotation_mode = "XYZ"
        pb.rotation_euler = (0.0, 0.0, 0.0)
        pb.location = (0.0, 0.0, 0.0)
        pb.scale = (1.0, 1.0, 1.0)
    angles = [0.0, 0.0, 0.0]
    angles["XYZ".index(elbow.axis)] = math.radians(elbow.degrees)
    loaded.armature.pose.bones[elbow.lower].rotation_euler = angles
    bpy.context.scene.frame_set(loaded.start)


def elbow_volumes(bpy: Any, loaded: Loaded, elbow: ElbowSpec, work: Path) -> dict[str, Any]:
    """Volume change at a bent elbow, linear blend skinning against the add-on's physics skin.

    The elbow is bent (:func:`bend_elbow`), Physics Skin is turned on with every other
    setting at its default, and the add-on's own session gives the tet mesh, its weights
    and the rig of the frame.  Two regions of tets, by their skinning weights: the bent
    limb (the upper and lower bones' weights sum to more than a half) and the joint (both
    exceed 5 %: where LBS blends).  Returns % volume change of each region under LBS and
    under physics skinning, and the inverted tets of each.
    """
    api = importlib.import_module(ADDON_MODULE + ".api")
    session_mod = importlib.import_module(ADDON_MODULE + ".session")
    volumes = importlib.import_module(ADDON_MODULE + ".core.geometry.tetmesh").signed_volumes
    scene = bpy.context.scene
    work.mkdir(parents=True, exist_ok=True)
    bend_elbow(bpy, loaded, elbow)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{loaded.spec.name}_elbow.blend"))
    api.configure(loaded.obj, physics_skin=True, secondary_motion=False)
    session = session_mod.build_session(loaded.obj, scene)
    session.record(loaded.start, bpy.context.evaluated_depsgraph_get())
    p = session.rig[loaded.start]
    prepared = session.prepared
    rig = prepared.physics_rig(float(api.settings(loaded.obj).pin_depth))
    bones = list(session.binding.bones)
    Wt = rig.tet_weights
    w_up, w_low = Wt[:, bones.index(elbow.upper)], Wt[:, bones.index(elbow.lower)]
    regions = {"limb": w_up + w_low > 0.5, "joint": (w_up > 0.05) & (w_low > 0.05)}
    T, V0 = prepared.mesh.T, prepared.mesh.volumes
    out: dict[str, Any] = {"tets": {k: int(m.sum()) for k, m in regions.items()}, "pins": len(rig.skin.pins)}
    for method, x in (("lbs", rig.lbs(p)), ("physics", rig.positions(p))):
        v = volumes(x, T)
        for region, m in regions.items():
            out[f"{method}_{region}_pct"] = float(100.0 * (v[m].sum() / V0[m].sum() - 1.0))
            out[f"{method}_{region}_inverted"] = int((v[m] <= 0).sum())
    return out


# ----------------------------------------------------------------------------------------------
# Installing, and the picture of one measurement


def install_addon(work: Path) -> Any:
    """The add-on module, installed from a fresh package (BLENDER_USER_RESOURCES must already be set)."""
    return install_dev(work)


def plot_tip(m: Measurement, path: Path) -> Path:
    """A PNG of the tracked vertex: its world coordinates with and without secondary motion, and the offset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = np.arange(m.frames[0], m.frames[1] + 1)
    rig = np.asarray(m.tip_rig)
    baked = np.asarray(m.tip_baked)
    origin = rig[0]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, height_ratios=[3, 1])
    for i, (axis, colour) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"))):
        ax.plot(frames, 100 * (rig[:, i] - origin[i]) / m.size, "--", color=colour, label=f"{axis} rig only")
        ax.plot(frames, 100 * (baked[:, i] - origin[i]) / m.size, "-", color=colour, label=f"{axis} baked")
    offset = 100 * np.linalg.norm(baked - rig, axis=1) / m.size
    ax2.plot(frames, offset, color="black", label="tracked vertex")
    ax2.plot(frames, m.offset_pct_per_frame, color="grey", alpha=0.6, label="max over vertices")
    for a in (ax, ax2):
        a.axvline(m.rig_stops, color="k", lw=0.8)
        a.axvline(m.settled_from, color="k", ls=":", lw=0.8)
    ax.set_ylabel("position - first frame (% of size)")
    ax2.set_ylabel("offset (%)")
    ax2.set_xlabel("frame (solid line: rig stops; dotted: settled from)")
    ax.set_title(f"{m.name}: vertex {m.tip_vertex}, default settings\n{m.role}", fontsize=10)
    ax.legend(ncol=3, fontsize=7)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
