"""One simulation session per character: prepared subspace, rig samples, per-frame states.

A session is built from the object's settings (tetrahedralisation and modes
come from the on-disk cache when the inputs are unchanged), samples the rig
once per frame of the range, and answers "secondary offsets at frame f" for
the live preview and the bake alike.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import bpy
import numpy as np

from .character import (
    RigBinding,
    armature_input,
    armature_modifier,
    check_object,
    check_stable_topology,
    fcurves_of,
    flat_mesh_error,
    nan_weights_error,
    read_character,
    sample_rig,
    stack_signature,
    vertex_group_weights,
    vertex_positions,
)
from .core.dynamics.simulator import character_size
from .core.dynamics.simulator import uses_arap as simulator_uses_arap
from .core.errors import CacheError, MeshError, SkinmodesError, SubspaceError
from .core.io.pc2 import check_writable
from .core.pipeline import (
    Cancelled,
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    PreparedCharacter,
    SolverSettings,
    SubspaceSettings,
    check_frame_range,
    physical_scale,
    prepare_character,
    prepare_pose_space,
)
from .core.settings import BY_NAME, SETTINGS, core_values
from .core.settings import names as setting_names
from .props import SkinmodesSettings, default_cache_dir, settings
from .threads import one_blas_thread

# Names of the things skinmodes adds to a scene, so it only ever removes its own.
CACHE_MODIFIER = "Skinmodes Cache"
PREVIEW_MODIFIER = "Skinmodes Preview"
OFFSET_ATTRIBUTE = "skinmodes_offset"
SHAPE_KEY_PREFIX = "skinmodes."


def subspace_settings(s: SkinmodesSettings) -> SubspaceSettings:
    return SubspaceSettings(**core_values(SubspaceSettings, lambda name: getattr(s, name)))  # type: ignore[arg-type]


def material_settings(s: SkinmodesSettings) -> MaterialSettings:
    """What shapes the modes.  Young's modulus and density do not (the modes
    are the same for any uniform scale of either), so the model is built with
    the reference values and the solver scales them: changing them, or the
    wobble, never recomputes modes."""
    values = core_values(MaterialSettings, lambda name: getattr(s, name))
    return MaterialSettings(poisson_ratio=values["poisson_ratio"])  # type: ignore[arg-type]


def solver_settings(s: SkinmodesSettings, scene: bpy.types.Scene) -> SolverSettings:
    """The simulation's settings.  Animated wobble and damping are read per frame
    (see :func:`controls_of`); here they are 0, so the value Blender shows at the
    current frame does not make the session look stale while scrubbing."""
    fps = scene.render.fps / scene.render.fps_base
    animated = control_curves(s.id_data) is not None
    values = core_values(SolverSettings, lambda name: getattr(s, name))
    if animated:  # read per frame from their F-curves: a keyed value must not make the session stale
        values.update(wobble_hz=0.0, damping_ratio=0.0)
    return SolverSettings(fps=fps, **values)  # type: ignore[arg-type]


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


def bones_signature(obj: bpy.types.Object) -> bytes:
    """The rest pose of the armature deforming ``obj`` (every bone's head and tail, armature space):
    moving a bone in Edit Mode moves the physics skin's pins, so the session must notice."""
    mod = armature_modifier(obj)
    if mod is None or mod.object is None:
        return b""
    bones = mod.object.data.bones
    buf = np.empty(6 * len(bones), dtype=np.float32)
    heads, tails = buf[: 3 * len(bones)], buf[3 * len(bones) :]
    bones.foreach_get("head_local", heads)
    bones.foreach_get("tail_local", tails)
    return buf.tobytes()


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


_UNSAVED_FOLDER: list[Path] = []


def unsaved_folder() -> Path:
    """This process's own folder for the caches of unsaved files: made once, removed when the process ends.

    Never a fixed name in the system temp folder: two users (or two sessions)
    would share, and overwrite, each other's caches there.
    """
    if not _UNSAVED_FOLDER:
        path = Path(tempfile.mkdtemp(prefix="skinmodes-unsaved-"))
        atexit.register(shutil.rmtree, path, True)
        _UNSAVED_FOLDER.append(path)
    return _UNSAVED_FOLDER[0]


def cache_folder(s: SkinmodesSettings) -> Path:
    """The cache folder the setting names, as an absolute path.

    ``//`` and relative paths are relative to the .blend's folder (an unsaved
    file has none: they go to :func:`unsaved_folder`), ``~`` is the home
    folder, absolute paths are taken as they are.  The working directory
    never matters: Blender's own ``bpy.path.abspath`` would resolve
    ``//`` of an unsaved file, and plain relative paths, against it.
    """
    raw = s.cache_dir or default_cache_dir()
    if raw.startswith("~"):
        return Path(os.path.normpath(os.path.expanduser(raw)))
    if not raw.startswith("//") and os.path.isabs(raw):
        return Path(os.path.normpath(raw))
    base = Path(bpy.data.filepath).parent if bpy.data.filepath else unsaved_folder()
    return Path(os.path.normpath(base / raw.removeprefix("//")))


@dataclass(frozen=True, eq=False)  # compared with matches(), never with == (it holds an array)
class Geometry:
    """The rest mesh as the session saw it: float32 positions (k, 3), the face count, and the settings
    of the modifiers above the Armature modifier (they shape the simulated mesh, see character.py)."""

    positions: np.ndarray
    faces: int
    stack: tuple[object, ...] = ()

    @classmethod
    def of(cls, obj: bpy.types.Object) -> Geometry:
        mesh = cast(bpy.types.Mesh, obj.data)
        return cls(vertex_positions(mesh), len(mesh.polygons), stack_signature(obj))

    def matches(self, obj: bpy.types.Object) -> bool:
        """Same mesh?  Checked on every previewed frame: one copy and one compare (~20 us at 10k vertices)."""
        mesh = cast(bpy.types.Mesh, obj.data)
        return (
            len(mesh.polygons) == self.faces
            and len(mesh.vertices) == len(self.positions)
            and np.array_equal(vertex_positions(mesh), self.positions)
            and stack_signature(obj) == self.stack
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
    poses: tuple[PoseRequest, ...] = ()
    poses_stale: bool = False  # the rig changed at a training pose's frame since its modes

    @property
    def key(self) -> str:
        """Hash of every input of the simulation (character, subspace, solver, range, training poses)."""
        h = hashlib.sha1(self.prepared.key.encode())
        h.update(repr((self.solver, self.start, self.end)).encode())
        for pose in self.poses:
            h.update(repr((pose.frame, pose.kind)).encode())
            h.update(np.ascontiguousarray(pose.p).tobytes())
            if isinstance(pose.contact, np.ndarray):
                h.update(np.ascontiguousarray(pose.contact).tobytes())
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
        if any(pose.frame == frame and not np.array_equal(pose.p, p) for pose in self.poses):
            self.poses_stale = True  # that pose's modes were computed for another rig pose
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
                self.prepared,
                self.solver,
                self.start,
                self.end,
                self._rig_at,
                controls=controls_of(obj),
                bone_names=self.binding.bones,
                posespace=self.prepared.posespace,
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
        with one_blas_thread():  # the solver's small dense steps: threads only add hand-offs
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


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class PoseRequest:
    """A training pose as read on the main thread: its frame, rig parameters (12 b,), contact kind
    ("AUTO", "GROUP", "NONE") and the contact as the pipeline takes it ("auto", a mask (k,), None)."""

    frame: int
    p: np.ndarray
    kind: str
    contact: str | np.ndarray | None


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class SessionRequest:
    """Everything :func:`prepare` needs, read out of Blender on the main thread.

    Plain Python and numpy data only, so it can be handed to a worker thread:
    bpy is not thread-safe, and nothing after :func:`read_request` touches it
    until :func:`install_session`.
    """

    object_name: str
    object_uid: int
    character: CharacterInput
    binding: RigBinding
    subspace: SubspaceSettings
    material: MaterialSettings
    cache: Path | None  # None: the cache folder is not writable
    cache_note: str  # why there is no cache, or ""
    solver: SolverSettings
    start: int
    end: int
    geometry: Geometry
    snapshot: tuple[object, ...]
    poses: tuple[PoseRequest, ...] = ()


def read_poses(
    obj: bpy.types.Object, s: SkinmodesSettings, scene: bpy.types.Scene, binding: RigBinding, start: int
) -> tuple[PoseRequest, ...]:
    """The object's training poses: the rig sampled at each pose's frame, and its contact (main thread;
    the caller has muted skinmodes' outputs and restores the frame).  Refuses, in one line naming the
    pose, a frame used twice, the rest frame and a missing or NaN contact group."""
    out: list[PoseRequest] = []
    seen: set[int] = set()
    for pose in s.poses:
        f = int(pose.frame)
        if f in seen:
            raise SkinmodesError(f"frame {f} is a training pose twice; remove one of them in the Pose-Space panel")
        if f == start:
            raise SkinmodesError(
                f"frame {f} is the rest frame (the start of the frame range; pre-roll comes before it), "
                "always pose 0; remove it from the training poses"
            )
        seen.add(f)
        contact: str | np.ndarray | None = None
        if pose.contact == "AUTO":
            contact = "auto"
        elif pose.contact == "GROUP":
            name = pose.contact_group
            if not name or obj.vertex_groups.get(name) is None:
                raise SkinmodesError(
                    f"the contact group '{name}' of the pose at frame {f} is not a vertex group of '{obj.name}'; "
                    "pick one or set its contact to Automatic"
                )
            with armature_input(obj) as obj_in:
                contact = vertex_group_weights(obj_in, [name])[:, 0]
            if not np.isfinite(contact).all():
                raise nan_weights_error(obj, name, f"the contact group of the pose at frame {f}")
        scene.frame_set(f)
        p, _ = sample_rig(obj, binding, bpy.context.evaluated_depsgraph_get())
        out.append(PoseRequest(frame=f, p=p, kind=str(pose.contact), contact=contact))
    return tuple(out)


def poses_signature(s: SkinmodesSettings) -> tuple[object, ...]:
    """The training poses as the settings hold them: what makes a session's pose-space modes stale."""
    return tuple((int(p.frame), str(p.contact), str(p.contact_group) if p.contact == "GROUP" else "") for p in s.poses)


def read_request(
    obj: bpy.types.Object, scene: bpy.types.Scene, frames: tuple[int, int] | None = None
) -> SessionRequest:
    """Read the character and its settings (main thread).

    frames: the range to simulate (default: the object's settings).  Sets the
    scene to the first frame while reading (the rest frame is the object's
    transform there) and restores the frame after.  Creates nothing on disk:
    the cache folder is made when the first cache file is written.
    """
    check_object(obj)
    s = settings(obj)
    start, end = check_frame_range(*(frames if frames is not None else s.frame_range(scene)))
    original = scene.frame_current
    with busy():
        try:
            with outputs_muted(obj):
                # Refused up front, before any heavy work; ends on the start frame, the rest frame.
                check_stable_topology(obj, scene, (end, (start + end) // 2, start))
                scene.frame_set(start)
                inp, binding = read_character(obj, s, scene, start)
                poses = read_poses(obj, s, scene, binding, start)
        finally:
            scene.frame_set(original)
    cache: Path | None = cache_folder(s)
    note = ""
    try:
        check_writable(cast(Path, cache), create=False)
    except CacheError:
        note = f"cache folder {cache} is not writable; modes are not cached"
        cache = None
    return SessionRequest(
        object_name=obj.name,
        object_uid=obj.session_uid,
        character=inp,
        binding=binding,
        subspace=subspace_settings(s),
        material=material_settings(s),
        cache=cache,
        cache_note=note,
        solver=solver_settings(s, scene),
        start=start,
        end=end,
        geometry=Geometry.of(obj),
        snapshot=settings_snapshot(s),
        poses=poses,
    )


def prepare(
    request: SessionRequest,
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> PreparedCharacter:
    """Mesh, volume weights, modes, clusters, products and embedding (or the cache's): no bpy, any thread."""
    # The character's stages take the first 92 % of the time; the slowest frequency (a dense
    # eigenproblem, up to ~2 s on 2 cores) the rest.  It is found here, off the main thread,
    # because the panel and the first simulated frame both ask for it.
    share = 0.92

    def stage(name: str, fraction: float) -> None:
        if progress is not None and name != "done":
            progress(name, share * fraction)

    try:
        prepared = prepare_character(
            request.character,
            request.subspace,
            request.material,
            cache_dir=request.cache,
            progress=stage,
            cancelled=cancelled,
        )
    except MeshError as exc:
        said = flat_mesh_error(request.object_name, exc)
        if said is exc:
            raise
        raise said from exc
    if progress is not None:
        progress("slowest frequency", share)
    try:
        prepared.slowest_frequency(uses_arap(request.solver, prepared))
    except np.linalg.LinAlgError as exc:  # the reduced mass matrix is singular: modes that repeat each other
        raise SubspaceError(
            f"the {request.subspace.modes} modes of '{request.object_name}' are not independent on a mesh of "
            f"{prepared.mesh.t} tets ({exc}); lower the number of modes or raise the tet resolution"
        ) from exc
    poses = request.poses
    if poses:

        def pose_progress(done: int, total: int) -> None:
            if progress is not None:
                progress(f"pose-space modes ({done}/{total} poses)", share + (1.0 - share) * done / max(total, 1))

        prepared.posespace = prepare_pose_space(
            prepared,
            np.array([pose.p for pose in poses]),
            frames=[pose.frame for pose in poses],
            contacts=[pose.contact for pose in poses],
            progress=pose_progress,
            cancelled=cancelled,
        )
    if progress is not None:
        progress("done", 1.0)
    return prepared


def uses_arap(solver: SolverSettings, prepared: PreparedCharacter) -> bool:
    """Whether the simulation will use the ARAP energy (else linear co-rotational): the solver's own rule."""
    return simulator_uses_arap(solver.material_model, prepared.model)


def install_session(
    obj: bpy.types.Object,
    request: SessionRequest,
    prepared: PreparedCharacter,
    log: Callable[[str], None] | None = None,
) -> Session:
    """Make ``prepared`` the object's session and show its figures in the panel (main thread)."""
    if log is not None:
        for line in prepared.messages:
            log(line)
        if request.cache_note:
            log(request.cache_note)
    session = Session(
        object_name=obj.name,
        binding=request.binding,
        character=request.character,
        prepared=prepared,
        solver=request.solver,
        start=request.start,
        end=request.end,
        geometry=request.geometry,
        snapshot=request.snapshot,
        poses=request.poses,
    )
    _SESSIONS[obj.session_uid] = session
    s = settings(obj)
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
    omega0 = prepared.slowest_frequency(uses_arap(solver, prepared))
    s.stat_physical_hz = omega0 * np.sqrt(physical_scale(prepared, solver)) / (2 * np.pi)
    s.modes_key = prepared.key
    return session


# Signals (SIGINT, SIGTERM) received while the CLI runs, appended by its signal
# handler.  The handler never raises where the signal lands (an exception
# between two bytecodes can orphan a half-made temporary file, and Blender
# swallows exceptions raised in its own callbacks); the work stops at the
# next checkpoint instead: between preparation stages and between frames.
STOP_REQUESTS: list[int] = []


# Listeners told (stage, fraction done) as a build in the calling thread goes: the CLI prints them,
# so a long Compute Modes is never silent (the modal one shows its own progress).
PROGRESS_LISTENERS: list[Callable[[str, float], None]] = []


def report_progress(stage: str, fraction: float) -> None:
    for listener in list(PROGRESS_LISTENERS):
        listener(stage, fraction)


def build_session(
    obj: bpy.types.Object,
    scene: bpy.types.Scene,
    log: Callable[[str], None] | None = None,
    frames: tuple[int, int] | None = None,
) -> Session:
    """Read the character and prepare (or load from cache) its subspace, in the calling thread.

    The modal Compute Modes and the first Live Preview run the same three
    steps with :func:`prepare` on a worker thread (:class:`ModesJob`).
    """
    report_progress("reading the character", 0.0)
    request = read_request(obj, scene, frames)
    prepared = prepare(request, progress=report_progress, cancelled=lambda: bool(STOP_REQUESTS))
    return install_session(obj, request, prepared, log)


class ModesJob:
    """:func:`prepare` on a daemon worker thread, polled from Blender's main thread.

    numpy and scipy release the GIL in their heavy calls, so Blender stays
    responsive.  The worker never touches bpy.  It cannot be killed:
    :meth:`cancel` makes it stop at the next stage (see ``prepare_character``)
    and its result is thrown away.  ``stage`` and ``fraction`` are written by
    the worker and read by the main thread (single attribute stores: atomic
    under the GIL).
    """

    def __init__(self, request: SessionRequest) -> None:
        self.request = request
        self.for_preview = False  # started by Live Preview, which cancels it when turned off
        self.stage = "starting"
        self.fraction = 0.0
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._prepared: PreparedCharacter | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"skinmodes modes: {request.object_name}", daemon=True)
        self._thread.start()

    def _progress(self, stage: str, fraction: float) -> None:
        self.stage, self.fraction = stage, fraction

    def _run(self) -> None:
        try:
            self._prepared = prepare(self.request, self._progress, self._stop.is_set)
        except BaseException as exc:  # handed to the main thread by result()
            self._error = exc

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def cancel(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker ends (or ``timeout`` seconds); True if it has."""
        self._thread.join(timeout)
        return self.done

    def result(self) -> PreparedCharacter:
        """The prepared character; re-raises the worker's exception (Cancelled after :meth:`cancel`)."""
        if not self.done:
            raise RuntimeError("the modes are still being computed")
        if self._error is not None:
            raise self._error
        if self._stop.is_set():
            raise Cancelled("computing modes was cancelled; nothing was changed")
        assert self._prepared is not None
        return self._prepared


_JOBS: dict[int, ModesJob] = {}


def start_job(obj: bpy.types.Object, scene: bpy.types.Scene, frames: tuple[int, int] | None = None) -> ModesJob:
    """Read ``obj`` here (main thread) and prepare it on a worker thread; one job per object at a time."""
    if running_job(obj) is not None:
        raise SkinmodesError(f"the modes of '{obj.name}' are already being computed; wait, or press Esc to stop")
    job = ModesJob(read_request(obj, scene, frames))
    _JOBS[obj.session_uid] = job
    return job


def running_job(obj: bpy.types.Object) -> ModesJob | None:
    """The object's job, unless there is none or it was cancelled."""
    job = _JOBS.get(obj.session_uid)
    return None if job is None or job.cancelled else job


def forget_job(job: ModesJob) -> None:
    """Take ``job`` out of the registry (it was finished, failed or cancelled): a new one may start."""
    if _JOBS.get(job.request.object_uid) is job:
        del _JOBS[job.request.object_uid]


def finish_job(job: ModesJob, log: Callable[[str], None] | None = None) -> Session:
    """Install a finished job's session (main thread); raises the worker's error, or SkinmodesError
    if the object is gone.  The job is forgotten either way."""
    try:
        prepared = job.result()
        obj = object_by_uid(job.request.object_uid)
        if obj is None:
            raise SkinmodesError(
                f"'{job.request.object_name}' was deleted while its modes were computed; nothing was changed"
            )
        if settings_snapshot(settings(obj)) != job.request.snapshot:
            # The result is for the old settings: showing its figures would claim them for the new ones.
            raise SkinmodesError(
                f"the settings of '{obj.name}' changed while its modes were computed; nothing was changed: "
                "Compute Modes again"
            )
        return install_session(obj, job.request, prepared, log)
    finally:
        forget_job(job)


def cancel_jobs() -> None:
    """Stop every job (a new file was loaded: their objects are gone)."""
    for job in list(_JOBS.values()):
        job.cancel()
    _JOBS.clear()


def object_by_uid(uid: int) -> bpy.types.Object | None:
    return next((o for o in bpy.data.objects if o.session_uid == uid), None)


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
        or session.poses_stale
    ):
        drop_session(obj)
        return None
    return session


def settings_snapshot(s: SkinmodesSettings) -> tuple[object, ...]:
    """Every setting that shapes the prepared character, the animated controls' keys, the training
    poses and the armature's rest pose.

    The character's settings come from core/settings.py (stage "character");
    the solver's are compared through :func:`solver_settings`.
    """
    return (
        *(getattr(s, name) for name in setting_names("character")),
        controls_signature(s.id_data),
        poses_signature(s),
        bones_signature(s.id_data),
    )


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
