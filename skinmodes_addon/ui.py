"""The Secondary Motion tab of the 3D Viewport's sidebar (N panel)."""

from __future__ import annotations

from typing import cast

import bpy

from .character import armature_meshes, armature_modifier, character_meshes, is_object_rig
from .core.settings import BY_NAME
from .material_presets import SKINMODES_MT_material_presets
from .props import active_mesh, default_cache_dir, settings
from .registry import ERRORS
from .session.session import session_for

# The material preset button shows the object's own preset: "Jelly", …, or "Custom".
PRESET_LABELS = {c.id: c.label for c in BY_NAME["material_preset"].choices}


class _Panel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Secondary Motion"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH"


class SKINMODES_PT_main(_Panel, bpy.types.Panel):
    bl_label = "Secondary Motion"
    bl_idname = "SKINMODES_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = active_mesh(context)
        mod = armature_modifier(obj)
        if mod is not None:
            layout.label(text=f"Rig: {mod.object.name}", icon="ARMATURE_DATA")
            draw_character(cast(bpy.types.UILayout, layout), context, obj, cast(bpy.types.Object, mod.object))
        elif is_object_rig(obj):
            layout.label(text="Rig: the object's own motion", icon="OBJECT_DATA")
        else:
            layout.label(text="The Armature modifier has no armature", icon="ERROR")
            layout.label(text="Pick one, or remove the modifier")
            return
        err = ERRORS.get(obj.session_uid)
        if err:
            box = layout.box()
            box.label(text=err, icon="ERROR")


def draw_character(
    layout: bpy.types.UILayout, context: bpy.types.Context, obj: bpy.types.Object, arm: bpy.types.Object
) -> None:
    """Whole Character, and the armature's meshes with each one's switch (issue 38): the meshes switched on
    and touching are simulated as one body; a mesh switched off is simulated alone."""
    meshes = armature_meshes(arm)
    if len(meshes) < 2:
        return
    layout.prop(settings(obj), "whole_character")
    draw_mesh_list(layout, meshes, obj)


def draw_mesh_list(layout: bpy.types.UILayout, meshes: list[bpy.types.Object], active: bpy.types.Object) -> None:
    """Each mesh with its Whole Character switch, the active one marked."""
    col = layout.box().column(align=True)
    for o in meshes:
        row = col.row(align=True)
        if o == active:
            row.prop(settings(o), "whole_character", text=o.name, icon="RESTRICT_SELECT_OFF")
        else:
            row.prop(settings(o), "whole_character", text=o.name, icon="MESH_DATA")


class SKINMODES_PT_armature(_Panel, bpy.types.Panel):
    """With the armature selected, the character it deforms: its meshes, Bake Character, Clear Character."""

    bl_label = "Secondary Motion"
    bl_idname = "SKINMODES_PT_armature"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE"

    def draw(self, context: bpy.types.Context) -> None:
        layout = cast(bpy.types.UILayout, self.layout)
        arm = cast(bpy.types.Object, context.active_object)
        meshes = armature_meshes(arm)
        layout.label(text=f"Character: {arm.name}", icon="ARMATURE_DATA")
        if not meshes:
            layout.label(text="It deforms no mesh of this scene", icon="INFO")
            return
        layout.label(text="Meshes (switched on: one body)")
        draw_mesh_list(layout, meshes, arm)
        layout.operator("skinmodes.bake_character", icon="RENDER_ANIMATION")
        if any(settings(m).bake_kind for m in meshes):
            layout.operator("skinmodes.clear_character", icon="TRASH")
        layout.label(text="Select a mesh for its settings")


class SKINMODES_PT_material(_Panel, bpy.types.Panel):
    bl_label = "Material"
    bl_parent_id = "SKINMODES_PT_main"

    def draw_header_preset(self, context: bpy.types.Context) -> None:
        """The preset button: apply a shipped or saved preset, save yours, remove yours.

        It reads the object's own preset ("Custom" once a value is edited by
        hand or a preset of yours is applied): the menu's title is one for all objects.
        """
        s = settings(active_mesh(context))
        self.layout.menu(SKINMODES_MT_material_presets.__name__, text=PRESET_LABELS[s.material_preset], icon="PRESET")

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        col = self.layout.column()
        col.prop(s, "stiffness_mode", expand=True)
        if s.stiffness_mode == "FREQUENCY":
            col.prop(s, "wobble_hz", text="Wobble (Hz)")
        else:
            col.prop(s, "youngs_modulus", text="Young's Modulus (Pa)")
            col.prop(s, "density", text="Density (kg/m³)")
        col.prop(s, "damping_ratio")
        col.prop(s, "amount")
        col.prop(s, "poisson_ratio")
        if s.stat_size > 0:
            box = col.box()
            box.label(text=f"Character size {s.stat_size:.3g} m (scene units × Unit Scale)", icon="INFO")
            if s.stiffness_mode == "FREQUENCY":
                box.label(text=f"Slowest wobble {s.wobble_hz:.2f} Hz")
            else:
                box.label(text=f"Slowest wobble {s.stat_physical_hz:.3g} Hz with these pascals")
        obj = context.active_object
        col.prop_search(s, "stiffness_group", obj, "vertex_groups", text="Stiffness Mask")
        col.prop_search(s, "density_group", obj, "vertex_groups", text="Density Mask")


