"""Issue 24, item 1 (the rest): a superseded point cache goes only once the .blend is saved without it.

Before: a bake that moved to a new file name (a rename, per-.blend names) or Clear Bake deleted the
object's old file at once; a user who then did not save kept a saved .blend that played the deleted
file and rendered rig-only ("No such file or directory").  Now the old file waits until that .blend
is saved; reopened unsaved, it plays as saved (the file stays: a leftover, never a lost bake).
"""

import numpy as np

from tests.addon.helpers import evaluated
from tests.safety.conftest import run_command


def pc2_frames(path):
    """The number of frames in the .pc2 header (read back, not trusted from the name)."""
    header = np.frombuffer(path.read_bytes()[:32], dtype=np.uint8)
    assert bytes(header[:12]) == b"POINTCACHE2\0"
    return int(np.frombuffer(bytes(header[28:32]), dtype="<i4")[0])


def baked(folder, obj):
    return folder / obj.skinmodes.bake_file[2:]


def plays(bpy, obj, folder):
    """Assert ``obj``'s Mesh Cache modifier plays an existing file: frames read, the mesh moved off the rig."""
    mod = obj.modifiers["Skinmodes Cache"]
    path = folder / mod.filepath[2:]
    assert path.exists(), f"{path} is gone"
    assert pc2_frames(path) == 24
    bpy.context.scene.frame_set(12)
    cached = evaluated(bpy, obj)
    mod.show_viewport = False
    rig_only = evaluated(bpy, obj)
    mod.show_viewport = True
    assert np.abs(cached - rig_only).max() > 1e-4  # the jiggle plays, not the rig alone
    return path


def rebake_renamed(addon, obj, folder):
    """Bake, save, rename and bake again: the new bake has a new file name.  Returns (old, new)."""
    import bpy

    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    old = baked(folder, obj)
    obj.name = "Body_v1"
    addon.api.bake(obj, output="PC2")
    new = baked(folder, obj)
    assert new != old and new.exists()
    return old, new


def test_an_unsaved_rebake_leaves_the_saved_shot_playing(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    name = obj.name
    old, _new = rebake_renamed(addon, obj, folder)
    assert old.exists()
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))  # not saved: the saved shot, from disk
    obj = bpy.data.objects[name]
    assert plays(bpy, obj, folder) == old


def test_saving_removes_the_superseded_file(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    old, new = rebake_renamed(addon, obj, folder)
    bpy.ops.wm.save_mainfile()
    assert not old.exists() and new.exists()
    assert sorted(p.name for p in (folder / "skinmodes_cache").glob("*.pc2")) == [new.name]  # no leftover growth
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    assert plays(bpy, bpy.data.objects["Body_v1"], folder) == new


def test_an_unsaved_clear_bake_leaves_the_saved_shot_playing(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    name = obj.name
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    path = baked(folder, obj)
    kept = addon.bake.clear_bake(obj)
    assert path.exists() and len(kept) == 1 and "until the .blend is saved" in kept[0]
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    assert plays(bpy, bpy.data.objects[name], folder) == path
    # Cleared and saved: the file goes with the save.
    addon.bake.clear_bake(bpy.data.objects[name])
    bpy.ops.wm.save_mainfile()
    assert not path.exists()


def test_the_command_line_deletes_only_after_its_verified_save(addon, installed, tmp_path):
    import bpy

    name, folder = installed
    blend = ("--blend", str(folder / "shot.blend"), "--object", name)
    assert run_command(tmp_path, "bake", *blend, "--frames", "1-24").returncode == 0
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    path = baked(folder, bpy.data.objects[name])
    out = run_command(tmp_path, "clear", *blend, "--no-save")  # the saved shot still plays it
    assert out.returncode == 0, out.stderr
    assert path.exists() and plays(bpy, bpy.data.objects[name], folder) == path
    out = run_command(tmp_path, "clear", *blend)  # saved without it: gone
    assert out.returncode == 0, out.stderr
    assert not path.exists()
