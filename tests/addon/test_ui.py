"""The Secondary Motion panels (ui.py) drawn in real Blender, on a real rigged object.

The bpy module draws nothing in background mode, so each panel's ``draw`` is
called into the layout of a real popup menu (``WindowManager.popmenu_begin__internal``,
what ``popup_menu`` uses) and the rows it made are read back with
``UILayout.introspect()``.  The popup is never shown: ending it needs a
window system.  Only ``self`` is a stand-in (a Panel cannot be instantiated
from Python); the layout, context and object are Blender's own.  Comparisons
are exact: they are texts and property paths.
"""

from types import SimpleNamespace

import pytest


def layout_items(node):
    """Every button of an introspected layout, depth first, as its dict (draw_string, rna, operator)."""
    if isinstance(node, list):
        return [item for child in node for item in layout_items(child)]
    if "items" in node:
        return layout_items(node["items"])
    return [node]


def draw(bpy, method, stand_in=None):
    """Call a panel's or menu's draw method on a real layout; return its buttons.

    stand_in: what the method gets as ``self`` (any attributes it reads besides ``layout``).
    """
    popup = bpy.context.window_manager.popmenu_begin__internal("skinmodes test", icon="NONE")
    stand_in = stand_in or SimpleNamespace()
    stand_in.layout = popup.layout.column()
    method(stand_in, bpy.context)
    return layout_items(stand_in.layout.introspect())


def texts(items):
    return [i.get("draw_string", "") for i in items]


def props(items):
    """The skinmodes property names shown as fields."""
    return [i["rna"].split(".")[-1].split("[")[0] for i in items if i.get("rna", "").startswith("SkinmodesSettings.")]


def operators(items):
    """The skinmodes operators shown as buttons (Blender adds its own, e.g. a folder's browse button)."""
    called = [i["operator"].removeprefix("bpy.ops.").split("(")[0] for i in items if "operator" in i]
    return [name for name in called if name.startswith("skinmodes.")]


@pytest.fixture
def skinned(addon, creature):
    return creature[0]


def test_every_panel_draws_its_rows_on_a_skinned_mesh(addon, creature, capfd):
    import bpy

    _, arm, _ = creature
    drawn = {cls.__name__: draw(bpy, cls.draw) for cls in addon.ui.CLASSES}
    printed = capfd.readouterr()
    assert "Traceback" not in printed.out + printed.err
    assert texts(drawn["SKINMODES_PT_main"]) == [f"Rig: {arm.name}"]
    assert props(drawn["SKINMODES_PT_material"]) == [
        "stiffness_mode",
        "stiffness_mode",
        "wobble_hz",
        "damping_ratio",
        "amount",
        "poisson_ratio",
        "stiffness_group",
        "density_group",
    ]
    assert props(drawn["SKINMODES_PT_leak"]) == ["leak_mode", "leak_mode", "swing_appendages", "planted_feet"]
    assert operators(drawn["SKINMODES_PT_leak"]) == ["skinmodes.create_mask"]
    assert props(drawn["SKINMODES_PT_subspace"]) == [
        "modes",
        "clusters",
        "target_tets",
        "tet_method",
        "loose_parts",
        "rigid_pieces",
    ]
    assert operators(drawn["SKINMODES_PT_subspace"]) == ["skinmodes.toggle_rigid_pieces", "skinmodes.compute_modes"]
    assert props(drawn["SKINMODES_PT_simulation"]) == [
        "rest_state",
        "substeps",
        "iterations",
        "preroll",
        "reset_at_cuts",
        "use_scene_range",
        "frame_start",
        "frame_end",
    ]
    physics = ["physics_skin_from", "secondary_motion", "pin_depth", "pin_rigid", "physics_gravity"]
    assert props(drawn["SKINMODES_PT_physics"]) == physics
    assert props(draw(bpy, addon.ui.SKINMODES_PT_physics.draw_header)) == ["physics_skin"]
    assert props(drawn["SKINMODES_PT_output"]) == ["live_preview", "output", "cache_dir"]
    assert operators(drawn["SKINMODES_PT_output"]) == ["skinmodes.bake"]
    assert props(drawn["SKINMODES_PT_inspect"]) == ["inspect_mode"]
    assert operators(drawn["SKINMODES_PT_inspect"]) == ["skinmodes.show_mode", "skinmodes.hide_mode"]
    assert operators(drawn["SKINMODES_PT_posespace"]) == ["skinmodes.add_pose"]
    assert "Add frames where skin presses on skin" in texts(drawn["SKINMODES_PT_posespace"])


