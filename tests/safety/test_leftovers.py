"""Issue 12, item 7: interrupted and failed runs leave nothing behind, or the next bake cleans it up.

Before: a full disk left ``.partial`` and ``tets-*.tmp.npz`` files with
``unexpected OSError: [Errno 28]``; SIGTERM and kill -9 left ``.partial``
files that later bakes never removed; SIGINT printed a traceback.  The next
bake of an object removes only that object's own temporary files, only
those older than the run and not held by a live writer.
"""

import errno
import fcntl
import os
import signal
import time

import numpy as np
import pytest

from tests.addon.helpers import disk_fingerprint, full_fingerprint
from tests.safety import faults


def cli_bake(dev_zip, tmp_path, folder, obj_name, *extra):
    return faults.start_cli(
        dev_zip,
        tmp_path / "profile",
        *("bake", "--blend", str(folder / "shot.blend"), "--object", obj_name, "--frames", "1-3000", *extra),
    )


def left_behind(path, data, seconds=60.0):
    """A file dated back, as one left by a run that ended earlier."""
    path.write_bytes(data)
    t = time.time() - seconds
    os.utime(path, (t, t))
    return path


def test_the_next_bake_removes_what_a_killed_bake_left(addon, dev_zip, shot, tmp_path):
    """A real SIGKILL mid-bake leaves a .partial; the object's next bake removes it, and only it."""
    import bpy

    obj, _, _scene, folder = shot
    name = obj.name
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    cache = folder / "skinmodes_cache"
    proc = cli_bake(dev_zip, tmp_path, folder, name, "--damping-ratio", "0.55")
    (left,) = faults.wait_for(proc, lambda: faults.partials(cache))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert left.exists()  # what kill -9 leaves behind
    stem = left.name.split(".pc2.")[0]
    # Not this object's, or not stale: a live writer (another process's bake) holds its file locked.
    other = left_behind(cache / ".Someone-0123456789.pc2.0123456789ab.partial", b"another object's")
    live = left_behind(cache / f"{stem}.pc2.aaaaaaaaaaaa.partial", b"a bake still running")
    holder = os.open(live, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
        summary = addon.api.bake(bpy.data.objects[name], output="PC2")
    finally:
        os.close(holder)
    assert not left.exists() and other.exists() and live.exists()
    notes = [m for m in summary["messages"] if "interrupted bake" in m]
    assert notes == [f"removed 1 temporary file(s) that an interrupted bake of '{name}' left in {cache}"]


def test_stale_tet_cache_temporaries_are_removed(addon, shot):
    """Temporary files of this object's tet cache (today's .partial and the old tets-*.tmp.npz naming) go."""
    obj, _, _scene, folder = shot
    addon.api.compute_modes(obj)
    cache = folder / "skinmodes_cache"
    (tets,) = cache.glob("tets-*.npz")
    key = tets.name.removesuffix(".npz")
    mine = [
        left_behind(cache / f".{tets.name}.{'1' * 12}.partial", b"half a cache"),
        left_behind(cache / f"{key}.tmp.npz", b"half a cache"),
    ]
    foreign = left_behind(cache / ".tets-0000000000000000.npz.111111111111.partial", b"another mesh's")
    addon.session.clear_sessions()
    addon.api.bake(obj, output="PC2")
    assert not any(p.exists() for p in mine) and foreign.exists()


def test_a_full_disk_leaves_no_temporary_files(addon, creature, tmp_path, monkeypatch):
    """Real: a 64 KiB tmpfs as the cache folder, too small for the caches (root only).
    Elsewhere: numpy.savez monkeypatched to write a little and then raise ENOSPC."""
    import bpy

    obj, _, _scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    with faults.small_disk(tmp_path / "disk", 64) as disk:
        if disk is None:
            real = np.savez

            def savez(fh, *args, **kw):
                fh.write(b"\0" * 1000)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            monkeypatch.setattr(np, "savez", savez)
            assert real is not savez
        target = disk or tmp_path / "disk"
        obj.skinmodes.cache_dir = str(target) + "/"
        before = full_fingerprint(bpy, obj), disk_fingerprint(target)
        with pytest.raises(addon.core.errors.SkinmodesError) as err:
            addon.api.bake(obj, output="PC2")
        message = str(err.value)
        assert "\n" not in message and "unexpected" not in message
        assert "No space left on device" in message and "free some disk space" in message
        assert (full_fingerprint(bpy, obj), disk_fingerprint(target)) == before
        assert not [p.name for p in target.iterdir() if p.name.endswith((".partial", ".tmp.npz"))]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_cli_prints_one_line_and_leaves_nothing(addon, dev_zip, shot, tmp_path, sig):
    import bpy

    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    before = disk_fingerprint(folder)
    cache = folder / "skinmodes_cache"
    proc = cli_bake(dev_zip, tmp_path, folder, obj.name, "--damping-ratio", "0.55")
    faults.wait_for(proc, lambda: faults.partials(cache))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + sig
    line = faults.last_line(err)
    assert line == (
        f"skinmodes: interrupted by {signal.Signals(sig).name} before the .blend was saved; "
        "the bake was cancelled, run the command again"
    )
    assert disk_fingerprint(folder) == before and not faults.partials(cache)


def test_only_stale_temporaries_of_the_exact_destination_are_taken(tmp_path):
    """core.io.pc2's rules, without Blender: the atomic writer's own names, unlocked, older than the run."""
    from core.io.atomic import AtomicFile, partial_pattern, stale_partials
    from core.io.pc2 import PC2Writer

    target = tmp_path / "Body_L-0123456789.pc2"
    probe = AtomicFile(target)  # the name the writer really gives its temporary file
    assert partial_pattern(target).fullmatch(probe.tmp.name)
    probe.abort()
    live = PC2Writer(target, 4, 1.0, 2)  # a bake in progress: locked while it writes
    dead = left_behind(tmp_path / f".{target.name}.{'b' * 12}.partial", b"killed")
    others = [
        left_behind(tmp_path / f".Body L-0123456789.pc2.{'c' * 12}.partial", b"another object"),
        left_behind(tmp_path / f".{target.name}.{'d' * 11}.partial", b"not our naming"),
        left_behind(tmp_path / "notes.partial", b"a user's"),
        left_behind(tmp_path / "Body_L-0123456789.tmp.npz", b"legacy name, only when asked for"),
    ]
    os.utime(live.tmp, (time.time() - 60, time.time() - 60))
    assert stale_partials(target, time.time()) == [dead]
    assert stale_partials(target, time.time() - 3600) == []  # nothing older than an hour ago
    assert stale_partials(target, time.time(), legacy=[others[-1].name]) == [dead, others[-1]]
    live.abort()
    assert all(p.exists() for p in others) and not live.tmp.exists()


def test_temporaries_of_caches_no_longer_in_use_are_removed_once_old(addon, shot):
    """Issue 24 (low).  Before: a ``.partial`` of a tet or model cache whose key no bake asks for any
    more (the settings changed since the killed run) stayed for ever.  Now any bake removes those an
    hour old; a recent one (a run that may still be writing) and other files stay.  Issue 39 (low): the
    same for a point cache's whose object was renamed or deleted since (its own next bake never comes)."""
    obj, _, _scene, folder = shot
    cache = folder / "skinmodes_cache"
    cache.mkdir(exist_ok=True)
    old = [
        left_behind(cache / f".model-{'a' * 16}.npz.{'2' * 12}.partial", b"abandoned", seconds=7200),
        left_behind(cache / f".tets-{'b' * 16}.npz.{'3' * 12}.partial", b"abandoned", seconds=7200),
        # Issue 39 (low): a point cache's, for a name no object uses any more (renamed since the killed run).
        left_behind(cache / f".Renamed-0123456789.pc2.{'5' * 12}.partial", b"abandoned", seconds=7200),
    ]
    keep = [
        left_behind(cache / f".model-{'c' * 16}.npz.{'4' * 12}.partial", b"maybe live", seconds=60),
        left_behind(cache / f".Someone-0123456789.pc2.{'6' * 12}.partial", b"maybe live", seconds=60),
        left_behind(cache / f".Someone-012345678.pc2.{'7' * 12}.partial", b"not our naming", seconds=7200),
        left_behind(cache / "notes.partial", b"a user's", seconds=7200),
    ]
    summary = addon.api.bake(obj, output="PC2", frames=(1, 4))
    assert not any(p.exists() for p in old) and all(p.exists() for p in keep)
    assert any("3 temporary file(s) of caches no longer in use" in m for m in summary["messages"]), summary


def test_a_signal_to_the_gait_command_says_the_search_was_cancelled(addon, dev_zip, tmp_path):
    """Issue 39 (low): SIGTERM during ``skinmodes gait`` said "the bake was cancelled"; it names the search now.
    The behaviour was already right (exit 128 + signal, the .blend untouched, no gait stored)."""
    import threading

    import bpy

    from tests.addon.locomotion.conftest import blob_object

    blob_object(bpy, tmp_path)
    shot = tmp_path / "slug.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))
    before = shot.read_bytes()
    args = ("gait", "--blend", str(shot), "--object", "Slug", "--generations", "50")
    proc = faults.start_cli(dev_zip, tmp_path / "profile", *args)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    faults.wait_for(proc, lambda: any("gait: searching" in line for line in lines))
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=300)
    reader.join(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert lines[-1].strip() == (
        "skinmodes: interrupted by SIGTERM before the .blend was saved; "
        "the gait search was cancelled, run the command again"
    ), lines[-5:]
    assert shot.read_bytes() == before
