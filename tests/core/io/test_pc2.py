"""PC2 point caches (core/pc2.py)."""

import os

import numpy as np
import pytest

from core.errors import CacheError
from core.io.pc2 import PC2Writer, check_writable, read_pc2, write_pc2
from tests.core.io.test_atomic import mode, refuse_rename, umask


def test_round_trip_is_exact_in_float32(tmp_path):
    frames = [np.random.default_rng(i).standard_normal((7, 3)) for i in range(5)]
    path = write_pc2(tmp_path / "a.pc2", frames, 7, start=3.0, samples=5)
    data, start, rate = read_pc2(path)
    assert start == 3.0 and rate == 1.0 and data.shape == (5, 7, 3)
    assert np.array_equal(data, np.asarray(frames, dtype=np.float32))
    assert os.path.getsize(path) == 32 + 5 * 7 * 12


def test_an_aborted_write_leaves_the_old_file_and_no_partial_file(tmp_path):
    old = write_pc2(tmp_path / "a.pc2", [np.zeros((2, 3))], 2, 1.0, 1)
    before = old.read_bytes()
    with pytest.raises(RuntimeError):
        with PC2Writer(old, 2, 1.0, 3) as w:
            w.write(np.ones((2, 3)))
            raise RuntimeError("cancelled")
    assert old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pc2"]
    with PC2Writer(old, 2, 1.0, 2) as w:
        w.write(np.ones((2, 3)))
        with pytest.raises(CacheError, match="incomplete"):
            w.commit()
    assert old.read_bytes() == before


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_a_farm_can_read_the_cache_it_gets_the_umask_mode(tmp_path, mask, expected):
    """Exact mode bits: 0644 under umask 022 means the render user (group/others) can read the .pc2."""
    with umask(mask):
        path = write_pc2(tmp_path / "bake.pc2", [np.zeros((3, 3))] * 2, 3, 1.0, 2)
    assert mode(path) == expected


def test_a_failing_frame_source_or_rename_leaves_the_old_cache(tmp_path, monkeypatch):
    old = write_pc2(tmp_path / "a.pc2", [np.zeros((2, 3))], 2, 1.0, 1)
    before = old.read_bytes()

    def frames():
        yield np.ones((2, 3))
        raise KeyboardInterrupt  # Esc during a bake: not an Exception, must still clean up

    with pytest.raises(KeyboardInterrupt):
        write_pc2(old, frames(), 2, 1.0, 2)
    assert old.read_bytes() == before
    # os.replace monkeypatched to fail, as on Windows while Blender holds the old cache open.
    monkeypatch.setattr(os, "replace", refuse_rename)
    with pytest.raises(PermissionError):
        write_pc2(old, [np.ones((2, 3))], 2, 1.0, 1)
    assert old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pc2"]


def test_corrupt_files_are_reported(tmp_path):
    p = tmp_path / "bad.pc2"
    p.write_bytes(b"POINTCACHE2\0" + b"\0" * 10)
    with pytest.raises(CacheError):
        read_pc2(p)
    good = write_pc2(tmp_path / "g.pc2", [np.zeros((2, 3))] * 2, 2, 1.0, 2)
    p.write_bytes(good.read_bytes()[:-4])
    with pytest.raises(CacheError, match="truncated"):
        read_pc2(p)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere; permissions cannot be tested")
def test_unwritable_folder_is_a_one_line_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(CacheError, match="cannot write"):
            check_writable(ro)
    finally:
        ro.chmod(0o700)


def test_a_file_in_place_of_the_folder_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    with pytest.raises(CacheError, match="cannot write") as err:
        check_writable(blocker / "cache")
    assert "\n" not in str(err.value)
