"""Issue 12, item 12 (the command line): a read-only .blend is refused before the bake, stdout is
pure JSON, negative frame ranges bake, no temporary folder is left behind, and long stages say
where they are on stderr.

Every run is the command in its own process, as ``blender -b FILE --command skinmodes ...`` runs
it: the extension installed once (by ``tools/skinmodes_cli.py --install``), then enabled the way
Blender enables it at start-up, and ``cli.main`` called.  The read-only .blend is a real read-only
bind mount where this machine allows one (root and ``mount``), else that case is skipped; the
read-only *file* (which only binds a user who is not root) is a monkeypatched ``os.access``.
"""

import json
import os

import numpy as np
import pytest

from tests.addon.helpers import disk_fingerprint, evaluated
from tests.safety import faults
from tests.safety.conftest import run_command as run


def bake_args(folder, name, *extra):
    return ("bake", "--blend", str(folder / "shot.blend"), "--object", name, *extra)


def test_stdout_is_one_json_document_and_stages_are_reported_on_stderr(installed, tmp_path):
    """Blender's own "Read blend:" and "Info: Saved" lines went to stdout; now stdout parses whole."""
    name, folder = installed
    out = run(tmp_path, *bake_args(folder, name, "--frames", "1-12"))
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)  # the whole of stdout: nothing before or after the summary
    assert summary["frames_baked"] == 12 and summary["saved"] == str(folder / "shot.blend")
    lines = out.stderr.splitlines()
    for stage in ("meshing", "modes and clusters", "embedding", "baking frames (100%)"):
        assert any(line.startswith("skinmodes: " + stage) for line in lines), (stage, lines)
    assert any("Saved" in line for line in lines)  # Blender's own line, moved to stderr


def test_negative_frame_ranges_bake_and_play_back(addon, installed, tmp_path):
    """``--frames -10-20`` (also written ``--frames=-10..20``); the cache plays back from frame -10."""
    import bpy

    name, folder = installed
    for spelling in (("--frames", "-10-20"), ("--frames=-10..20",)):
        out = run(tmp_path, *bake_args(folder, name, *spelling))
        assert out.returncode == 0, out.stderr
        summary = json.loads(out.stdout)
        assert summary["frames"] == [-10, 20] and summary["frames_baked"] == 31
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    obj, scene = bpy.data.objects[name], bpy.context.scene
    assert obj.skinmodes.bake_start == -10 and obj.modifiers["Skinmodes Cache"].frame_start == -10
    session = addon.session.build_session(obj, scene, frames=(-10, 20))
    addon.session.sample_range(session, scene, session.missing_frames(session.end))
    for f in (-10, -3, 5):
        scene.frame_set(f)
        with addon.session.outputs_muted(obj):
            expected = evaluated(bpy, obj) + session.offsets_local(f)
        assert np.abs(evaluated(bpy, obj) - expected).max() < 1e-5, f  # float32 positions, metre-sized


def test_a_read_only_blend_is_refused_before_the_bake(addon, installed, tmp_path):
    """A real read-only bind mount over the .blend's folder; the cache folder elsewhere stays writable.
    Before: the new .pc2 replaced the old one, then the save failed."""
    import bpy

    name, folder = installed
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    cache = tmp_path / "farm_cache"
    bpy.data.objects[name].skinmodes.cache_dir = str(cache) + "/"
    bpy.ops.wm.save_mainfile()
    out = run(tmp_path, *bake_args(folder, name))
    assert out.returncode == 0, out.stderr
    before = disk_fingerprint(folder), disk_fingerprint(cache)
    with faults.read_only(folder) as ok:
        if not ok:
            pytest.skip("this machine cannot make a read-only mount (needs root and mount)")
        out = run(tmp_path, *bake_args(folder, name, "--damping-ratio", "0.55"))
        assert out.returncode == 1
        line = faults.last_line(out.stderr)
        assert line.startswith("skinmodes: error: cannot save shot.blend: its folder") and "pass --no-save" in line
        assert (disk_fingerprint(folder), disk_fingerprint(cache)) == before
        assert not any(line.startswith("skinmodes: meshing") for line in out.stderr.splitlines())  # no work done
        # The advice works: --no-save bakes (the cache changes, the .blend cannot and does not).
        out = run(tmp_path, *bake_args(folder, name, "--damping-ratio", "0.55", "--no-save"))
        assert out.returncode == 0, out.stderr
        assert disk_fingerprint(folder) == before[0] and disk_fingerprint(cache) != before[1]


def test_a_read_only_blend_file_is_refused_before_the_bake(addon, shot, monkeypatch):
    """The .blend itself read-only (Blender refuses to save over it, for a user who is not root):
    monkeypatched os.access, in-process, since root may write any file."""
    obj, _arm, _scene, folder = shot
    blend = str(folder / "shot.blend")
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if str(path) == blend else real(path, mode, **kw))
    before = disk_fingerprint(folder)
    assert addon.cli.main(["bake", "--blend", blend, "--object", obj.name]) == 1
    assert disk_fingerprint(folder) == before


def test_a_run_leaves_no_temporary_folder(dev_zip, installed, tmp_path):
    name, folder = installed
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"TMPDIR": str(temp), "TEMP": str(temp), "TMP": str(temp)}
    out = run(tmp_path, "--install", str(dev_zip), *bake_args(folder, name, "--frames", "1-3"), env=env, tool=True)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in temp.iterdir()) == []
