"""Find Gait (modal from the UI, Esc cancels; synchronous from scripts) and Clear Gait."""

from __future__ import annotations

import time

import bpy

from .. import preview
from ..character import is_object_rig
from ..operators import end_modal_ui, error_line, reports_errors
from ..props import active_mesh, scene_of, settings
from ..session.session import stored_gait_text
from .job import GAIT_JOBS, GaitJob, finish_gait_job, forget_gait_job, start_gait_job
from .store import gait_line, write_gait


def boneless_mesh_poll(cls: type, context: bpy.types.Context) -> bool:
    """A mesh without an armature in Object Mode (a poll must answer False, never raise)."""
    obj = context.active_object
    if obj is None or obj.type != "MESH" or context.mode != "OBJECT" or not is_object_rig(obj):
        cls.poll_message_set("Select a mesh without an armature in Object Mode")  # type: ignore[attr-defined]
        return False
    return True


def _report(op: bpy.types.Operator, job: GaitJob) -> None:
    gait = finish_gait_job(job)
    op.report({"INFO"}, gait_line(gait, job.figures.get("body_lengths_per_10s")))


class SKINMODES_OT_find_gait(bpy.types.Operator):
    """Search for a gait that moves this mesh along the chosen direction (Esc cancels)"""

    bl_idname = "skinmodes.find_gait"
    bl_label = "Find Gait"
    bl_options = {"REGISTER", "UNDO"}

    _job: GaitJob | None = None
    _timer = None

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not boneless_mesh_poll(cls, context):
            return False
        if context.active_object.session_uid in GAIT_JOBS:
            cls.poll_message_set("A gait is being searched for; Esc stops")  # type: ignore[attr-defined]
            return False
        return True

    @reports_errors("Find Gait")
    def execute(self, context: bpy.types.Context) -> set[str]:
        """Scripts and headless: the same worker, waited for here."""
        job = start_gait_job(active_mesh(context), scene_of(context))
        job.wait()
        _report(self, job)
        return {"FINISHED"}

    @reports_errors("Find Gait")
    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if bpy.app.background or context.window is None:
            return self.execute(context)
        self._job = start_gait_job(active_mesh(context), scene_of(context))
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        self._show_progress(context)
        return {"RUNNING_MODAL"}

    def _show_progress(self, context: bpy.types.Context) -> None:
        job = self._job
        assert job is not None
        context.window_manager.progress_update(int(100 * job.fraction))
        best = f", best objective {job.best:.3g}" if job.best > float("-inf") else ""
        done = f" {job.done_rollouts}/{job.planned} rollouts" if job.planned else ""
        context.workspace.status_text_set(
            f"Finding a gait for {job.request.object_name}: {job.stage}{done}{best}, "
            f"{time.perf_counter() - job.started:.0f} s… Esc to cancel"
        )

    def _finish(self, context: bpy.types.Context) -> None:
        timer, self._timer = self._timer, None
        try:
            end_modal_ui(context, timer)
        finally:
            if self._job is not None:
                forget_gait_job(self._job)

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        job = self._job
        assert job is not None
        done = True  # every return but "keep running" cleans up
        try:
            if event.type == "ESC":
                job.cancel()
                self.report({"WARNING"}, "Find Gait cancelled; nothing was changed")
                return {"CANCELLED"}
            if event.type != "TIMER" or not job.done:
                if event.type == "TIMER":
                    self._show_progress(context)
                done = False
                return {"PASS_THROUGH"}
            _report(self, job)
            obj = bpy.data.objects.get(job.request.object_name)
            if obj is not None and settings(obj).live_preview:
                preview.refresh(obj, scene_of(context))
            return {"FINISHED"}
        except Exception as exc:
            job.cancel()
            self.report({"ERROR"}, error_line(exc, "Find Gait"))
            return {"CANCELLED"}
        finally:
            if done:
                self._finish(context)

    def cancel(self, context: bpy.types.Context) -> None:
        """Blender ended the modal (a file was loaded, the window closed): stop the worker."""
        if self._job is not None:
            self._job.cancel()
        self._finish(context)


class SKINMODES_OT_clear_gait(bpy.types.Operator):
    """Remove the stored gait (the mesh keeps still again)"""

    bl_idname = "skinmodes.clear_gait"
    bl_label = "Clear Gait"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and bool(stored_gait_text(obj))

    @reports_errors()
    def execute(self, context: bpy.types.Context) -> set[str]:
        write_gait(active_mesh(context), None)
        return {"FINISHED"}


CLASSES = (SKINMODES_OT_find_gait, SKINMODES_OT_clear_gait)
