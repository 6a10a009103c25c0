"""What skinmodes may delete: files it recorded writing, and abandoned temporary files of shared caches."""

import os
import time


def test_only_abandoned_temporary_files_of_shared_caches_are_removed(addon, tmp_path):
    deletion = addon.bake.deletion
    old = tmp_path / ".model-0123456789abcdef.npz.0123456789ab.partial"
    fresh = tmp_path / ".tets-0123456789abcdef.npz.ba9876543210.partial"
    theirs = tmp_path / ".shot.pc2.0123456789ab.partial"  # a point cache's: its own object's next bake
    for path in (old, fresh, theirs):
        path.write_bytes(b"partial")
    hour_ago = time.time() - 2 * deletion.ABANDONED_AGE
    os.utime(old, (hour_ago, hour_ago))
    os.utime(theirs, (hour_ago, hour_ago))
    assert deletion.remove_abandoned_partials(tmp_path, time.time() - deletion.ABANDONED_AGE) == [old]
    assert not old.exists() and fresh.exists() and theirs.exists()
    assert deletion.remove_abandoned_partials(tmp_path / "missing", time.time()) == []


def test_a_file_not_recorded_for_the_object_is_never_deleted(addon, creature, tmp_path):
    deletion = addon.bake.deletion
    obj, _, _ = creature
    stranger = tmp_path / "stranger.pc2"
    assert deletion.deletion_refused(obj, str(stranger)) == "skinmodes did not write it for this object"
    obj.skinmodes.bake_files = deletion.record_line(str(stranger), stranger)
    assert deletion.recorded_files(obj) == [str(stranger)]
    assert deletion.deletion_refused(obj, str(stranger)) == ""  # recorded, a point cache, no other user
