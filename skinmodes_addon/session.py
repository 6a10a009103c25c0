"""One simulation session per character: prepared subspace, rig samples, per-frame states.

A session is built from the object's settings (tetrahedralisation and modes
come from the on-disk cache when the inputs are unchanged), samples the rig
once per frame of the range, and answers "secondary offsets at frame f" for
the live preview and the bake alike.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import bpy
import numpy as np

from .character import RigBinding, check_object, fcurves_of, read_character, sample_rig, vertex_positions
from .core.errors import SkinmodesError
from .core.pipeline import (
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    PreparedCharacter,
    SolverSettings,
    SubspaceSettings,
    physical_scale,
    prepare_character,
)
from .core.settings import BY_NAME, SETTINGS
from .core.settings import names as setting_names
from .core.simulator import character_size
from .props import SkinmodesSettings, settings

# Names of the things skinmodes adds to a scene, so it only ever removes its own.
CACHE_MODIFIER = "Skinmodes Cache"
PREVIEW_MODIFIER = "Skinmodes Preview"
OFFSET_ATTRIBUTE = "skinmodes_offset"
SHAPE_KEY_PREFIX = "skinmodes."


def subspace_settings(s: SkinmodesSettings) -> SubspaceSettings:
    return SubspaceSettings(
        modes=s.modes,
        clusters=s.clusters,
        target_tets=s.target_tets,
        tet_method=s.tet_method.lower(),
        loose_parts=s.loose_parts.lower(),
    )


def material_settings(s: SkinmodesSettings) -> MaterialSettings:
    """What shapes the modes.  Young's modulus and density do not (the modes
    are the same for any uniform scale of either), so the model is built with
    the reference values and the solver scales them: changing them, or the
    wobble, never recomputes modes."""
    return MaterialSettings(poisson_ratio=s.poisson_ratio)


def solver_settings(s: SkinmodesSettings, scene: bpy.types.Scene) -> SolverSettings:
    """The simulation's settings.  Animated wobble and damping are read per frame
    (see :func:`control_curves`); the values here are their un-animated ones."""
    fps = scene.render.fps / scene.render.fps_base
    return SolverSettings(
        fps=fps,
        substeps=s.substeps,
        max_iterations=s.iterations,
        stiffness=s.stiffness_mode.lower(),
        wobble_hz=s.wobble_hz if control_curves(s.id_data) is None else 0.0,
        damping_ratio=s.damping_ratio if control_curves(s.id_data) is None else 0.0,
        youngs_modulus=s.youngs_modulus,
        density=s.density,
        rest_state=s.rest_state.lower(),
        preroll=s.preroll,
        reset_at_cuts=s.reset_at_cuts,
    )


ANIMATED = tuple(st.name for st in SETTINGS if st.animatable)


def control_curves(obj: bpy.types.Object) -> dict[str, bpy.types.FCurve] | None:
    """The F-curves animating the wobble or damping of ``obj``, or None when neither is animated."""
    anim = obj.animation_data
    if anim is None or anim.action is None:
        return None
    paths = {f"skinmodes.{name}": name for name in ANIMATED}
    found = {paths[fc.data_path]: fc for fc in fcurves_of(anim.action) if fc.data_path in paths}
    return found or None


def controls_of(obj: bpy.types.Object) -> Callable[[int], tuple[float, float]] | None:
    """(wobble_hz, damping_ratio) per frame for animated controls, else None (the settings' values)."""
    curves = control_curves(obj)
    if curves is None:
        return None
    s = settings(obj)
    static = {name: float(getattr(s, name)) for name in ANIMATED}
    wobble, damping = BY_NAME["wobble_hz"], BY_NAME["damping_ratio"]

    def at(frame: int) -> tuple[float, float]:
        v = {name: (curves[name].evaluate(frame) if name in curves else static[name]) for name in ANIMATED}
        # An F-curve may overshoot the slider's range between keys; keep the solver's inputs valid.
        return (
            min(max(v["wobble_hz"], wobble.minimum or 0.0), wobble.maximum or np.inf),
            min(max(v["damping_ratio"], damping.minimum or 0.0), damping.maximum or np.inf),
        )

    return at


def controls_signature(obj: bpy.types.Object) -> tuple[object, ...]:
    """The animated controls' keys, so a session notices when the animator re-keys them."""
    curves = control_curves(obj)
    if curves is None:
        return ()
    sig: list[object] = []
    for name in sorted(curves):
        pts = curves[name].keyframe_points
        co = np.zeros(6 * len(pts), dtype=np.float32)
        for attr, k in (("co", 0), ("handle_left", 1), ("handle_right", 2)):
            part = np.zeros(2 * len(pts), dtype=np.float32)
            pts.foreach_get(attr, part)
            co[2 * k * len(pts) : 2 * (k + 1) * len(pts)] = part
        sig.append((name, co.tobytes(), tuple(p.interpolation for p in pts)))
    return tuple(sig)


def cache_folder(s: SkinmodesSettings) -> Path:
    """The subspace cache folder: the setting (``//`` is next to the .blend), or a temp folder if unsaved."""
    raw = s.cache_dir or "//skinmodes_cache/"
    if raw.startswith("//") and not bpy.data.filepath:
        return Path(tempfile.gettempdir()) / "skinmodes_cache"
    return Path(bpy.path.abspath(raw))


@dataclass(frozen=True, eq=False)  # compared with matches(), never with == (it holds an array)
class Geometry:
    """The rest mesh as the session saw it: float32 positions (k, 3) and the face count."""

    positions: np.ndarray
    faces: int

    @classmethod
    def of(cls, obj: bpy.types.Object) -> Geometry:
        mesh = cast(bpy.types.Mesh, obj.data)
        return cls(vertex_positions(mesh), len(mesh.polygons))

    def matches(self, obj: bpy.types.Object) -> bool:
        """Same mesh?  Checked on every previewed frame: one copy and one compare (~20 us at 10k vertices)."""
        mesh = cast(bpy.types.Mesh, obj.data)
        return (
            len(mesh.polygons) == self.faces
            and len(mesh.vertices) == len(self.positions)
            and np.array_equal(vertex_positions(mesh), self.positions)
        )


_BUSY = [0]


@contextmanager
def busy() -> Iterator[None]:
    """While skinmodes itself changes frames (sampling, baking), its preview handler stands aside."""
    _BUSY[0] += 1
    try:
        yield
    finally:
        _BUSY[0] -= 1


def is_busy() -> bool:
    return _BUSY[0] > 0


@contextmanager
def outputs_muted(obj: bpy.types.Object) -> Iterator[None]:
    """Temporarily disable skinmodes' own modifiers and shape keys so sampling sees the rig alone."""
    saved: list[tuple[object, str, object]] = []
    for mod in obj.modifiers:
        if mod.name in (CACHE_MODIFIER, PREVIEW_MODIFIER):
            saved.append((mod, "show_viewport", mod.show_viewport))
            mod.show_viewport = False
    keys = obj.data.shape_keys
    if keys is not None:
        for kb in keys.key_blocks:
            if kb.name.startswith(SHAPE_KEY_PREFIX):
                saved.append((kb, "mute", kb.mute))
                kb.mute = True
    try:
        yield
    finally:
        for target, attr, value in reversed(saved):
            setattr(target, attr, value)


@dataclass
class Session:
    """Prepared character + rig samples + frame simulation for one object."""

    object_name: str
    binding: RigBinding
    character: CharacterInput
    prepared: PreparedCharacter
    solver: SolverSettings
    start: int
    end: int
    geometry: Geometry
    snapshot: tuple[object, ...] = ()
    rig: dict[int, np.ndarray] = field(default_factory=dict)
    to_local: dict[int, np.ndarray] = field(default_factory=dict)
    simulation: FrameSimulation | None = None

    @property
    def key(self) -> str:
        """Hash of every input of the simulation (character, subspace, solver, range)."""
        h = hashlib.sha1(self.prepared.key.encode())
        h.update(repr((self.solver, self.start, self.end)).encode())
        return h.hexdigest()

    def record(self, frame: int, depsgraph: bpy.types.Depsgraph) -> bool:
        """Store the rig of the depsgraph's (current) frame; True if it differs from the stored sample."""
        obj = bpy.data.objects[self.object_name]
        p, to_local = sample_rig(obj, self.binding, depsgraph)
        old = self.rig.get(frame)
        old_local = self.to_local.get(frame)
        self.rig[frame] = p
        self.to_local[frame] = to_local
        changed = old is None or not np.array_equal(old, p)
        if old is not None and changed and self.simulation is not None:
            self.simulation.invalidate_after(frame - 1)
        return changed or old_local is None or not np.array_equal(old_local, to_local)

    @property
    def first(self) -> int:
        """The first frame simulated: the start, or earlier with pre-roll."""
        return self.start - self.solver.preroll

    def missing_frames(self, upto: int) -> list[int]:
        return [f for f in range(self.first, min(upto, self.end) + 1) if f not in self.rig]

    def ensure_simulation(self) -> FrameSimulation:
        if self.simulation is None:
            obj = bpy.data.objects[self.object_name]
            self.simulation = FrameSimulation(
                self.prepared, self.solver, self.start, self.end, self._rig_at, controls=controls_of(obj)
            )
        return self.simulation

    def _rig_at(self, frame: int) -> np.ndarray:
        # Outside the sampled frames (only asked for the start velocity of a
        # one-frame range) the rig is held still.
        if frame in self.rig:
            return self.rig[frame]
        return self.rig[min(max(frame, min(self.rig)), max(self.rig))]

    def offsets_local(self, frame: int) -> np.ndarray:
        """Object-space secondary offsets (k, 3) of the render vertices at ``frame``."""
        if frame < self.start or frame > self.end:
            return np.zeros((len(self.character.rest), 3))
        u = self.ensure_simulation().offsets(frame)
        return u @ self.to_local[frame].T.astype(np.float32)

    def invalidate(self) -> None:
        self.rig.clear()
        self.to_local.clear()
        self.simulation = None


_SESSIONS: dict[int, Session] = {}


def session_for(obj: bpy.types.Object) -> Session | None:
    return _SESSIONS.get(obj.session_uid)


def drop_session(obj: bpy.types.Object) -> None:
    _SESSIONS.pop(obj.session_uid, None)


def clear_sessions() -> None:
    _SESSIONS.clear()


def build_session(
    obj: bpy.types.Object,
    scene: bpy.types.Scene,
    log: Callable[[str], None] | None = None,
    frames: tuple[int, int] | None = None,
) -> Session:
    """Read the character and prepare (or load from cache) its subspace.

    frames: the range to simulate (default: the object's settings).  Sets the
    scene to the first frame while reading (the rest frame is the object's
    transform there) and restores the frame after.
    """
    check_object(obj)
    s = settings(obj)
    start, end = frames if frames is not None else s.frame_range(scene)
    if end < start:
        raise SkinmodesError(f"the frame range {start}-{end} is empty; set the end frame after the start frame")
    original = scene.frame_current
    with busy():
        try:
            with outputs_muted(obj):
                scene.frame_set(start)
                inp, binding = read_character(obj, s, scene, start)
        finally:
            scene.frame_set(original)
    cache = cache_folder(s)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        writable = os.access(cache, os.W_OK)
    except OSError:
        writable = False
    prepared = prepare_character(inp, subspace_settings(s), material_settings(s), cache_dir=cache if writable else None)
    if log is not None:
        for line in prepared.messages:
            log(line)
        if not writable:
            log(f"cache folder {cache} is not writable; modes are not cached")
    session = Session(
        object_name=obj.name,
        binding=binding,
        character=inp,
        prepared=prepared,
        solver=solver_settings(s, scene),
        start=start,
        end=end,
        geometry=Geometry.of(obj),
        snapshot=settings_snapshot(s),
    )
    _SESSIONS[obj.session_uid] = session
    st = prepared.stats
    s.stat_tets = int(st["tets"])
    s.stat_vertices = int(st["vertices"])
    s.stat_modes = int(st["modes"])
    s.stat_clusters = int(st["clusters"])
    s.stat_seconds = float(
        st.get("tetrahedralize_s", 0)
        + st.get("volume_weights_s", 0)
        + st.get("subspace_s", 0)
        + st.get("embedding_s", 0)
    )
    s.stat_mesher = prepared.tets.method
    s.stat_notes = "\n".join(prepared.tets.messages)
    s.stat_size = character_size(prepared.mesh.X)
    solver = session.solver
    arap = solver.material_model == "arap" or (solver.material_model == "auto" and prepared.material.is_arap)
    s.stat_physical_hz = prepared.slowest_frequency(arap) * np.sqrt(physical_scale(prepared, solver)) / (2 * np.pi)
    s.modes_key = prepared.key
    return session


def current_session(
    obj: bpy.types.Object, scene: bpy.types.Scene, frames: tuple[int, int] | None = None
) -> Session | None:
    """The object's session if it still matches the mesh, settings and frame range, else None."""
    session = session_for(obj)
    if session is None:
        return None
    s = settings(obj)
    want = frames if frames is not None else s.frame_range(scene)
    if (
        not session.geometry.matches(obj)
        or session.solver != solver_settings(s, scene)
        or (session.start, session.end) != tuple(want)
        or session.snapshot != settings_snapshot(s)
    ):
        drop_session(obj)
        return None
    return session


def settings_snapshot(s: SkinmodesSettings) -> tuple[object, ...]:
    """Every setting that shapes the prepared character, plus the animated controls' keys.

    The character's settings come from core/settings.py (stage "character");
    the solver's are compared through :func:`solver_settings`.
    """
    return (*(getattr(s, name) for name in setting_names("character")), controls_signature(s.id_data))


def sample_range(session: Session, scene: bpy.types.Scene, frames: list[int]) -> None:
    """Sample the rig at ``frames`` with one frame_set each, restoring the current frame."""
    if not frames:
        return
    obj = bpy.data.objects[session.object_name]
    original = scene.frame_current
    with busy():
        try:
            with outputs_muted(obj):
                for f in frames:
                    scene.frame_set(f)
                    session.record(f, bpy.context.evaluated_depsgraph_get())
        finally:
            scene.frame_set(original)
