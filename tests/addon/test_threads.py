"""The OpenBLAS thread limit behind the Threads preference (threads.py), on the libraries numpy and scipy load.

Thread counts are integers read back from the libraries: compared exactly.
"""

import json
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def threads(addon):
    yield addon.threads
    addon.threads.limit_threads(0)


def mapped_files():
    """Files mapped into this process (Linux): the shared libraries actually loaded."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("no /proc/self/maps on this system")
    return {Path(line.split()[-1]).resolve() for line in maps.read_text().splitlines() if line.rstrip().endswith(".so")}


def test_the_libraries_found_are_the_ones_numpy_and_scipy_loaded(threads):
    import scipy.linalg  # loads scipy's OpenBLAS

    scipy.linalg.cholesky(np.eye(3))
    found = {lib.owner: lib.path for lib in threads.blas_libraries()}
    assert set(found) == {"numpy", "scipy"}
    loaded = mapped_files()
    for path in found.values():
        assert "openblas" in path.name and path.resolve() in loaded, path


def test_a_limit_is_applied_and_zero_gives_each_library_its_count_back(threads):
    libraries = threads.blas_libraries()
    original = {lib.path: lib.threads for lib in libraries}
    target = 2 if 1 in original.values() else 1  # differs from at least one library's own count
    assert threads.limit_threads(target) == libraries
    assert {lib.threads for lib in libraries} == {target}
    a = np.arange(64.0 * 64).reshape(64, 64) / 4096.0
    assert np.array_equal(a @ np.eye(64), a)  # BLAS still answers, exactly (a product with the identity)
    threads.limit_threads(0)
    assert {lib.path: lib.threads for lib in libraries} == original


def test_zero_before_any_limit_changes_nothing(threads):
    libraries = threads.blas_libraries()
    original = {lib.path: lib.threads for lib in libraries}
    threads.limit_threads(0)
    assert {lib.path: lib.threads for lib in libraries} == original


def test_the_solver_runs_on_one_blas_thread_and_gives_the_counts_back(threads):
    """one_blas_thread: 1 inside (nested too), each library's own count after; integers, compared exactly."""
    import scipy.linalg

    scipy.linalg.cholesky(np.eye(3))
    threads.limit_threads(2)  # a count other than 1 to come back to (capped at the cores there are)
    before = {lib.path: lib.threads for lib in threads.blas_libraries()}
    with threads.one_blas_thread():
        assert {lib.threads for lib in threads.blas_libraries()} == {1}
        with threads.one_blas_thread():
            assert {lib.threads for lib in threads.blas_libraries()} == {1}
        assert {lib.threads for lib in threads.blas_libraries()} == {1}  # the inner block leaves it on
    assert {lib.path: lib.threads for lib in threads.blas_libraries()} == before


def test_a_bake_leaves_the_blas_thread_counts_as_it_found_them(threads, addon, creature, tmp_path):
    obj, _arm, scene = creature
    import bpy

    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))  # a point cache needs a saved file
    threads.limit_threads(2)
    before = {lib.path: lib.threads for lib in threads.blas_libraries()}
    scene.frame_set(1)
    addon.api.bake(obj, output="PC2")
    assert {lib.path: lib.threads for lib in threads.blas_libraries()} == before


def test_a_bake_here_equals_the_command_lines_bit_for_bit_whatever_the_blas_threads(
    threads, addon, creature, dev_zip, tmp_path
):
    """Farm caches equal desk caches: a bake in this process on two BLAS threads and one by the command line
    (run_cli: OPENBLAS_NUM_THREADS=1), each preparing its own model, write the same .pc2 bytes.  Preparing
    on the machine's thread count gave models that differed in the last bits (ARPACK's and the dense
    products' sums split across threads), so the desk and a farm node with another core count disagreed."""
    if threads.usable_cores() < 2:
        pytest.skip("one core: this process cannot run OpenBLAS on two threads to differ from the command line")
    obj, _arm, scene = creature
    import bpy

    from tests.addon.helpers import run_cli

    (tmp_path / "desk").mkdir()
    (tmp_path / "cli").mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "cli" / "shot.blend"), copy=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "desk" / "shot.blend"))
    threads.limit_threads(2)
    scene.frame_set(1)
    desk = Path(addon.api.bake(obj, output="PC2")["files"][0]).read_bytes()
    cache = tmp_path / "cli_cache"
    args = ("bake", "--blend", str(tmp_path / "cli" / "shot.blend"), "--object", obj.name, "--cache-dir", str(cache))
    done = run_cli(dev_zip, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert list(cache.glob("model-*.npz")), "the command line prepared its own model"
    assert Path(json.loads(done.stdout)["files"][0]).read_bytes() == desk
