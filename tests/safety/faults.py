"""Fault injection for the safety tests: real mechanisms where this machine allows them.

- :func:`small_disk`: a real tmpfs of a few MiB (needs root and a working
  ``mount``); a test that cannot have one says so and falls back to a
  monkeypatched write.
- :func:`read_only`: a real read-only bind mount of a folder (root and ``mount``).
- :func:`start_cli`: the headless command in its own process, so it can be
  sent real signals (SIGTERM, SIGINT, SIGKILL) mid-bake.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mount(*args: str) -> bool:
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextmanager
def small_disk(path: Path, size_kib: int) -> Iterator[Path | None]:
    """A real tmpfs of ``size_kib`` KiB mounted at ``path``; None where this machine cannot mount one."""
    path.mkdir(parents=True, exist_ok=True)
    if not _mount("-t", "tmpfs", "-o", f"size={size_kib}k,mode=0755", "tmpfs", str(path)):
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write a filler file into ``folder`` until its disk is full (a real ENOSPC); returns the filler."""
    filler = folder / "filler.bin"
    block = b"\0" * 4096
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while True:
            os.write(fd, block)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    try:  # the last partial block
        while True:
            os.write(fd, b"\0")
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return filler


@contextmanager
def read_only(path: Path) -> Iterator[bool]:
    """``path`` made read-only for everyone, root included (a read-only bind mount); False if impossible."""
    if not _mount("--bind", str(path), str(path)):
        yield False
        return
    try:
        ok = _mount("-o", "remount,bind,ro", str(path))
        yield ok
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def start_cli(dev_zip: Path, profile: Path, *args: str) -> subprocess.Popen[str]:
    """``python -m tools.skinmodes_cli ARGS`` in a new process (the extension installed into ``profile``)."""
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(profile), OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "tools.skinmodes_cli", "--install", str(dev_zip), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def wait_for(proc: subprocess.Popen[str], found: Callable[[], object], timeout: float = 300.0) -> object:
    """Poll until ``found()`` is truthy while ``proc`` runs; fail if it ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hit = found()
        if hit:
            return hit
        if proc.poll() is not None:
            _out, err = proc.communicate()
            raise AssertionError(f"the command ended (exit {proc.returncode}) before the awaited moment: {err[-2000:]}")
        time.sleep(0.005)
    proc.kill()
    raise AssertionError("timed out waiting for the command")


def partials(folder: Path) -> list[Path]:
    """Temporary files of the atomic writer (``.*.partial``) in ``folder``."""
    return sorted(folder.glob(".*.partial"))


def last_line(stderr: str) -> str:
    """The one line a failed command printed; it must come without a traceback."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert lines, "no message at all"
    return lines[-1]