class SKINMODES_PT_leak(_Panel, bpy.types.Panel):
    bl_label = "Momentum-Leak Mask"
    bl_parent_id = "SKINMODES_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        obj = active_mesh(context)
        s = settings(obj)
        col = self.layout.column()
        col.prop(s, "leak_mode", expand=True)
        if s.leak_mode == "GROUP":
            col.prop_search(s, "leak_group", obj, "vertex_groups", text="Group")
        elif not is_object_rig(obj):  # an object's one bone has no chain to swing from (object_rig.py)
            col.prop(s, "swing_appendages")
        col.operator("skinmodes.create_mask", icon="BRUSH_DATA")
        col.prop(s, "planted_feet")


class SKINMODES_PT_subspace(_Panel, bpy.types.Panel):
    bl_label = "Subspace"
    bl_parent_id = "SKINMODES_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        obj = active_mesh(context)
        s = settings(obj)
        col = self.layout.column()
        if is_object_rig(obj):  # characters always use skinning eigenmodes (issue 27)
            col.prop(s, "subspace_method")
        col.prop(s, "modes")
        col.prop(s, "clusters")
        col.prop(s, "target_tets")
        col.prop(s, "tet_method")
        col.prop(s, "loose_parts")
        col.prop(s, "rigid_pieces")
        if s.rigid_pieces == "GROUP":
            col.prop_search(s, "rigid_group", obj, "vertex_groups")
        col.operator("skinmodes.toggle_rigid_pieces", icon="LOCKED")
        col.operator("skinmodes.compute_modes", icon="MOD_PHYSICS")
        if s.stat_modes:
            box = col.box()
            box.label(text=f"{s.stat_tets:,} tets, {s.stat_vertices:,} vertices ({s.stat_mesher})")
            box.label(text=f"{s.stat_modes} modes, {s.stat_clusters} clusters, {s.stat_seconds:.1f} s")
            for line in filter(None, s.stat_notes.split("\n")):
                box.label(text=line, icon="MESH_DATA")


class SKINMODES_PT_simulation(_Panel, bpy.types.Panel):
    bl_label = "Simulation"
    bl_parent_id = "SKINMODES_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        col = self.layout.column()
        col.prop(s, "rest_state")
        col.prop(s, "substeps")
        col.prop(s, "iterations")
        col.prop(s, "preroll")
        col.prop(s, "reset_at_cuts")
        col.prop(s, "use_scene_range")
        row = col.row(align=True)
        row.enabled = not s.use_scene_range
        row.prop(s, "frame_start")
        row.prop(s, "frame_end")


class SKINMODES_PT_physics(_Panel, bpy.types.Panel):
    """Physics skinning: a volume-preserving deformer from the same bones, alone or under the jiggle."""

    bl_label = "Physics Skin"
    bl_parent_id = "SKINMODES_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context: bpy.types.Context) -> None:
        self.layout.prop(settings(active_mesh(context)), "physics_skin", text="")

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        col = self.layout.column()
        col.active = s.physics_skin
        col.prop(s, "physics_skin_from", text="From")
        col.prop(s, "secondary_motion")
        weights = col.column()
        weights.active = s.physics_skin_from == "WEIGHTS"  # from bones only, the pins are the seed's
        weights.prop(s, "pin_depth", slider=True)
        weights.prop(s, "pin_rigid")
        col.prop(s, "physics_gravity")
        if s.physics_skin and not s.secondary_motion:
            col.label(text="Bakes the physics skin alone (a deformer)", icon="INFO")


