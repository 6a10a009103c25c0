"""One simulation session per character: prepared subspace, rig samples, per-frame states.

A session is built from the object's settings (tetrahedralisation and modes
come from the on-disk cache when the inputs are unchanged), samples the rig
once per frame of the range, and answers "secondary offsets at frame f" for
the live preview and the bake alike.  The sessions themselves are kept in
``registry.SESSIONS``, one per object.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ..character import RigBinding, column_names, sample_rig
from ..core.dynamics.drive import Drive
from ..core.dynamics.wobble import scaled_frequency
from ..core.geometry.size import character_size
from ..core.locomotion.stored import StoredGait
from ..core.pipeline import (
    CharacterInput,
    FrameSimulation,
    PreparedCharacter,
    SolverSettings,
    locomotion_drive,
    physical_scale,
    rotstrain_drive,
)
from ..props import settings
from ..registry import SESSIONS
from ..threads import one_blas_thread
from .core_settings import controls_of, solver_settings
from .muting import busy, outputs_muted
from .prepare import prepare, uses_arap
from .request import PoseRequest, SessionRequest, read_request, stored_gait_text
from .signals import report_progress, stop_requested
from .staleness import Geometry, settings_snapshot


def playing_gait(obj: bpy.types.Object) -> str:
    """The gait the object's simulation plays: its stored gait's JSON with Locomotion on, else ""."""
    return stored_gait_text(obj) if settings(obj).locomotion else ""


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
    subspace_method: str = "SKINNING"  # an object rig's drive: "ROTATION_STRAIN" for rotation-strain (issue 27)
    gait: str = ""  # the stored gait it plays (playing_gait), or "" (issue 26)

    @property
    def key(self) -> str:
        """Hash of every input of the simulation (character, subspace, solver, range, training poses)."""
        h = hashlib.sha1(self.prepared.key.encode())
        h.update(repr((self.solver, self.start, self.end)).encode())
        if self.subspace_method != "SKINNING":  # another drive, another result (characters' keys unchanged)
            h.update(self.subspace_method.encode())
        if self.gait:  # a gait moves it instead of its rig
            h.update(self.gait.encode())
        for pose in self.poses:
            h.update(repr((pose.frame, pose.kind)).encode())
            h.update(np.ascontiguousarray(pose.p).tobytes())
            if isinstance(pose.contact, np.ndarray):
                h.update(np.ascontiguousarray(pose.contact).tobytes())
            if pose.one_sided:  # only then: a Stick pose's key stays what it was
                h.update(b"one-sided")
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
            drive: Drive[Any] | None = None  # the character's own (core.pipeline.character_drive)
            if self.subspace_method == "ROTATION_STRAIN":  # an object rig's option (read_request refuses it otherwise)
                drive = rotstrain_drive(self.prepared, self.solver, self._rig_at, settings(obj).modes)
            if self.gait:  # a stored gait, Locomotion on: it crawls from the first simulated frame
                gait = StoredGait.from_json(self.gait)
                drive = locomotion_drive(self.prepared, self.solver, gait, self.first, f"'{self.object_name}'")
            self.simulation = FrameSimulation(
                self.prepared,
                self.solver,
                self.start,
                self.end,
                self._rig_at,
                controls=controls_of(obj),
                column_names=column_names(self.binding, self.object_name),
                posespace=self.prepared.posespace,
                drive=drive,
            )
        return self.simulation

    def _rig_at(self, frame: int) -> np.ndarray:
        # Outside the sampled frames (only asked for the start velocity of a
        # one-frame range) the rig is held still.
        if frame in self.rig:
            return self.rig[frame]
        return self.rig[min(max(frame, min(self.rig)), max(self.rig))]

    def offsets_local(self, frame: int, body: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """Object-space secondary offsets (k, 3) of the render vertices at ``frame``.

        body: a whole character's offsets per frame (n, 3), shared by its meshes' bakes (``share_key``): read
        from it when it has the frame, else simulated and added to it.
        """
        if frame < self.start or frame > self.end:
            return np.zeros((self.vertex_count, 3))
        if body is not None and frame in body:
            u = body[frame]
        else:
            with one_blas_thread():  # the solver's small dense steps: threads only add hand-offs
                u = self.ensure_simulation().offsets(frame)
            if body is not None:
                body[frame] = u
        return self.binding.own(u) @ self.to_local[frame].T.astype(np.float32)

    def share_key(self) -> tuple[object, ...] | None:
        """What makes two meshes' bakes the same simulation: a whole character's members with the same
        inputs (the session key), the same body in the same frame, and no animated controls (each mesh
        keys its own); None when the bake must simulate on its own."""
        if not self.binding.frame_object or controls_of(bpy.data.objects[self.object_name]) is not None:
            return None
        return (self.key, self.binding.frame_object, self.binding.members)

    @property
    def vertex_count(self) -> int:
        """The object's own render vertices (a whole character's body holds its other meshes' too)."""
        return len(self.binding.own(self.character.rest))

    def invalidate(self) -> None:
        self.rig.clear()
        self.to_local.clear()
        self.simulation = None


def session_for(obj: bpy.types.Object) -> Session | None:
    return SESSIONS.get(obj.session_uid)


def drop_session(obj: bpy.types.Object) -> None:
    SESSIONS.pop(obj.session_uid, None)


def clear_sessions() -> None:
    SESSIONS.clear()


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
        for line in request.notes:
            log(line)
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
    SESSIONS[obj.session_uid] = session
    s = settings(obj)
    session.subspace_method = str(s.subspace_method)  # part of the settings snapshot: a change drops the session
    session.gait = playing_gait(obj)  # compared by current_session: a new gait drops the session
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
    s.stat_physical_hz = scaled_frequency(omega0, physical_scale(prepared, solver)) / (2 * np.pi)
    s.modes_key = prepared.key
    return session


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
    prepared = prepare(request, progress=report_progress, cancelled=stop_requested)
    return install_session(obj, request, prepared, log)


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
        or session.gait != playing_gait(obj)
    ):
        drop_session(obj)
        return None
    return session


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
