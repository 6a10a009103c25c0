"""Issue 24, item 1: shots in one folder, renames and test bakes never share a cache file.

Before: the name hashed only the object's name and library, so ``shot010.blend`` and
``shot020.blend`` holding the same character, a renamed "Body" and a new "Body", and a
``--no-save`` test bake of a saved shot all wrote (and Clear Bake deleted) one file.  Now the
name also hashes the .blend (its path as seen from the cache folder), a name another object of
the file still plays is skipped, and a file is deleted only by the .blend that wrote it.
File contents are compared byte for byte (exact): a file another shot plays must not change.
"""

import json
from pathlib import Path

from tests.addon.helpers import evaluated
from tests.safety.conftest import run_command


def baked(folder, obj):
    path = folder / obj.skinmodes.bake_file[2:]
    return path, path.read_bytes()


def test_two_shots_in_one_folder_keep_their_own_files(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    name = obj.name
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    first, data = baked(folder, obj)
    # shot020: the same character, saved beside it, baked with other settings.
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / "shot020.blend"))
    obj = bpy.data.objects[name]
    obj.skinmodes.damping_ratio = 0.6
    summary = addon.api.bake(obj, output="PC2")
    second, _ = baked(folder, obj)
    assert second != first and first.read_bytes() == data
    assert any("kept" in m and "shot.blend" in m for m in summary["messages"]), summary["messages"]
    # Clear Bake in shot020 deletes its own file only.
    assert addon.bake.clear_bake(obj) == [] and not second.exists()
    assert first.read_bytes() == data
    # shot.blend still plays its file.
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    obj = bpy.data.objects[name]
    assert obj.modifiers["Skinmodes Cache"].filepath == f"//{first.relative_to(folder)}"
    bpy.context.scene.frame_set(12)
    evaluated(bpy, obj)  # plays without "No such file"


def test_a_renamed_object_keeps_its_file_when_a_new_one_takes_its_name(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2")
    old, data = baked(folder, obj)
    name = obj.name
    obj.name = "Body_v1"
    new = obj.copy()
    new.name = name
    bpy.context.scene.collection.objects.link(new)
    new.skinmodes.damping_ratio = 0.6
    addon.api.bake(new, output="PC2")
    path, _ = baked(folder, new)
    assert path != old and old.read_bytes() == data
    assert obj.modifiers["Skinmodes Cache"].filepath == f"//{old.relative_to(folder)}"
    # Clearing the new one leaves the renamed one's file; clearing that one deletes it.
    assert addon.bake.clear_bake(new) == [] and not path.exists() and old.read_bytes() == data
    assert addon.bake.clear_bake(obj) == [] and not old.exists()


def test_an_old_name_keeps_playing_and_is_never_deleted(addon, shot):
    """Migration: a bake recorded before per-.blend names (no .blend in the record) keeps its modifier's
    file; a rebake or Clear Bake keeps that file (another shot may play it) and says so."""
    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2")
    path, data = baked(folder, obj)
    legacy = path.with_name("Creature-0123456789.pc2")
    path.rename(legacy)
    stored = f"//{legacy.relative_to(folder)}"
    obj.modifiers["Skinmodes Cache"].filepath = stored
    obj.skinmodes.bake_file = obj.skinmodes.bake_files = stored  # the old record: the path alone
    kept = addon.bake.clear_bake(obj)
    assert len(kept) == 1 and kept[0].startswith(f"kept {stored}: ") and legacy.read_bytes() == data


def test_a_no_save_test_bake_leaves_the_saved_shot_s_file(addon, installed, tmp_path):
    import bpy

    name, folder = installed
    args = ("bake", "--blend", str(folder / "shot.blend"), "--object", name)
    out = run_command(tmp_path, *args, "--frames", "1-24")
    assert out.returncode == 0, out.stderr
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    path, data = baked(folder, bpy.data.objects[name])
    out = run_command(tmp_path, *args, "--frames", "1-5", "--no-save")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["files"] and summary["files"][0] != str(path)
    assert path.read_bytes() == data
    # Issue 39 (low): the test bake's file was left for ever, and nothing plays it.  It says so, and the
    # object's next saved bake removes it (and only it: the saved shot's file is replaced as always).
    test_file = Path(summary["files"][0])
    assert test_file.exists() and [m for m in summary["messages"] if "a test bake: nothing saved plays" in m]
    out = run_command(tmp_path, *args, "--frames", "1-6")
    assert out.returncode == 0, out.stderr
    again = json.loads(out.stdout)
    assert not test_file.exists() and Path(again["files"][0]).exists()
    assert [m for m in again["messages"] if m.startswith(f"removed {test_file.name}, a test bake's")], again
