"""Operators: Compute Modes and Bake (modal from the UI, Esc cancels), Clear Bake, Create Editable Mask, Show Mode.

Compute Modes from the UI reads the character on the main thread, prepares it
on a worker thread (session.jobs.ModesJob) and installs the session when a timer
finds it done; Live Preview starts the same job.  ``execute`` (scripts,
headless) does the same steps in the calling thread.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, cast

import bpy
import numpy as np

from . import preview
from .bake.character_job import CharacterBake
from .bake.job import BakeJob
from .bake.outputs import clear_bake, clear_character
from .character import (
    armature_meshes,
    armature_modifier,
    character_meshes,
    is_object_rig,
    renumbering_modifiers,
    vertex_group_weights,
)
from .core.errors import SkinmodesError
from .core.geometry.embedding import interpolate
from .props import active_mesh, scene_of, settings
from .registry import SHADING_BEFORE
from .session.jobs import ModesJob, finish_job, forget_job, running_job, start_job
from .session.modal import WorkerOperator, end_modal_ui, error_line
from .session.session import Session, build_session, current_session, object_by_uid

MODE_ATTRIBUTE = "skinmodes_mode"

# An operator's execute(self, context) or invoke(self, context, event).
Method = Callable[..., set[str]]


def reports_errors(failed: str | None = None) -> Callable[[Method], Method]:
    """Decorate an operator's ``execute`` or ``invoke``: an error becomes one ERROR report and CANCELLED.

    A SkinmodesError is always caught; with ``failed`` (what the operator does,
    e.g. "bake"), any other Exception too, worded by :func:`error_line`.
    Interrupts (KeyboardInterrupt, SystemExit) pass through.
    """
    caught: type[Exception] = Exception if failed else SkinmodesError

    def cancel(op: bpy.types.Operator, exc: Exception) -> set[str]:
        op.report({"ERROR"}, error_line(exc, failed or op.bl_label))
        return {"CANCELLED"}

    def decorate(method: Method) -> Method:
        # Blender checks the argument count of execute (2) and invoke (3): each wrapper keeps its method's.
        if method.__code__.co_argcount == 3:

            @functools.wraps(method)
            def invoke(self: bpy.types.Operator, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
                try:
                    return method(self, context, event)
                except caught as exc:
                    return cancel(self, exc)

            return invoke

        @functools.wraps(method)
        def execute(self: bpy.types.Operator, context: bpy.types.Context) -> set[str]:
            try:
                return method(self, context)
            except caught as exc:
                return cancel(self, exc)

        return execute

    return decorate


def _skinned_mesh_poll(cls: type, context: bpy.types.Context) -> bool:
    # context.active_object, not active_mesh(): a poll must answer False, never raise.
    obj = context.active_object
    if obj is None or obj.type != "MESH" or context.mode != "OBJECT":
        cls.poll_message_set("Select a mesh in Object Mode")  # type: ignore[attr-defined]
        return False
    if armature_modifier(obj) is None and not is_object_rig(obj):  # an Armature modifier with no armature
        cls.poll_message_set(  # type: ignore[attr-defined]
            "Pick the armature in the Armature modifier, or remove it to use the object's own motion"
        )
        return False
    return True


def _report_modes(op: bpy.types.Operator, obj: bpy.types.Object, session: Session) -> None:
    st = session.prepared.stats
    op.report(
        {"INFO"},
        f"{int(st['tets'])} tets, {int(st['modes'])} modes, {int(st['clusters'])} clusters "
        f"in {settings(obj).stat_seconds:.1f} s ({session.prepared.tets.method})",
    )


class SKINMODES_OT_compute_modes(WorkerOperator):
    """Tetrahedralise the mesh and compute its skinning eigenmodes and clusters (Esc cancels)"""

    bl_idname = "skinmodes.compute_modes"
    bl_label = "Compute Modes"
    bl_options = {"REGISTER", "UNDO"}

    for_preview: bpy.props.BoolProperty(  # type: ignore[valid-type]
        name="For Live Preview",
        description="Started by Live Preview: turning the preview off cancels it",
        options={"HIDDEN", "SKIP_SAVE"},
    )

    doing = "computing modes"
    _job: ModesJob | None = None

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or not _skinned_mesh_poll(cls, context):
            return False
        if running_job(obj) is not None:
            cls.poll_message_set("The modes are being computed; Esc stops")  # type: ignore[attr-defined]
            return False
        return True

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        """Synchronous (scripts, headless): the same steps as the modal job, in this thread."""
        obj = active_mesh(context)
        context.window_manager.progress_begin(0, 1)
        try:
            session = build_session(obj, scene_of(context), log=lambda m: self.report({"INFO"}, m))
        finally:
            context.window_manager.progress_end()
        _report_modes(self, obj, session)
        return {"FINISHED"}

    @reports_errors()
    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        """From the UI: read the character here, prepare it on a worker thread, poll it on a timer."""
        if bpy.app.background or context.window is None:
            return self.execute(context)
        obj = active_mesh(context)
        try:
            job = start_job(obj, scene_of(context))
        except SkinmodesError as exc:
            preview.give_up(obj.session_uid, str(exc))  # a Live Preview waiting for these modes stops waiting
            raise
        job.for_preview = self.for_preview
        return self._start_modal(context, job)

    def _status(self, job: ModesJob) -> str:
        what = "Live Preview: computing modes" if self.for_preview else "Computing modes"
        return f"{what} of {job.request.object_name}: {job.stage}"

    def _succeeded(self, context: bpy.types.Context, job: ModesJob) -> None:
        obj = object_by_uid(job.request.object_uid)
        session = finish_job(job, log=lambda m: self.report({"INFO"}, m))
        assert obj is not None  # finish_job raised otherwise
        _report_modes(self, obj, session)
        if settings(obj).live_preview:
            preview.refresh(obj, scene_of(context))

    def _forget(self, job: ModesJob) -> None:
        forget_job(job)

    def _gave_up(self, job: ModesJob, why: str) -> None:
        preview.give_up(job.request.object_uid, why)  # a Live Preview waiting for these modes stops waiting

    def _abandoned(self, job: ModesJob) -> bool:
        return job.cancelled  # Live Preview was turned off


def _report_bake(op: bpy.types.Operator, job: BakeJob) -> None:
    """One line on success, or the guard's first warning: a bake that looks wrong never passes silently."""
    if job.warnings:
        more = f" (+{len(job.warnings) - 1} more)" if len(job.warnings) > 1 else ""
        op.report({"WARNING"}, job.warnings[0] + more)
    else:
        op.report({"INFO"}, f"baked {job.frames_done} frames in {job.seconds:.1f} s")


