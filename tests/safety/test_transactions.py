"""Issue 12, item 1: a bake replaces the previous bake completely or leaves it exactly as it was.

Each test makes a first bake, then a second one that fails at one point
(a solver error mid-bake, an exception of any type inside the commit, a
failing final rename, a read-only folder, a full disk, SIGTERM) and checks
that the scene (modifiers and their settings, shape keys, actions, the
object's skinmodes properties: hashed by tests/addon/helpers.py) and the
disk (every file, hashed) are exactly as before, and that the message is
one line.  Exact equality is the tolerance: a rollback restores values,
it does not recompute them.
"""

import errno
import os
import signal

import numpy as np
import pytest

from tests.addon.helpers import differences, disk_fingerprint, evaluated, full_fingerprint
from tests.safety import faults


def one_line_error(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg and msg.strip() == msg and msg, msg
    return msg


def rebake_setup(addon, shot, first_output):
    """A first bake of ``first_output``, then a setting changed so a second bake would differ."""
    import bpy

    obj, arm, scene, folder = shot
    addon.api.bake(obj, output=first_output)
    obj.skinmodes.damping_ratio = 0.55
    scene.frame_set(7)
    return obj, arm, scene, folder, (full_fingerprint(bpy, obj), disk_fingerprint(folder))


def state(bpy, obj, folder):
    return full_fingerprint(bpy, obj), disk_fingerprint(folder)


def assert_unchanged(before, after):
    assert not differences(before, after), "\n".join(differences(before, after)[:8])


def scale_bone_to_zero(arm, frame):
    pb = arm.pose.bones["tail.3"]
    for f, s in ((frame - 1, 1.0), (frame, 0.0), (frame + 1, 1.0)):
        pb.scale = (s, s, s)
        pb.keyframe_insert("scale", frame=f)


@pytest.mark.parametrize("first", ["PC2", "SHAPE_KEYS"])
def test_solver_error_mid_bake_keeps_the_previous_bake(addon, shot, first):
    """The issue's case: a bone scaled to 0 at frame 12, shape-key output (it raised a raw LinAlgError)."""
    import bpy

    obj, arm, _scene, folder, _ = rebake_setup(addon, shot, first)
    scale_bone_to_zero(arm, 12)
    before = state(bpy, obj, folder)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="SHAPE_KEYS")
    assert one_line_error(err).startswith("frame 12: ")
    assert_unchanged(before, state(bpy, obj, folder))
    # The operator says the same in one line, and Clear Bake still works on the old bake.
    with pytest.raises(RuntimeError, match="frame 12: "):
        bpy.ops.skinmodes.bake(output="SHAPE_KEYS")
    assert_unchanged(before, state(bpy, obj, folder))
    assert bpy.ops.skinmodes.clear_bake.poll()


@pytest.mark.parametrize("first", ["PC2", "SHAPE_KEYS"])
@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError, MemoryError])
def test_any_exception_inside_the_shape_key_commit_rolls_back(addon, shot, monkeypatch, first, error):
    """Fault injected into our own code, after every new shape key and the action exist (no Blender mock)."""
    import bpy

    obj, _, _scene, folder, _ = rebake_setup(addon, shot, first)
    before = state(bpy, obj, folder)
    made = []

    def fail(action):
        made.append(len([k for k in obj.data.shape_keys.key_blocks if k.name.startswith("skinmodes.")]))
        raise error("injected")

    monkeypatch.setattr(addon.bake.outputs, "fcurves_of", fail)
    job = addon.bake.BakeJob(bpy.context, obj, output="SHAPE_KEYS")
    for _ in job.steps():
        pass
    with pytest.raises(BaseException) as err:
        job.commit()
    assert made and made[0] >= 24  # the failure came with the new keys built beside the old ones
    if issubclass(error, Exception):
        assert isinstance(err.value, addon.core.errors.SkinmodesError)
        assert "nothing was changed" in one_line_error(err)
    else:
        assert type(err.value) is error  # an interrupt stays an interrupt, after the rollback
    assert_unchanged(before, state(bpy, obj, folder))


def failing_replace(monkeypatch, code):
    """os.replace fails for .pc2 destinations only (monkeypatched: a rename cannot be made to fail on demand)."""
    real = os.replace

    def replace(src, dst, *a, **kw):
        if str(dst).endswith(".pc2"):
            raise OSError(code, os.strerror(code), str(dst))
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("first", ["PC2", "SHAPE_KEYS"])
def test_failing_final_rename_keeps_the_previous_bake(addon, shot, monkeypatch, first):
    import bpy

    obj, _, scene, folder, _ = rebake_setup(addon, shot, first)
    before = state(bpy, obj, folder)
    failing_replace(monkeypatch, errno.EIO)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2")
    assert "the previous bake is unchanged" in one_line_error(err)
    assert_unchanged(before, state(bpy, obj, folder))
    if first == "PC2":  # and it still plays back what it played before
        scene.frame_set(9)
        shown = evaluated(bpy, obj)
        monkeypatch.undo()
        addon.api.bake(obj, output="PC2")
        scene.frame_set(9)
        assert np.abs(evaluated(bpy, obj) - shown).max() > 1e-6  # the new damping shows once it can be written


