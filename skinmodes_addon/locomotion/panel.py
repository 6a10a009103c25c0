"""The Locomotion panel: a sub-panel of Secondary Motion, for a mesh without an armature.

Travel On the Object is a bake output (``bake/travel.py``): the Live Preview moves the mesh, never the
object, so it shows the whole crawl in the mesh until Bake keys the travel on the object; the panel says so."""

from __future__ import annotations

import bpy

from ..character import is_object_rig
from ..core.errors import SkinmodesError
from ..props import active_mesh, settings
from .job import GAIT_JOBS
from .store import is_weak, read_gait


class SKINMODES_PT_locomotion(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Secondary Motion"
    bl_label = "Locomotion"
    bl_parent_id = "SKINMODES_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and is_object_rig(obj)

    def draw_header(self, context: bpy.types.Context) -> None:
        self.layout.prop(settings(active_mesh(context)), "locomotion", text="")

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = active_mesh(context)
        s = settings(obj)
        col = layout.column()
        col.prop(s, "gait_direction")
        row = col.row(align=True)
        row.prop(s, "gait_period_min", text="Period")
        row.prop(s, "gait_period_max", text="")
        col.prop(s, "gait_modes")
        col.prop(s, "gait_generations")
        col.prop(s, "gait_search_tets")
        col.prop(s, "gait_seed")
        col.prop(s, "gait_travel")
        if s.gait_travel == "OBJECT":
            # The preview cannot move the object (only keys can): it shows the crawl in the mesh until a bake.
            col.label(text="Preview: the crawl in the mesh; Bake keys it on the object", icon="INFO")
        searching = obj.session_uid in GAIT_JOBS
        layout.operator("skinmodes.find_gait", icon="TIME" if searching else "PLAY")
        try:
            gait = read_gait(obj)
        except SkinmodesError as exc:
            layout.label(text=str(exc), icon="ERROR")
            layout.operator("skinmodes.clear_gait", icon="X")
            return
        if gait is None:
            layout.label(text="No gait yet: Find Gait searches for one")
            return
        row = layout.row()
        bl, deg = gait.figures.get("body_lengths_per_10s"), gait.figures.get("heading_deg")
        found = f"{bl:.2f} body lengths per 10 s" if bl is not None else f"objective {gait.objective:.3g}"
        found += f", {deg:.0f}° off" if deg is not None else ""
        row.label(text=f"Gait: {found}, {gait.seconds:.0f} s", icon="ERROR" if is_weak(gait) else "CHECKMARK")
        row.operator("skinmodes.clear_gait", text="", icon="X")
        if is_weak(gait):
            layout.label(text="It barely moves: try more Generations, another Seed or more Actuation Modes")
        if not s.locomotion:
            layout.label(text="Locomotion is off: the gait is kept, not played")


CLASSES = (SKINMODES_PT_locomotion,)