def _output_property() -> Any:
    return bpy.props.EnumProperty(
        name="Output",
        items=[("SETTINGS", "From Settings", ""), ("PC2", "Point Cache", ""), ("SHAPE_KEYS", "Shape Keys", "")],
        default="SETTINGS",
    )


class _BakeModal:
    """The bake operators' work: a job run in slices from a timer (Esc cancels), or at once without a window.

    A mixin, not an operator: Blender registers each operator class on its own, and a registered operator
    must not be the base of another."""

    output: str
    report: Any
    _job: BakeJob | None = None
    _steps = None
    _timer = None

    def _make_job(self, context: bpy.types.Context) -> BakeJob:
        out = None if self.output == "SETTINGS" else self.output
        return BakeJob(context, active_mesh(context), output=out)

    @reports_errors("bake")
    def execute(self, context: bpy.types.Context) -> set[str]:
        """Synchronous bake (headless, scripts)."""
        job = self._make_job(context).run()
        self._report(job)
        return {"FINISHED"}

    @reports_errors("bake")
    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        """From the UI: bake in slices from a timer (Esc cancels); without a window, the synchronous bake."""
        if bpy.app.background or context.window is None:
            return self.execute(context)
        return self._start_modal(context, self._make_job(context))

    def _status(self, job: BakeJob) -> str:
        return f"Baking secondary motion: frame {job.start + job.frames_done - 1} of {job.end}… Esc to cancel"

    def _report(self, job: BakeJob) -> None:
        _report_bake(cast(bpy.types.Operator, self), job)

    def _start_modal(self, context: bpy.types.Context, job: BakeJob) -> set[str]:
        """Run ``job`` from this operator's modal: progress bar, a timer for the slices, the handler, the status."""
        self._job = job
        self._steps = self._job.steps()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(cast(bpy.types.Operator, self))
        context.workspace.status_text_set("Baking secondary motion… Esc to cancel")
        return {"RUNNING_MODAL"}

    def _finish(self, context: bpy.types.Context) -> None:
        """Leave nothing behind, each step even if another fails: the timer, the progress bar, the status text."""
        timer, self._timer = self._timer, None
        end_modal_ui(context, timer)

    def cancel(self, context: bpy.types.Context) -> None:
        """Blender ends the modal (a file is loaded, the window closes): drop the bake as Esc does, quietly.

        The job's cancel removes the .partial file and restores the frame and the muted outputs (a no-op
        once committed); the previous bake is untouched.  The cleanup runs even if the cancel raises.
        """
        try:
            if self._job is not None:
                self._job.cancel()
        finally:
            self._finish(context)

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        job = self._job
        assert job is not None and self._steps is not None
        if event.type not in ("ESC", "TIMER"):
            return {"PASS_THROUGH"}
        done = True  # every return but "keep running" cleans up, whatever is raised
        try:
            if event.type == "ESC":
                job.cancel()
                self.report({"WARNING"}, "bake cancelled; nothing was changed")
                return {"CANCELLED"}
            deadline = 0.05  # seconds of work per timer tick keeps the UI responsive
            t0 = time.perf_counter()
            try:
                while time.perf_counter() - t0 < deadline:
                    fraction = next(self._steps)
                    context.window_manager.progress_update(int(100 * fraction))
                    context.workspace.status_text_set(self._status(job))
            except StopIteration:
                job.commit()  # all or nothing: on failure the previous bake is back in place
                self._report(job)
                return {"FINISHED"}
            done = False
            return {"RUNNING_MODAL"}
        except BaseException as exc:
            try:
                job.cancel()  # removes the .partial file (a no-op once commit has closed the job)
            finally:
                self.report({"ERROR"}, error_line(exc, "bake"))
            if not isinstance(exc, Exception):
                raise  # an interrupt stays one, after the clean-up
            return {"CANCELLED"}
        finally:
            if done:
                self._finish(context)


