"""Travel "On the Object" (skinmodes_addon/bake/travel.py, issue 26): a gait's travel keyed on the object's
transform in skinmodes' own action, the cache holding the rest, in real Blender.

The gait is a tiny seeded search (one restart of two generations of four 1 s rollouts) on the legless blob:
weak, but it moves and turns the body, which is all the keys need.  Positions compare in world space at
1e-5 m (float32 positions and keys of a 1 m blob).
"""

import numpy as np
import pytest

from tests.addon.helpers import evaluated
from tests.addon.locomotion.conftest import END, START, blob_object

FRAMES = (START, 5, 9, END)


def world(bpy, obj):
    """World positions (k, 3) of ``obj``'s evaluated mesh at the current frame."""
    M = np.array(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world)
    return evaluated(bpy, obj) @ M[:3, :3].T + M[:3, 3]


def shown(bpy, obj):
    """Per frame of FRAMES: the world mesh and the object's world matrix."""
    out = {}
    for f in FRAMES:
        bpy.context.scene.frame_set(f)
        out[f] = (world(bpy, obj), np.array(obj.matrix_world))
    return out


@pytest.fixture
def crawler(addon, tmp_path):
    """The blob with a tiny gait, turned and moved off the origin so the keys must compose with its transform;
    the .blend saved."""
    import bpy

    obj = blob_object(bpy, tmp_path)
    obj.location, obj.rotation_euler = (0.4, -0.2, 0.0), (0.0, 0.0, 0.6)
    settings = addon.core.locomotion.stored.GaitSettings
    tiny = settings(rollout_s=1.0, judge_s=0.0, generations=2, population=4, restarts=1, seed=5)
    job = addon.locomotion.job.start_gait_job(obj, bpy.context.scene, tiny)
    assert job.wait(300)
    addon.locomotion.job.finish_gait_job(job)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "crawl.blend"))
    return obj


def test_the_keys_times_the_cache_is_the_cached_crawl_and_clear_bake_takes_exactly_them_back(addon, crawler, tmp_path):
    import bpy

    obj = crawler
    own = np.array(obj.matrix_world)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}  # Travel: In the Cache (the default)
    in_cache = shown(bpy, obj)
    assert obj.animation_data is None and all(np.array_equal(m, own) for _, m in in_cache.values())
    assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    obj.skinmodes.gait_travel = "OBJECT"
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name.startswith("skinmodes.travel.") and obj.get("skinmodes_travel")
    on_object = shown(bpy, obj)
    for f in FRAMES:
        assert np.abs(on_object[f][0] - in_cache[f][0]).max() < 1e-5, f
    assert np.abs(on_object[START][1] - own).max() < 1e-6  # the gait starts at rest: the object where it was
    assert np.abs(on_object[END][1] - own).max() > 1e-4  # then the keys carry the body
    # the cache holds the deformation only: its centre moves less than the whole crawl's (object space)
    rest = np.array([v.co for v in obj.data.vertices]).mean(axis=0)
    bpy.context.scene.frame_set(END)
    whole = (in_cache[END][0] - own[:3, 3]) @ np.linalg.inv(own[:3, :3]).T
    assert np.linalg.norm(evaluated(bpy, obj).mean(axis=0) - rest) < np.linalg.norm(whole.mean(axis=0) - rest)
    # saved and opened again: the same keys, the same mesh
    path = str(tmp_path / "crawl.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    name = obj.name
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects[name]
    reopened = shown(bpy, obj)
    for f in FRAMES:
        assert np.abs(reopened[f][0] - in_cache[f][0]).max() < 1e-5, f
        np.testing.assert_allclose(reopened[f][1], on_object[f][1], atol=1e-6)
    name = obj.animation_data.action.name
    assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    assert obj.animation_data.action is None and bpy.data.actions.get(name) is None
    assert not obj.get("skinmodes_travel")
    for f in FRAMES:
        bpy.context.scene.frame_set(f)
        np.testing.assert_allclose(np.array(obj.matrix_world), own, atol=1e-6)


def test_a_rebake_replaces_the_keys_and_in_the_cache_takes_them_off(addon, crawler):
    import bpy

    obj = crawler
    own = np.array(obj.matrix_world)
    obj.skinmodes.gait_travel = "OBJECT"
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    first = shown(bpy, obj)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}  # read without its own keys: the same bake
    again = shown(bpy, obj)
    travel = [a.name for a in bpy.data.actions if a.name.startswith("skinmodes.travel.")]
    assert travel == [obj.animation_data.action.name]
    for f in FRAMES:
        np.testing.assert_allclose(again[f][1], first[f][1], atol=1e-6)
        assert np.abs(again[f][0] - first[f][0]).max() < 1e-5
    obj.skinmodes.gait_travel = "CACHE"
    assert bpy.ops.skinmodes.bake(output="SHAPE_KEYS") == {"FINISHED"}
    assert obj.animation_data.action is None and not obj.get("skinmodes_travel")
    assert not [a for a in bpy.data.actions if a.name.startswith("skinmodes.travel.")]
    for f in FRAMES:
        bpy.context.scene.frame_set(f)
        np.testing.assert_allclose(np.array(obj.matrix_world), own, atol=1e-6)
        assert np.abs(world(bpy, obj) - first[f][0]).max() < 1e-5


