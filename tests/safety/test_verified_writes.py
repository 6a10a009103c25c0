"""Issue 24, item 4: what was written is checked before it is trusted.

Before: on a full disk Blender wrote a truncated .blend (64 KiB, "Missing DNA block") and the
command line printed ``saved`` and exited 0.  Now the saved .blend is read back (its objects
listed, as Blender reads a library) and a damaged one is reported in one line, exit 1, with the
previous version put back.  The full disk is a real tmpfs (root and mount), else skipped.
"""

import json
import os
import shutil

import pytest

from tests.safety import faults
from tests.safety.conftest import run_command


def test_a_blend_damaged_by_a_full_disk_is_reported_and_the_previous_one_kept(addon, installed, tmp_path):
    import bpy

    name, folder = installed
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    bpy.data.objects[name].skinmodes.cache_dir = str(tmp_path / "cache") + "/"  # the caches have room
    bpy.ops.wm.save_mainfile()
    size = (folder / "shot.blend").stat().st_size
    with faults.small_disk(tmp_path / "disk", size // 1024 + 96) as disk:
        if disk is None:
            pytest.skip("this machine cannot mount a small disk (needs root and mount)")
        shutil.copy(folder / "shot.blend", disk / "shot.blend")
        data = (disk / "shot.blend").read_bytes()
        filler = faults.fill(disk)
        os.truncate(filler, max(0, filler.stat().st_size - 48 * 1024))  # 48 KiB left: less than a .blend
        out = run_command(tmp_path, "bake", "--blend", str(disk / "shot.blend"), "--object", name, "--frames", "1-4")
        assert out.returncode == 1, (out.stdout, out.stderr[-2000:])
        line = faults.last_line(out.stderr)
        assert line.startswith("skinmodes: error: ") and "shot.blend" in line and "disk" in line, line
        assert (disk / "shot.blend").read_bytes() == data  # the previous .blend, whole
        with pytest.raises(json.JSONDecodeError):
            json.loads(out.stdout or "x")


def test_a_failed_save_puts_back_the_point_cache_the_bake_replaced(addon, installed, tmp_path):
    """Issue 39, item 1: a 4-frame bake of the shot exists; a 12-frame bake of the same shot at another Wobble
    runs out of space while the command saves the .blend.  The .blend was put back before; now the point
    cache it plays is too, byte for byte, nothing the failed bake wrote is left, and the line says so.  (The
    caches have room; only the .blend's disk is full.)"""
    import bpy

    name, folder = installed
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    bpy.data.objects[name].skinmodes.cache_dir = str(tmp_path / "cache") + "/"
    bpy.ops.wm.save_mainfile()
    size = (folder / "shot.blend").stat().st_size
    with faults.small_disk(tmp_path / "disk", 2 * (size // 1024) + 256) as disk:
        if disk is None:
            pytest.skip("this machine cannot mount a small disk (needs root and mount)")
        shutil.copy(folder / "shot.blend", disk / "shot.blend")
        blend = str(disk / "shot.blend")
        first = run_command(tmp_path, "bake", "--blend", blend, "--object", name, "--frames", "1-4")
        assert first.returncode == 0, first.stderr[-2000:]
        before = {c.name: c.read_bytes() for c in (tmp_path / "cache").glob("*.pc2")}
        assert len(before) == 1, before.keys()
        data = (disk / "shot.blend").read_bytes()
        (disk / "shot.blend1").unlink(missing_ok=True)  # Blender's own backup: room is what is tested
        filler = faults.fill(disk)
        os.truncate(filler, max(0, filler.stat().st_size - 48 * 1024))  # 48 KiB left: less than a .blend
        out = run_command(tmp_path, "bake", "--blend", blend, "--object", name, "--frames", "1-12", "--wobble-hz", "5")
        assert out.returncode == 1, (out.stdout, out.stderr[-2000:])
        line = faults.last_line(out.stderr)
        assert "shot.blend" in line and "point cache" in line, line
        assert (disk / "shot.blend").read_bytes() == data
    after = {c.name: c.read_bytes() for c in (tmp_path / "cache").glob("*.pc2")}
    assert after == before  # the 4-frame bake the .blend plays, whole, and nothing else
    assert not list((tmp_path / "cache").glob("*.replaced"))  # the kept copies went back in place


def test_a_point_cache_that_reads_back_wrong_replaces_nothing(addon, shot, monkeypatch):
    """The writer's header is made to disagree with what it was asked for (as a faulty disk or a bug
    would): the read-back refuses the file before it replaces the previous bake.  Exact comparison."""
    import bpy

    from tests.addon.helpers import disk_fingerprint, full_fingerprint

    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2", frames=(1, 6))
    obj.skinmodes.damping_ratio = 0.55
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    pc2 = addon.core.io.pc2
    real = pc2.header_bytes
    monkeypatch.setattr(pc2, "header_bytes", lambda points, start, samples: real(points, start, samples + 1))
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2", frames=(1, 6))
    assert "reads back wrong" in str(err.value) and "\n" not in str(err.value)
    assert (full_fingerprint(bpy, obj), disk_fingerprint(folder)) == before