def _character_poll(cls: type, context: bpy.types.Context) -> bool:
    """A character is active: an armature that deforms a mesh of the scene, or a mesh with an armature."""
    obj = context.active_object
    if obj is None or context.mode != "OBJECT" or obj.type not in ("MESH", "ARMATURE"):
        cls.poll_message_set("Select an armature or one of its meshes in Object Mode")  # type: ignore[attr-defined]
        return False
    if obj.type == "MESH" and armature_modifier(obj) is None:
        cls.poll_message_set("The mesh has no armature: it is its own character; use Bake Secondary Motion")  # type: ignore[attr-defined]
        return False
    if obj.type == "ARMATURE" and not armature_meshes(obj):
        cls.poll_message_set("The armature deforms no mesh of this scene")  # type: ignore[attr-defined]
        return False
    return True


class SKINMODES_OT_bake(_BakeModal, bpy.types.Operator):
    """Simulate the frame range and bake the secondary motion (Esc cancels and changes nothing)"""

    bl_idname = "skinmodes.bake"
    bl_label = "Bake Secondary Motion"
    bl_options = {"REGISTER", "UNDO"}

    output: _output_property()  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)


class SKINMODES_OT_bake_character(_BakeModal, bpy.types.Operator):
    """Bake every mesh of the active armature (or the active mesh's), each into its own cache, from the one
    body they are simulated as (Whole Character); all simulate before any bake is replaced: Esc or a failure
    changes nothing"""

    bl_idname = "skinmodes.bake_character"
    bl_label = "Bake Character"
    bl_options = {"REGISTER", "UNDO"}

    output: _output_property()  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _character_poll(cls, context)

    def _make_job(self, context: bpy.types.Context) -> BakeJob:
        out = None if self.output == "SETTINGS" else self.output
        return cast(BakeJob, CharacterBake(context, character_meshes(active_mesh(context)), output=out))

    def _status(self, job: BakeJob) -> str:
        bake = cast(CharacterBake, job)
        i = bake.jobs.index(bake.current) + 1
        return (
            f"Baking '{bake.current.obj.name}' ({i} of {len(bake.jobs)}): frame "
            f"{bake.start + bake.frames_done - 1} of {bake.end}… Esc to cancel"
        )

    def _report(self, job: BakeJob) -> None:
        bake = cast(CharacterBake, job)
        if bake.warnings:
            more = f" (+{len(bake.warnings) - 1} more)" if len(bake.warnings) > 1 else ""
            self.report({"WARNING"}, bake.warnings[0] + more)
        else:
            self.report({"INFO"}, f"baked {len(bake.jobs)} meshes in {bake.seconds:.1f} s")


