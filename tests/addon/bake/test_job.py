"""Bake, preview and playback agree; a cancelled bake leaves the scene and the disk as they were.

Tolerances: positions are stored as float32 in .pc2 files and in mesh
attributes, so "equal" means equal to float32 round-off on metre-sized
coordinates (1e-5 m); shape keys pass through an inverse-skinning 3x3 solve
and the armature's float32 arithmetic (1e-4 m).
"""

from pathlib import Path

import numpy as np
import pytest

from tests.addon.helpers import actions_fingerprint, evaluated, scene_fingerprint


def save(bpy, tmp_path, name="shot.blend"):
    path = tmp_path / name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def simulated_positions(addon, bpy, obj, scene, frames):
    """What the simulator says the mesh should look like: rig-deformed positions + secondary offsets."""
    session = addon.session.current_session(obj, scene) or addon.session.build_session(obj, scene)
    addon.session.sample_range(session, scene, session.missing_frames(session.end))
    out = {}
    with addon.session.outputs_muted(obj):
        for f in frames:
            scene.frame_set(f)
            out[f] = evaluated(bpy, obj) + session.offsets_local(f)
    return out


def test_point_cache_plays_back_the_simulated_positions(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    save(bpy, tmp_path)
    before = actions_fingerprint(bpy)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    s = obj.skinmodes
    assert s.bake_kind == "PC2" and s.bake_file.startswith("//")
    mod = obj.modifiers["Skinmodes Cache"]
    assert mod.type == "MESH_CACHE" and obj.modifiers[-1] == mod
    expected = simulated_positions(addon, bpy, obj, scene, range(1, 25))
    moved = 0.0
    for f in (1, 7, 13, 24, 5):
        scene.frame_set(f)
        got = evaluated(bpy, obj)
        assert np.abs(got - expected[f]).max() < 1e-5
        moved = max(moved, np.abs(expected[f] - evaluated_rig(bpy, obj, scene, f)).max())
    assert moved > 1e-3  # there is secondary motion to see
    assert actions_fingerprint(bpy) == before


def evaluated_rig(bpy, obj, scene, f):
    mod = obj.modifiers["Skinmodes Cache"]
    mod.show_viewport = False
    scene.frame_set(f)
    out = evaluated(bpy, obj)
    mod.show_viewport = True
    return out


def test_preview_equals_bake_in_any_order_of_frames(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    save(bpy, tmp_path)
    obj.skinmodes.live_preview = True
    assert obj.modifiers.get("Skinmodes Preview") is not None
    order = [12, 3, 24, 1, 17, 16, 18, 5, 24, 2, *np.random.default_rng(0).integers(1, 25, 8).tolist()]
    shown = {}
    for f in order:
        scene.frame_set(int(f))
        shown[int(f)] = evaluated(bpy, obj)
    obj.skinmodes.live_preview = False
    assert obj.modifiers.get("Skinmodes Preview") is None
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - pos).max() < 1e-5, f


def test_cancelled_bake_leaves_scene_and_disk_as_before(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    save(bpy, tmp_path)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    cache_dir = Path(bpy.path.abspath(obj.skinmodes.bake_file)).parent  # where the bake writes, .partial too
    files_before = sorted(p.name for p in cache_dir.iterdir())
    assert any(name.endswith(".pc2") for name in files_before)  # the folder looked in is the bake's
    pc2_bytes = (tmp_path / obj.skinmodes.bake_file[2:]).read_bytes()
    obj.skinmodes.damping_ratio = 0.6  # a different simulation, so a re-bake would change the file
    scene.frame_set(9)
    before = scene_fingerprint(bpy, obj)
    job = addon.bake.BakeJob(bpy.context, obj, output="PC2")
    steps = job.steps()
    for _ in range(10):
        next(steps)
    job.cancel()
    assert scene_fingerprint(bpy, obj) == before
    assert sorted(p.name for p in cache_dir.iterdir()) == files_before  # no partial file
    assert (tmp_path / obj.skinmodes.bake_file[2:]).read_bytes() == pc2_bytes
    # A failure mid-bake is cancelled the same way.
    job = addon.bake.BakeJob(bpy.context, obj, output="SHAPE_KEYS")
    steps = job.steps()
    next(steps)
    job.cancel()
    assert scene_fingerprint(bpy, obj) == before


def test_settings_and_bake_survive_save_and_reload(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    s = obj.skinmodes
    s.material_preset = "RUBBER"
    s.damping_ratio = 0.7
    s.modes = 6
    path = save(bpy, tmp_path)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    scene.frame_set(10)
    before = evaluated(bpy, obj)
    name = obj.name
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects[name]
    s = obj.skinmodes
    assert (s.material_preset, s.damping_ratio, s.modes, s.bake_kind) == ("CUSTOM", pytest.approx(0.7), 6, "PC2")
    bpy.context.scene.frame_set(10)
    assert np.abs(evaluated(bpy, obj) - before).max() < 1e-6


def test_preview_equals_bake_with_a_training_pose(addon, creature, tmp_path):
    """The pose-space path (a training pose with painted contact) goes through the same frame
    simulation for the preview and the bake: equal to float32 round-off in any order of frames."""
    import bpy

    from tests.addon.session.test_session import tip_group

    obj, _, scene = creature
    tip_group(obj)
    pose = obj.skinmodes.poses.add()
    pose.frame, pose.contact, pose.contact_group = 12, "GROUP", "tip"
    save(bpy, tmp_path)
    obj.skinmodes.live_preview = True
    shown = {}
    for f in [12, 3, 24, 1, 17, 16, 5]:
        scene.frame_set(f)
        shown[f] = evaluated(bpy, obj)
    obj.skinmodes.live_preview = False
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    moved = 0.0
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - pos).max() < 1e-5, f
        moved = max(moved, np.abs(pos - evaluated_rig(bpy, obj, scene, f)).max())
    assert moved > 1e-3