def test_pose_space_panel_lists_the_poses_and_shows_the_blend(addon, creature):
    """With a pose added, the panel shows a row per pose (frame, contact, its group, its contact mode (issue 29),
    remove); once the modes are computed and the rig sampled, the line of blended poses at the current frame."""
    import bpy

    obj, _, scene = creature
    scene.frame_set(12)
    assert bpy.ops.skinmodes.add_pose() == {"FINISHED"}
    obj.skinmodes.poses[0].contact = "GROUP"
    items = draw(bpy, addon.ui.SKINMODES_PT_posespace.draw)
    shown = [i["rna"].split(".")[-1].split("[")[0] for i in items if i.get("rna", "").startswith("SkinmodesPose.")]
    assert shown[0] == "frame" and shown[-1] == "contact_mode"
    assert set(shown) == {"frame", "contact", "contact_group", "contact_mode"}
    assert operators(items) == ["skinmodes.remove_pose", "skinmodes.add_pose"]
    assert "Compute Modes (or preview) to blend the poses" in texts(items)
    obj.skinmodes.poses[0].contact = "AUTO"
    session = addon.session.build_session(obj, scene)
    addon.session.sample_range(session, scene, [12])
    line = [t for t in texts(draw(bpy, addon.ui.SKINMODES_PT_posespace.draw)) if t.startswith("Blended here")]
    assert line == ["Blended here: frame 12 100 %"]


def test_panels_follow_the_settings_and_show_the_status(addon, skinned, tmp_path):
    """Physical stiffness shows pascals and density; computed modes and a bake show their figures."""
    import bpy

    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))  # a point cache needs a saved file
    s = skinned.skinmodes
    s.stiffness_mode = "PHYSICAL"
    s.leak_mode = "GROUP"
    s.use_scene_range, s.frame_start, s.frame_end = False, 1, 6
    material = draw(bpy, addon.ui.SKINMODES_PT_material.draw)
    assert "youngs_modulus" in props(material) and "density" in props(material)
    assert "wobble_hz" not in props(material)
    assert "leak_group" in props(draw(bpy, addon.ui.SKINMODES_PT_leak.draw))
    s.leak_mode = "AUTO"  # the creature has no painted mask
    assert bpy.ops.skinmodes.compute_modes() == {"FINISHED"}
    subspace = texts(draw(bpy, addon.ui.SKINMODES_PT_subspace.draw))
    assert any(t.startswith(f"{s.stat_tets:,} tets") for t in subspace), subspace
    assert any(t.startswith(f"{s.stat_modes} modes, {s.stat_clusters} clusters") for t in subspace), subspace
    sized = texts(draw(bpy, addon.ui.SKINMODES_PT_material.draw))
    assert any(t.startswith("Character size") for t in sized) and any("with these pascals" in t for t in sized)
    assert bpy.ops.skinmodes.bake() == {"FINISHED"}
    output = draw(bpy, addon.ui.SKINMODES_PT_output.draw)
    assert f"Baked point cache, frames {s.bake_start}-{s.bake_end}" in texts(output)
    assert "skinmodes.clear_bake" in operators(output)


def test_panels_without_a_rig_say_what_is_missing(addon):
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    assert addon.ui.SKINMODES_PT_main.poll(bpy.context)
    # Without an Armature modifier the object's own motion is its rig (issue 27) ...
    assert texts(draw(bpy, addon.ui.SKINMODES_PT_main.draw))[0] == "Rig: the object's own motion"
    # ... with the subspace to choose, and no appendage chain to swing.
    assert props(draw(bpy, addon.ui.SKINMODES_PT_subspace.draw))[0] == "subspace_method"
    assert props(draw(bpy, addon.ui.SKINMODES_PT_leak.draw)) == ["leak_mode", "leak_mode", "planted_feet"]
    # ... but an Armature modifier without an armature is a rig left unfinished.
    bpy.context.active_object.modifiers.new("Armature", "ARMATURE")
    assert texts(draw(bpy, addon.ui.SKINMODES_PT_main.draw)) == [
        "The Armature modifier has no armature",
        "Pick one, or remove the modifier",
    ]
    bpy.ops.object.camera_add()
    assert not addon.ui.SKINMODES_PT_main.poll(bpy.context)


@pytest.mark.parametrize(("preset", "label"), [("FAT", "Fat"), ("JELLY", "Jelly"), ("CUSTOM", "Custom")])
def test_material_header_shows_the_objects_preset_and_opens_the_preset_menu(addon, skinned, preset, label):
    import bpy

    skinned.skinmodes.material_preset = preset
    (button,) = draw(bpy, addon.ui.SKINMODES_PT_material.draw_header_preset)
    assert button["draw_string"] == label