class SKINMODES_OT_clear_bake(bpy.types.Operator):
    """Remove the baked secondary motion (modifier, shape keys and cache file)"""

    bl_idname = "skinmodes.clear_bake"
    bl_label = "Clear Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and bool(settings(obj).bake_kind)

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        clear_bake(active_mesh(context))
        return {"FINISHED"}


class SKINMODES_OT_clear_character(bpy.types.Operator):
    """Remove the baked secondary motion of every mesh of the active armature (or the active mesh's)"""

    bl_idname = "skinmodes.clear_character"
    bl_label = "Clear Character"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _character_poll(cls, context)

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        cleared = clear_character(active_mesh(context))
        self.report({"INFO"}, f"cleared {len(cleared)} meshes")
        return {"FINISHED"}


def _session(context: bpy.types.Context, op: bpy.types.Operator):
    """The active object's session, for an operator that writes one value per vertex of its mesh."""
    obj = active_mesh(context)
    renumbering = renumbering_modifiers(obj)
    if renumbering:  # refused before any work: the values would land on the wrong vertices
        names = ", ".join(f"'{m.name}'" for m in renumbering)
        raise SkinmodesError(
            f"{op.bl_label} writes one value per vertex of '{obj.name}', but the modifiers above its Armature "
            f"modifier ({names}) give the simulation other vertices; disable them in the viewport to use it"
        )
    session = current_session(obj, scene_of(context))
    if session is None:
        session = build_session(obj, scene_of(context), log=lambda m: op.report({"INFO"}, m))
    return obj, session


class SKINMODES_OT_create_mask(bpy.types.Operator):
    """Write the automatic momentum-leak field into a vertex group and switch to Weight Paint"""

    bl_idname = "skinmodes.create_mask"
    bl_label = "Create Editable Mask"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        obj, session = _session(context, self)
        prep = session.prepared
        # The mask the leak field came from (core.model.leak.leak_from_mask): 0 follows the rig, 0.5 the
        # skin swings (the depth field alone), 1 swings through; without one the automatic field is 0.5.
        mask = np.full(prep.mesh.n, 0.5) if prep.leak_mask is None else prep.leak_mask
        free = np.clip(interpolate(prep.embedding, prep.mesh.T, mask), 0.0, 1.0)
        s = settings(obj)
        name = s.leak_group or "skinmodes_leak"
        vg = obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name)
        # vertex_groups.add takes one weight per call: quantise to 8 bits (what weight
        # painting resolves anyway), so this is at most 256 calls, never one per vertex.
        levels = np.round(free * 255).astype(np.int64)
        for level in np.unique(levels):
            vg.add(np.flatnonzero(levels == level).tolist(), float(level) / 255.0, "REPLACE")
        obj.vertex_groups.active_index = vg.index
        s.leak_group = name
        s.leak_mode = "GROUP"
        if not bpy.app.background:
            bpy.ops.object.mode_set(mode="WEIGHT_PAINT")
        self.report(
            {"INFO"},
            f"wrote the automatic mask to vertex group '{name}'; paint 0 where flesh should follow the rig, "
            "1 where it should swing through",
        )
        return {"FINISHED"}


class SKINMODES_OT_toggle_rigid_pieces(bpy.types.Operator):
    """Make the loose pieces under the selected vertices follow their bone exactly, or jiggle again if they
    already do (Edit Mode: select a vertex of each piece)"""

    bl_idname = "skinmodes.toggle_rigid_pieces"
    bl_label = "Toggle Rigid Pieces"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "MESH" or context.mode != "EDIT_MESH":
            cls.poll_message_set("In Edit Mode, select a vertex of each piece to toggle")  # type: ignore[attr-defined]
            return False
        return True

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = active_mesh(context)
        bpy.ops.object.mode_set(mode="OBJECT")  # the selection and the groups are written back to the mesh
        try:
            changed, now_rigid = toggle_rigid_pieces(obj)
        finally:
            bpy.ops.object.mode_set(mode="EDIT")
        if not changed:
            self.report({"WARNING"}, "no vertex selected: in Edit Mode select a vertex of each piece to toggle")
            return {"CANCELLED"}
        what = "follow their bone exactly" if now_rigid else "jiggle with the flesh"
        self.report({"INFO"}, f"{changed} piece(s) now {what} (Rigid Pieces: Vertex Group)")
        return {"FINISHED"}


