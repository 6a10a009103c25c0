"""Operators: Compute Modes, Bake (modal, Esc cancels), Clear Bake, Create Editable Mask, Show Mode."""

from __future__ import annotations

import time

import bpy
import numpy as np

from . import preview
from .bake import BakeJob, clear_bake
from .character import armature_modifier
from .core.embedding import interpolate
from .core.errors import SkinmodesError
from .props import active_mesh, scene_of, settings
from .session import build_session, current_session

MODE_ATTRIBUTE = "skinmodes_mode"


def _skinned_mesh_poll(cls: type, context: bpy.types.Context) -> bool:
    obj = active_mesh(context)
    if obj is None or obj.type != "MESH" or context.mode != "OBJECT":
        cls.poll_message_set("Select a mesh in Object Mode")  # type: ignore[attr-defined]
        return False
    if armature_modifier(obj) is None:
        cls.poll_message_set("The mesh needs an Armature modifier with an armature")  # type: ignore[attr-defined]
        return False
    return True


class SKINMODES_OT_compute_modes(bpy.types.Operator):
    """Tetrahedralise the mesh and compute its skinning eigenmodes and clusters"""

    bl_idname = "skinmodes.compute_modes"
    bl_label = "Compute Modes"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = active_mesh(context)
        context.window_manager.progress_begin(0, 1)
        try:
            session = build_session(obj, scene_of(context), log=lambda m: self.report({"INFO"}, m))
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        finally:
            context.window_manager.progress_end()
        st = session.prepared.stats
        self.report(
            {"INFO"},
            f"{int(st['tets'])} tets, {int(st['modes'])} modes, {int(st['clusters'])} clusters "
            f"in {settings(obj).stat_seconds:.1f} s ({session.prepared.tets.method})",
        )
        return {"FINISHED"}


def _report_bake(op: bpy.types.Operator, job: BakeJob) -> None:
    """One line on success, or the guard's first warning: a bake that looks wrong never passes silently."""
    if job.warnings:
        more = f" (+{len(job.warnings) - 1} more)" if len(job.warnings) > 1 else ""
        op.report({"WARNING"}, job.warnings[0] + more)
    else:
        op.report({"INFO"}, f"baked {job.frames_done} frames in {job.seconds:.1f} s")


