"""Bad input gets a one-line report and changes nothing."""

import pytest

from tests.addon.helpers import flatten, scene_fingerprint


def report_of(bpy, op, **kw):
    """Run an operator that must fail; return its one-line error."""
    with pytest.raises(RuntimeError) as err:
        op(**kw)
    msg = str(err.value).strip()
    assert msg.startswith("Error:"), msg
    line = msg.removeprefix("Error:").strip()
    assert "\n" not in line
    return line


def make_active(bpy, obj):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)


def test_non_mesh_and_mesh_with_an_empty_armature_modifier_fail_poll_with_a_reason(addon):
    import bpy

    bpy.ops.object.empty_add()
    assert not bpy.ops.skinmodes.bake.poll()
    bpy.ops.mesh.primitive_cube_add()
    assert bpy.ops.skinmodes.bake.poll()  # no Armature modifier: its own motion is its rig (issue 27)
    bpy.context.active_object.modifiers.new("Armature", "ARMATURE")
    assert not bpy.ops.skinmodes.bake.poll()
    with pytest.raises(RuntimeError, match="Armature modifier"):
        bpy.ops.skinmodes.bake()
    from bl_ext.user_default.skinmodes.character import check_object
    from bl_ext.user_default.skinmodes.core.errors import SkinmodesError

    with pytest.raises(SkinmodesError, match="not a mesh"):
        check_object(bpy.data.objects["Empty"])


def test_rig_problems_are_reported(addon, creature, tmp_path):
    import bpy

    obj, arm, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    for b in arm.data.bones:
        b.use_deform = False
    before = scene_fingerprint(bpy, obj)
    assert "no deforming bones" in report_of(bpy, bpy.ops.skinmodes.bake)
    assert scene_fingerprint(bpy, obj) == before
    for b in arm.data.bones:
        b.use_deform = True
    for vg in obj.vertex_groups:
        vg.add(list(range(len(obj.data.vertices))), 0.0, "REPLACE")
    assert "all bone weights" in report_of(bpy, bpy.ops.skinmodes.bake)
    assert scene_fingerprint(bpy, obj) == before


def test_flat_mesh_is_reported(addon, creature, tmp_path):
    import bpy

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    flatten(obj)
    before = scene_fingerprint(bpy, obj)
    assert "flat" in report_of(bpy, bpy.ops.skinmodes.bake)
    assert scene_fingerprint(bpy, obj) == before


def test_empty_frame_range_is_reported(addon, creature, tmp_path):
    import bpy

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    s = obj.skinmodes
    s.use_scene_range = False
    s.frame_start, s.frame_end = 20, 10
    before = scene_fingerprint(bpy, obj)
    assert "frame range" in report_of(bpy, bpy.ops.skinmodes.bake)
    assert scene_fingerprint(bpy, obj) == before


def test_unsaved_blend_with_point_cache_output_is_reported(addon, creature):
    import bpy

    obj, _, _ = creature
    obj.skinmodes.cache_dir = "//skinmodes_cache/"  # beside the .blend: an unsaved file has none (an absolute
    before = scene_fingerprint(bpy, obj)  # folder would take it: tests/safety/test_cache_folders.py)
    report = report_of(bpy, bpy.ops.skinmodes.bake, output="PC2")
    assert "save the .blend" in report and "or set an absolute Cache Folder" in report
    assert scene_fingerprint(bpy, obj) == before


def test_unwritable_cache_folder_is_reported(addon, creature, tmp_path):
    import bpy

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the folder should be")
    obj.skinmodes.cache_dir = str(blocker) + "/"
    before = scene_fingerprint(bpy, obj)
    assert "cannot write" in report_of(bpy, bpy.ops.skinmodes.bake, output="PC2")
    assert scene_fingerprint(bpy, obj) == before
    assert blocker.read_text() == "a file where the folder should be"


def test_mesh_edited_after_computing_modes_is_detected(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    assert bpy.ops.skinmodes.compute_modes() == {"FINISHED"}
    session = addon.session.session_for(obj)
    assert addon.session.current_session(obj, scene) is session
    obj.data.vertices[0].co.z += 0.05
    obj.data.update()
    assert addon.session.current_session(obj, scene) is None  # stale: never reused
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    fresh = addon.session.session_for(obj)
    assert fresh is not session and fresh.geometry.matches(obj) and not session.geometry.matches(obj)


def test_shape_key_output_refuses_to_touch_animated_shape_keys(addon, creature, tmp_path):
    import bpy

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    obj.shape_key_add(name="Basis")
    smile = obj.shape_key_add(name="Smile")
    smile.keyframe_insert("value", frame=1)
    before = scene_fingerprint(bpy, obj)
    assert "will not touch your keyframes" in report_of(bpy, bpy.ops.skinmodes.bake, output="SHAPE_KEYS")
    assert scene_fingerprint(bpy, obj) == before