class SKINMODES_PT_output(_Panel, bpy.types.Panel):
    bl_label = "Output"
    bl_parent_id = "SKINMODES_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        col = self.layout.column()
        row = col.row()
        row.enabled = not s.bake_kind
        row.prop(s, "live_preview", icon="PLAY")
        col.prop(s, "output")
        col.prop(s, "cache_dir")
        if not s.cache_dir:  # say where an empty field sends the files: the preference's folder
            col.label(text=f"Default: {default_cache_dir()}", icon="PREFERENCES")
        col.operator("skinmodes.bake", icon="RENDER_ANIMATION")
        obj = active_mesh(context)
        several = armature_modifier(obj) is not None and len(character_meshes(obj)) > 1
        if several:  # several meshes on its armature
            col.operator("skinmodes.bake_character", icon="OUTLINER_OB_ARMATURE")
        if s.bake_kind:
            box = col.box()
            what = "point cache" if s.bake_kind == "PC2" else "shape keys"
            box.label(text=f"Baked {what}, frames {s.bake_start}-{s.bake_end}", icon="CHECKMARK")
            if s.bake_file:
                box.label(text=s.bake_file)
            if s.bake_warning:
                box.label(text=s.bake_warning, icon="ERROR")
            box.operator("skinmodes.clear_bake", icon="TRASH")
            if several:
                box.operator("skinmodes.clear_character", icon="TRASH")


def blend_line(obj: bpy.types.Object, frame: int) -> str | None:
    """'frame 40 62 %, rest 38 %': the poses blended at ``frame`` by the object's session, if it has one."""
    session = session_for(obj)
    if session is None or session.prepared.posespace is None or frame not in session.rig:
        return None
    ps = session.prepared.posespace
    w = ps.model.pose_weights(session.rig[frame])
    names = ["rest" if f < 0 else f"frame {f}" for f in ps.frames]
    parts = [f"{n} {100 * x:.0f} %" for n, x in sorted(zip(names, w), key=lambda t: -abs(t[1])) if abs(x) >= 0.005]
    return ", ".join(parts)


class SKINMODES_PT_posespace(_Panel, bpy.types.Panel):
    """Training poses: where skin presses on skin, the jiggle holds still (Xu & Barbič's contact-aware modes)."""

    bl_label = "Pose-Space"
    bl_parent_id = "SKINMODES_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        obj = active_mesh(context)
        s = settings(obj)
        layout = self.layout
        # One row per pose (a handful): frame, contact, its group, and a remove button.
        for i, pose in enumerate(s.poses):
            row = layout.row(align=True)
            row.prop(pose, "frame", text="Frame")
            row.prop(pose, "contact", text="")
            if pose.contact == "GROUP":
                row.prop_search(pose, "contact_group", obj, "vertex_groups", text="")
            if pose.contact != "NONE":
                row.prop(pose, "contact_mode", text="")
            row.operator("skinmodes.remove_pose", icon="X", text="").index = i
        layout.operator("skinmodes.add_pose", icon="ADD", text="Add Current Frame")
        layout.prop(s, "pose_local_blend")
        if not len(s.poses):
            layout.label(text="Add frames where skin presses on skin", icon="INFO")
            layout.label(text="(a bent elbow, a curled tail): no jiggle into it")
            return
        line = blend_line(obj, context.scene.frame_current) if context.scene else None
        if line:
            layout.label(text=f"Blended here: {line}", icon="MOD_VERTEX_WEIGHT")
        else:
            layout.label(text="Compute Modes (or preview) to blend the poses", icon="INFO")


class SKINMODES_PT_inspect(_Panel, bpy.types.Panel):
    bl_label = "Inspect"
    bl_parent_id = "SKINMODES_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        row = self.layout.row(align=True)
        row.prop(s, "inspect_mode")
        row.operator("skinmodes.show_mode", text="Show", icon="HIDE_OFF")
        row.operator("skinmodes.hide_mode", text="", icon="X")


class SKINMODES_PT_contact(_Panel, bpy.types.Panel):
    """The ground and collider objects pushing the jiggle out (issue 29); the rig itself is never moved."""

    bl_label = "Contact"
    bl_parent_id = "SKINMODES_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        s = settings(active_mesh(context))
        col = self.layout.column()
        row = col.row(align=True)
        row.prop(s, "ground")
        sub = row.row(align=True)
        sub.active = s.ground
        sub.prop(s, "ground_height", text="Height")
        col.prop_search(s, "colliders", bpy.data, "collections")
        col.prop(s, "contact_friction")
        col.prop(s, "self_contact")
        if s.colliders:
            col.label(text="Give the colliders Collision physics", icon="INFO")


CLASSES = (
    SKINMODES_PT_main,
    SKINMODES_PT_material,
    SKINMODES_PT_leak,
    SKINMODES_PT_subspace,
    SKINMODES_PT_simulation,
    SKINMODES_PT_physics,
    SKINMODES_PT_posespace,
    SKINMODES_PT_output,
    SKINMODES_PT_inspect,
    SKINMODES_PT_contact,
    SKINMODES_PT_armature,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