def test_rename_onto_a_folder_fails_for_real_and_rolls_back(addon, shot):
    """Real mechanism: a folder appears where the new cache goes while the bake runs (rename gives EISDIR)."""
    import bpy

    obj, _, _scene, folder, (scene_before, disk_before) = rebake_setup(addon, shot, "SHAPE_KEYS")
    job = addon.bake.BakeJob(bpy.context, obj, output="PC2")
    for _ in job.steps():
        pass
    job.abs_path.mkdir()
    (job.abs_path / "keep.txt").write_text("someone's folder")
    planted = disk_fingerprint(job.abs_path)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        job.commit()
    assert "the previous bake is unchanged" in one_line_error(err)
    rel = job.abs_path.relative_to(folder)
    expected = dict(disk_before, **{str(rel / name): digest for name, digest in planted.items()})
    assert_unchanged((scene_before, expected), state(bpy, obj, folder))


def test_read_only_folder_early_for_real_and_late_at_the_rename(addon, shot, monkeypatch):
    """Read-only before the bake: a real read-only bind mount (root only, else skipped), refused up front.
    Read-only discovered at the final rename: monkeypatched os.replace (EROFS); rolled back."""
    import bpy

    obj, _, _scene, folder, _ = rebake_setup(addon, shot, "PC2")
    before = state(bpy, obj, folder)
    with faults.read_only(folder) as ok:
        if ok:
            with pytest.raises(addon.core.errors.SkinmodesError) as err:
                addon.api.bake(obj, output="PC2")
            assert "cannot write" in one_line_error(err)
            assert_unchanged(before, state(bpy, obj, folder))
    failing_replace(monkeypatch, errno.EROFS)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2")
    assert "writable" in one_line_error(err)
    assert_unchanged(before, state(bpy, obj, folder))


def test_full_disk_keeps_the_previous_bake(addon, creature, tmp_path, monkeypatch):
    """Real: a 4 MiB tmpfs as the cache folder, filled before the re-bake (root only).
    Elsewhere: monkeypatched PC2Writer.write raising ENOSPC (our code, not Blender's)."""
    import bpy

    obj, _, _scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    with faults.small_disk(tmp_path / "disk", 4096) as disk:
        obj.skinmodes.cache_dir = str(disk or tmp_path / "disk") + "/"
        addon.api.bake(obj, output="PC2")
        obj.skinmodes.damping_ratio = 0.55
        if disk is not None:
            faults.fill(disk)
        else:

            def full(self, positions):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            monkeypatch.setattr(addon.core.io.pc2.PC2Writer, "write", full)
        before = full_fingerprint(bpy, obj), disk_fingerprint(tmp_path)
        with pytest.raises(addon.core.errors.SkinmodesError) as err:
            addon.api.bake(obj, output="PC2")
        assert "free some disk space" in one_line_error(err)
        assert_unchanged(before, (full_fingerprint(bpy, obj), disk_fingerprint(tmp_path)))


def test_sigterm_during_a_cli_bake_changes_nothing(addon, dev_zip, shot, tmp_path):
    """A real SIGTERM to the headless command while it writes frames: the .blend and every file as before."""
    import bpy

    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    cache = folder / "skinmodes_cache"
    before = disk_fingerprint(folder)
    proc = faults.start_cli(
        dev_zip,
        tmp_path / "profile",
        *("bake", "--blend", str(folder / "shot.blend"), "--object", obj.name, "--frames", "1-3000"),
        *("--damping-ratio", "0.55"),
    )
    faults.wait_for(proc, lambda: faults.partials(cache))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM
    assert faults.last_line(err).startswith("skinmodes: interrupted by SIGTERM before the .blend was saved")
    assert_unchanged(before, disk_fingerprint(folder))


@pytest.mark.parametrize(
    ("first", "second"), [("SHAPE_KEYS", "SHAPE_KEYS"), ("PC2", "SHAPE_KEYS"), ("SHAPE_KEYS", "PC2")]
)
def test_a_successful_rebake_replaces_the_previous_bake_completely(addon, shot, first, second):
    """The other half of the promise: nothing of the first bake is left once the second is in place."""
    import bpy

    obj, _, _scene, folder = shot
    actions = {a.name for a in bpy.data.actions}
    addon.api.bake(obj, output=first)
    first_file = obj.skinmodes.bake_file
    obj.skinmodes.damping_ratio = 0.55
    addon.api.bake(obj, output=second)
    s = obj.skinmodes
    keys = obj.data.shape_keys
    names = [k.name for k in keys.key_blocks] if keys else []
    ours = [n for n in names if n.startswith("skinmodes.")]
    new_actions = {a.name for a in bpy.data.actions} - actions
    if second == "SHAPE_KEYS":
        assert ours == [f"skinmodes.{f:05d}" for f in range(1, 25)] and names[0] == "Basis"
        assert new_actions == {s.bake_action} and s.bake_action == f"skinmodes.{addon.bake.cache_stem(obj)}"
        assert keys.animation_data.action.name == s.bake_action
        assert obj.modifiers.get("Skinmodes Cache") is None
    else:
        assert keys is None and not new_actions  # the Basis the shape-key bake added is gone too
        assert [m.name for m in obj.modifiers].count("Skinmodes Cache") == 1
    if first == "PC2" and second != "PC2":
        assert not (folder / first_file[2:]).exists()  # its recorded file went with it
    assert s.bake_kind == second and s.live_preview is False