class SKINMODES_OT_bake(bpy.types.Operator):
    """Simulate the frame range and bake the secondary motion (Esc cancels and changes nothing)"""

    bl_idname = "skinmodes.bake"
    bl_label = "Bake Secondary Motion"
    bl_options = {"REGISTER", "UNDO"}

    output: bpy.props.EnumProperty(  # type: ignore[valid-type]
        name="Output",
        items=[("SETTINGS", "From Settings", ""), ("PC2", "Point Cache", ""), ("SHAPE_KEYS", "Shape Keys", "")],
        default="SETTINGS",
    )

    _job: BakeJob | None = None
    _steps = None
    _timer = None

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    def _make_job(self, context: bpy.types.Context) -> BakeJob:
        out = None if self.output == "SETTINGS" else self.output
        return BakeJob(context, active_mesh(context), output=out)

    def execute(self, context: bpy.types.Context) -> set[str]:
        """Synchronous bake (headless, scripts)."""
        try:
            job = self._make_job(context).run()
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        except Exception as exc:
            self.report({"ERROR"}, f"bake failed ({type(exc).__name__}: {exc}); nothing was changed")
            return {"CANCELLED"}
        _report_bake(self, job)
        return {"FINISHED"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        try:
            self._job = self._make_job(context)
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self._steps = self._job.steps()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(self)
        context.workspace.status_text_set("Baking secondary motion… Esc to cancel")
        return {"RUNNING_MODAL"}

    def _finish(self, context: bpy.types.Context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        job = self._job
        assert job is not None and self._steps is not None
        if event.type == "ESC":
            job.cancel()
            self._finish(context)
            self.report({"WARNING"}, "bake cancelled; nothing was changed")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            deadline = 0.05  # seconds of work per timer tick keeps the UI responsive
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < deadline:
                fraction = next(self._steps)
                context.window_manager.progress_update(int(100 * fraction))
                context.workspace.status_text_set(
                    f"Baking secondary motion: frame {job.start + job.frames_done - 1} of {job.end}… Esc to cancel"
                )
        except StopIteration:
            try:
                job.commit()
            except SkinmodesError as exc:
                self._finish(context)
                self.report({"ERROR"}, str(exc))
                return {"CANCELLED"}
            self._finish(context)
            _report_bake(self, job)
            return {"FINISHED"}
        except SkinmodesError as exc:
            job.cancel()
            self._finish(context)
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        return {"RUNNING_MODAL"}


class SKINMODES_OT_clear_bake(bpy.types.Operator):
    """Remove the baked secondary motion (modifier, shape keys and cache file)"""

    bl_idname = "skinmodes.clear_bake"
    bl_label = "Clear Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = active_mesh(context)
        return obj is not None and obj.type == "MESH" and bool(settings(obj).bake_kind)

    def execute(self, context: bpy.types.Context) -> set[str]:
        try:
            clear_bake(active_mesh(context))
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        return {"FINISHED"}


def _session(context: bpy.types.Context, op: bpy.types.Operator):
    obj = active_mesh(context)
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

    def execute(self, context: bpy.types.Context) -> set[str]:
        try:
            obj, session = _session(context, self)
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        prep = session.prepared
        # The leak mask says how freely each render vertex swings: 1 - d.
        free = np.clip(1.0 - interpolate(prep.embedding, prep.mesh.T, prep.leak), 0.0, 1.0)
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
            {"INFO"}, f"wrote the automatic mask to vertex group '{name}'; paint 0 where flesh should follow the rig"
        )
        return {"FINISHED"}


class SKINMODES_OT_show_mode(bpy.types.Operator):
    """Show skinning mode k on the mesh as a colour attribute (blue negative, red positive)"""

    bl_idname = "skinmodes.show_mode"
    bl_label = "Show Mode"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _skinned_mesh_poll(cls, context)

    def execute(self, context: bpy.types.Context) -> set[str]:
        try:
            obj, session = _session(context, self)
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
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
        for area in getattr(context.screen, "areas", []):
            if area.type == "VIEW_3D":
                shading = area.spaces.active.shading
                shading.type = "SOLID"
                shading.color_type = "VERTEX"
        self.report({"INFO"}, f"mode {k}: eigenvalue {prep.model.eigenvalues[k]:.4g}")
        return {"FINISHED"}


class SKINMODES_OT_hide_mode(bpy.types.Operator):
    """Remove the mode colour attribute"""

    bl_idname = "skinmodes.hide_mode"
    bl_label = "Hide Mode"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = active_mesh(context)
        return obj is not None and obj.type == "MESH" and obj.data.color_attributes.get(MODE_ATTRIBUTE) is not None

    def execute(self, context: bpy.types.Context) -> set[str]:
        mesh = active_mesh(context).data
        mesh.color_attributes.remove(mesh.color_attributes[MODE_ATTRIBUTE])
        return {"FINISHED"}


class SKINMODES_OT_refresh_preview(bpy.types.Operator):
    """Resample the rig and redraw the live preview"""

    bl_idname = "skinmodes.refresh_preview"
    bl_label = "Refresh Preview"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = active_mesh(context)
        return obj is not None and obj.type == "MESH" and settings(obj).live_preview

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = active_mesh(context)
        try:
            preview.refresh(obj, scene_of(context))
        except SkinmodesError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        return {"FINISHED"}


CLASSES = (
    SKINMODES_OT_compute_modes,
    SKINMODES_OT_bake,
    SKINMODES_OT_clear_bake,
    SKINMODES_OT_create_mask,
    SKINMODES_OT_show_mode,
    SKINMODES_OT_hide_mode,
    SKINMODES_OT_refresh_preview,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
