"""Atomic writes with the process umask (core/atomic.py).

Mode bits and file bytes are compared exactly: both are integers/bytes with
no round-off.
"""

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from core.errors import CacheError
from core.io import atomic
from core.io.atomic import AtomicFile, atomic_file, partial_in_use, partial_pattern, save_npz_atomic


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """Run a block under process umask ``mask`` and restore the previous one (tests are single-threaded)."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def refuse_rename(src: object, dst: object) -> None:
    """Stands in for os.replace when a test monkeypatches it to fail."""
    raise PermissionError(13, "Permission denied", str(dst))


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_the_umask_mode_not_0600(tmp_path, mask, expected):
    old = tmp_path / "old.bin"
    old.write_bytes(b"old")
    old.chmod(0o600)  # a cache from an older version: the new file must not inherit its mode
    with umask(mask):
        with atomic_file(old) as fh:
            fh.write(b"new")
        with atomic_file(tmp_path / "fresh.txt", "w") as fh:
            fh.write("text")
        long_lived = AtomicFile(tmp_path / "long.bin")
        long_lived.file.write(b"x")
        long_lived.commit()
    assert old.read_bytes() == b"new"
    assert [mode(p) for p in (old, tmp_path / "fresh.txt", tmp_path / "long.bin")] == [expected] * 3


@pytest.mark.parametrize("error", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_an_exception_while_writing_leaves_the_old_file_and_no_temporary(tmp_path, error):
    target = tmp_path / "cache.npz"
    target.write_bytes(b"old contents \x00\xff")
    with pytest.raises(type(error)):
        with atomic_file(target) as fh:
            fh.write(b"half of the new")
            raise error
    assert target.read_bytes() == b"old contents \x00\xff"
    assert [p.name for p in tmp_path.iterdir()] == ["cache.npz"]


def test_a_failing_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """os.replace is monkeypatched to fail, as on Windows when a reader holds the target open."""
    target = tmp_path / "a.pc2"
    target.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", refuse_rename)
    with pytest.raises(PermissionError):
        with atomic_file(target) as fh:
            fh.write(b"new")
    writer = AtomicFile(target)
    writer.file.write(b"new")
    with pytest.raises(PermissionError):
        writer.commit()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.pc2"]


def test_abort_after_commit_does_nothing_and_a_second_commit_is_refused(tmp_path):
    writer = AtomicFile(tmp_path / "m.npz")
    writer.file.write(b"data")
    path = writer.commit()
    writer.abort()
    assert path.read_bytes() == b"data"
    with pytest.raises(CacheError, match="already written"):
        writer.commit()
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def test_a_new_file_is_absent_until_commit(tmp_path):
    writer = AtomicFile(tmp_path / "late.bin")
    writer.file.write(b"data")
    assert not (tmp_path / "late.bin").exists()
    writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_only_whole_file_modes_are_accepted(tmp_path):
    with pytest.raises(ValueError, match="'ab'"):
        AtomicFile(tmp_path / "x", "ab")
    assert list(tmp_path.iterdir()) == []


NOBODY = 65534


def read_as_nobody(path: Path) -> int:
    """Exit status of a forked child that drops to uid/gid 65534 (no groups) and reads ``path``: 0 or errno."""
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with open(path, "rb") as fh:
                fh.read()
            code = 0
        except OSError as exc:
            code = exc.errno or 1
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0, reason="only root can become another user")
def test_another_user_reads_the_file_under_umask_022_and_not_under_077():
    # pytest's tmp_path sits in a 0700 folder that another user cannot enter: use an open one.
    folder = Path(tempfile.mkdtemp(prefix="skinmodes-farm-"))
    try:
        folder.chmod(0o755)
        with umask(0o022):
            with atomic_file(folder / "shared.pc2") as fh:
                fh.write(b"frames")
        with umask(0o077):
            with atomic_file(folder / "private.pc2") as fh:
                fh.write(b"frames")
        assert read_as_nobody(folder / "shared.pc2") == 0
        assert read_as_nobody(folder / "private.pc2") == 13  # EACCES: the check can fail
    finally:
        shutil.rmtree(folder)


def test_save_npz_atomic_round_trips_exactly_with_the_umask_mode(tmp_path):
    """Arrays come back bit for bit (npz stores raw bytes); the mode is the umask's, compared exactly."""
    arrays = {"key": np.str_("abc"), "X": np.random.default_rng(0).standard_normal((5, 3)), "T": np.arange(8)}
    with umask(0o022):
        path = save_npz_atomic(tmp_path / "tets.npz", arrays)
    assert path == tmp_path / "tets.npz" and mode(path) == 0o644
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == ["T", "X", "key"]
        assert str(data["key"]) == "abc"
        assert np.array_equal(data["X"], arrays["X"]) and np.array_equal(data["T"], arrays["T"])
    assert [p.name for p in tmp_path.iterdir()] == ["tets.npz"]


def test_save_npz_atomic_locks_its_temporary_file_and_a_failure_keeps_the_old_one(tmp_path, monkeypatch):
    """os.fsync (called on the finished temporary file, before it is closed and renamed) is wrapped to
    look at the temporary file from outside; then os.replace is made to fail."""
    if atomic.fcntl is None:
        pytest.skip("no advisory locks on this platform; only the age of a temporary file says it is stale")
    target = tmp_path / "model.npz"
    seen = []
    real_fsync = os.fsync

    def look_then_fsync(fd: int) -> None:
        seen.extend(partial_in_use(p) for p in tmp_path.iterdir() if partial_pattern(target).fullmatch(p.name))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", look_then_fsync)
    save_npz_atomic(target, {"a": np.ones(3)})
    assert seen == [True]  # a live writer's file: no other run may take it for a leftover
    old = target.read_bytes()
    monkeypatch.setattr(os, "replace", refuse_rename)
    with pytest.raises(PermissionError):
        save_npz_atomic(target, {"a": np.zeros(3)})
    assert target.read_bytes() == old and [p.name for p in tmp_path.iterdir()] == ["model.npz"]