def toggle_rigid_pieces(obj: bpy.types.Object) -> tuple[int, bool]:
    """(pieces toggled, whether they are now rigid): the loose pieces holding the selected vertices join the
    Rigid Group, or leave it when they were all in it already; Rigid Pieces becomes Vertex Group, its group
    seeded with what the current mode held (so switching keeps every other piece as it was)."""
    from .core.model.rigid import held_pieces, vertex_pieces

    mesh = obj.data
    k = len(mesh.vertices)
    co = np.empty(3 * k, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    sel = np.empty(k, dtype=bool)
    mesh.vertices.foreach_get("select", sel)
    faces = np.array([tri.vertices[:] for tri in mesh.loop_triangles], dtype=np.int64).reshape(-1, 3)
    if not len(faces):
        mesh.calc_loop_triangles()
        faces = np.array([tri.vertices[:] for tri in mesh.loop_triangles], dtype=np.int64).reshape(-1, 3)
    piece = vertex_pieces(co.reshape(-1, 3).astype(np.float64), faces)
    chosen = np.unique(piece[sel & (piece >= 0)])
    if not len(chosen):
        return 0, False
    s = settings(obj)
    name = s.rigid_group or "skinmodes_rigid"
    group = obj.vertex_groups.get(name)
    if group is None:
        group = obj.vertex_groups.new(name=name)
        arm = armature_modifier(obj)
        if s.rigid_pieces != "GROUP" and arm is not None and arm.object is not None:
            # Seed it with what the mode held, so that only the chosen pieces change.
            bones = [b.name for b in arm.object.data.bones if obj.vertex_groups.get(b.name) is not None]
            if bones:
                W = vertex_group_weights(obj, bones)
                held = held_pieces(co.reshape(-1, 3).astype(np.float64), faces, W, s.rigid_pieces.lower())
                if held.any():
                    group.add(np.flatnonzero(held).tolist(), 1.0, "REPLACE")
    member = vertex_group_weights(obj, [name])[:, 0] >= 0.5
    verts = np.isin(piece, chosen)
    now_rigid = not member[verts].all()
    if now_rigid:
        group.add(np.flatnonzero(verts).tolist(), 1.0, "REPLACE")
    else:
        group.remove(np.flatnonzero(verts).tolist())
    s.rigid_group = name
    s.rigid_pieces = "GROUP"
    return len(chosen), now_rigid


# The viewport shading Show Mode shows a mode in; what it replaced is kept in registry.SHADING_BEFORE.
# (type, color_type); Any: the stubs type each as its own Literal of enum items.
MODE_SHADING: tuple[Any, Any] = ("SOLID", "VERTEX")


def view3d_shadings(screens: list[bpy.types.Screen | None]) -> list[bpy.types.View3DShading]:
    """The shading settings of every 3D view on ``screens``."""
    return [
        area.spaces.active.shading
        for screen in screens
        if screen is not None
        for area in screen.areas
        if area.type == "VIEW_3D"
    ]


def show_vertex_colours(shading: bpy.types.View3DShading) -> None:
    """Solid shading with vertex colours, remembering what it replaced (nothing, if it already was)."""
    current = (shading.type, shading.color_type)
    if current != MODE_SHADING:
        SHADING_BEFORE[shading.as_pointer()] = current
    shading.type, shading.color_type = MODE_SHADING


def restore_shading(shading: bpy.types.View3DShading) -> bool:
    """Undo :func:`show_vertex_colours` on ``shading``; True if it was put back.

    A view whose shading the user changed after Show Mode is left as the user set it.
    """
    before = SHADING_BEFORE.pop(shading.as_pointer(), None)
    if before is None or (shading.type, shading.color_type) != MODE_SHADING:
        return False
    shading.type, shading.color_type = before
    return True


class SKINMODES_OT_show_mode(bpy.types.Operator):
    """Show skinning mode k on the mesh as a colour attribute (blue negative, red positive)"""

    bl_idname = "skinmodes.show_mode"
    bl_label = "Show Mode"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        obj, session = _session(context, self)
        prep = session.prepared
        k = min(settings(obj).inspect_mode, prep.model.m - 1)
        w = interpolate(prep.embedding, prep.mesh.T, prep.model.weights[:, k])
        t = 0.5 + 0.5 * w / max(np.abs(w).max(), 1e-30)
        rgba = np.stack([t, 1.0 - np.abs(2 * t - 1.0), 1.0 - t, np.ones_like(t)], axis=1)
        mesh = obj.data
        attr = mesh.color_attributes.get(MODE_ATTRIBUTE) or mesh.color_attributes.new(
            MODE_ATTRIBUTE, "FLOAT_COLOR", "POINT"
        )
        attr.data.foreach_set("color", rgba.astype(np.float32).ravel())
        mesh.color_attributes.active_color = attr
        mesh.update()
        for shading in view3d_shadings([context.screen]):
            show_vertex_colours(shading)
        self.report({"INFO"}, f"mode {k}: eigenvalue {prep.model.eigenvalues[k]:.4g}")
        return {"FINISHED"}


class SKINMODES_OT_hide_mode(bpy.types.Operator):
    """Remove the mode colour attribute"""

    bl_idname = "skinmodes.hide_mode"
    bl_label = "Hide Mode"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.data.color_attributes.get(MODE_ATTRIBUTE) is not None

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        mesh = active_mesh(context).data
        mesh.color_attributes.remove(mesh.color_attributes[MODE_ATTRIBUTE])
        # Every window's views: Show Mode may have been used in another workspace.
        for shading in view3d_shadings([w.screen for w in context.window_manager.windows]):
            restore_shading(shading)
        return {"FINISHED"}


class SKINMODES_OT_add_pose(bpy.types.Operator):
    """Add the current frame's rig pose as a training pose (its contact is found automatically)"""

    bl_idname = "skinmodes.add_pose"
    bl_label = "Add Pose"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = active_mesh(context)
        scene = scene_of(context)
        s = settings(obj)
        frame = scene.frame_current
        if any(p.frame == frame for p in s.poses):
            raise SkinmodesError(f"frame {frame} is already a training pose; go to another frame to add one")
        start = s.frame_range(scene)[0]
        if frame == start:
            raise SkinmodesError(
                f"frame {frame} is the rest frame (the start of the frame range; pre-roll comes before it), "
                "always pose 0; go to the frame of the pose to add"
            )
        pose = s.poses.add()
        pose.frame = frame
        self.report({"INFO"}, f"added frame {frame} as a training pose; its modes are computed with the next modes")
        return {"FINISHED"}


class SKINMODES_OT_remove_pose(bpy.types.Operator):
    """Remove a training pose"""

    bl_idname = "skinmodes.remove_pose"
    bl_label = "Remove Pose"
    bl_options = {"REGISTER", "UNDO"}

    index: bpy.props.IntProperty(name="Index", description="Which pose (-1: the last)", default=-1)  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and len(settings(obj).poses) > 0

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        s = settings(active_mesh(context))
        i = len(s.poses) - 1 if self.index < 0 else self.index
        if not 0 <= i < len(s.poses):
            raise SkinmodesError(f"there is no training pose {self.index}; the object has {len(s.poses)}")
        frame = s.poses[i].frame
        s.poses.remove(i)
        self.report({"INFO"}, f"removed the training pose at frame {frame}")
        return {"FINISHED"}


class SKINMODES_OT_refresh_preview(bpy.types.Operator):
    """Resample the rig and redraw the live preview"""

    bl_idname = "skinmodes.refresh_preview"
    bl_label = "Refresh Preview"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and settings(obj).live_preview

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        preview.refresh(active_mesh(context), scene_of(context))
        return {"FINISHED"}


CLASSES = (
    SKINMODES_OT_compute_modes,
    SKINMODES_OT_bake,
    SKINMODES_OT_bake_character,
    SKINMODES_OT_clear_character,
    SKINMODES_OT_clear_bake,
    SKINMODES_OT_create_mask,
    SKINMODES_OT_toggle_rigid_pieces,
    SKINMODES_OT_show_mode,
    SKINMODES_OT_hide_mode,
    SKINMODES_OT_add_pose,
    SKINMODES_OT_remove_pose,
    SKINMODES_OT_refresh_preview,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