def test_a_transform_the_user_animates_is_refused_in_one_line_and_nothing_changes(addon, crawler):
    import bpy

    obj = crawler
    obj.skinmodes.gait_travel = "OBJECT"
    obj.keyframe_insert("location", frame=START)
    mine = obj.animation_data.action
    with pytest.raises(RuntimeError, match="will not touch your animation") as err:
        bpy.ops.skinmodes.bake(output="PC2")
    assert "\n" not in str(err.value).strip()
    assert obj.animation_data.action == mine and obj.skinmodes.bake_kind == ""
    assert not obj.get("skinmodes_travel") and obj.modifiers.get("Skinmodes Cache") is None


def test_a_failed_commit_leaves_the_previous_keys(addon, crawler, monkeypatch):
    """The transaction's undo: a failure after the keys are written puts the old ones back."""
    import bpy

    obj = crawler
    obj.skinmodes.gait_travel = "OBJECT"
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    before = (obj.animation_data.action.name, obj["skinmodes_travel"], shown(bpy, obj))
    transaction = addon.bake.transaction
    real = transaction.put_travel_keys

    def failing(*args, **kwargs):
        real(*args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(transaction, "put_travel_keys", failing)
    with pytest.raises(RuntimeError, match=r"nothing was changed|No space"):
        bpy.ops.skinmodes.bake(output="PC2")
    assert (obj.animation_data.action.name, obj["skinmodes_travel"]) == before[:2]
    assert [a.name for a in bpy.data.actions if a.name.startswith("skinmodes.travel.")] == [before[0]]
    after = shown(bpy, obj)
    for f in FRAMES:
        np.testing.assert_allclose(after[f][1], before[2][f][1], atol=1e-6)
        assert np.abs(after[f][0] - before[2][f][0]).max() < 1e-5


def test_one_undo_takes_the_bake_and_its_keys_back_and_redo_brings_them(addon, crawler):
    """Bake is one undo step (bl_options UNDO; pushed here as the UI pushes it after an operator): Ctrl-Z leaves
    the object as before, keys and record included, and redo brings them back."""
    import bpy

    assert "UNDO" in addon.operators.SKINMODES_OT_bake.bl_options
    name, own = crawler.name, np.array(crawler.matrix_world)
    crawler.skinmodes.gait_travel = "OBJECT"
    bpy.ops.ed.undo_push(message="before the bake")
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    bpy.ops.ed.undo_push(message="Bake Secondary Motion")
    baked = shown(bpy, bpy.data.objects[name])
    assert bpy.ops.ed.undo() == {"FINISHED"}
    obj = bpy.data.objects[name]
    assert obj.animation_data is None or obj.animation_data.action is None
    assert not obj.get("skinmodes_travel") and obj.skinmodes.bake_kind == ""
    bpy.context.scene.frame_set(END)
    np.testing.assert_allclose(np.array(obj.matrix_world), own, atol=1e-6)
    assert bpy.ops.ed.redo() == {"FINISHED"}
    obj = bpy.data.objects[name]
    assert obj.animation_data.action.name.startswith("skinmodes.travel.") and obj.get("skinmodes_travel")
    again = shown(bpy, obj)
    for f in FRAMES:
        np.testing.assert_allclose(again[f][1], baked[f][1], atol=1e-6)
        assert np.abs(again[f][0] - baked[f][0]).max() < 1e-5
