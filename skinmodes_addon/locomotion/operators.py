"""Find Gait (modal from the UI, Esc cancels; synchronous from scripts) and Clear Gait."""

from __future__ import annotations

import bpy

from .. import preview
from ..character import is_object_rig
from ..operators import reports_errors
from ..props import active_mesh, scene_of, settings
from ..session.modal import WorkerOperator
from ..session.request import stored_gait_text
from .job import GAIT_JOBS, GaitJob, finish_gait_job, forget_gait_job, start_gait_job
from .store import gait_line, is_weak, write_gait


def boneless_mesh_poll(cls: type, context: bpy.types.Context) -> bool:
    """A mesh without an armature in Object Mode (a poll must answer False, never raise)."""
    obj = context.active_object
    if obj is None or obj.type != "MESH" or context.mode != "OBJECT" or not is_object_rig(obj):
        cls.poll_message_set("Select a mesh without an armature in Object Mode")  # type: ignore[attr-defined]
        return False
    return True


def _report(op: bpy.types.Operator, job: GaitJob) -> None:
    gait = finish_gait_job(job)
    op.report({"WARNING"} if is_weak(gait) else {"INFO"}, gait_line(gait))


class SKINMODES_OT_find_gait(WorkerOperator):
    """Search for a gait that moves this mesh along the chosen direction (Esc cancels)"""

    bl_idname = "skinmodes.find_gait"
    bl_label = "Find Gait"
    bl_options = {"REGISTER", "UNDO"}

    doing = "Find Gait"
    _job: GaitJob | None = None

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
        return self._start_modal(context, start_gait_job(active_mesh(context), scene_of(context)))

    def _status(self, job: GaitJob) -> str:
        best = f", best objective {job.best:.3g}" if job.best > float("-inf") else ""
        done = f" {job.done_rollouts}/{job.planned} rollouts" if job.planned else ""
        return f"Finding a gait for {job.request.object_name}: {job.stage}{done}{best}"

    def _succeeded(self, context: bpy.types.Context, job: GaitJob) -> None:
        _report(self, job)
        obj = bpy.data.objects.get(job.request.object_name)
        if obj is not None and settings(obj).live_preview:
            preview.refresh(obj, scene_of(context))

    def _forget(self, job: GaitJob) -> None:
        forget_gait_job(job)


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
