"""The disk a point cache goes to: a bake that surely cannot fit is refused up front, and a failed
write is one line saying what to do."""

import errno
from collections import namedtuple

import pytest


def test_a_cache_that_cannot_fit_is_refused_before_any_work(addon, tmp_path, monkeypatch):
    disk = addon.bake.disk
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda _path: usage(10**9, 0, 1000))
    disk.check_room(tmp_path / "not yet" / "made", frames=1, vertices=10)  # 32 + 120 bytes: fits
    with pytest.raises(addon.core.errors.CacheError) as refused:
        disk.check_room(tmp_path, frames=1000, vertices=1000)
    text = str(refused.value)
    assert "12 MB" in text and "1 KB free" in text and "previous bake is unchanged" in text and "\n" not in text


@pytest.mark.parametrize(
    ("code", "advice"),
    [
        (errno.ENOSPC, "free some disk space"),
        (errno.EACCES, "choose a writable cache folder"),
        (errno.EIO, "check the cache folder"),
    ],
)
def test_a_failed_write_says_what_to_do(addon, code, advice):
    err = addon.bake.disk.disk_error(OSError(code, "it failed", "/somewhere/shot.pc2"), "the caches")
    assert str(err).startswith(f"could not write shot.pc2 (it failed); the previous bake is unchanged: {advice}")
