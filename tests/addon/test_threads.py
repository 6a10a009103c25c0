"""The OpenBLAS thread limit behind the Threads preference (threads.py), on the libraries numpy and scipy load.

Thread counts are integers read back from the libraries: compared exactly.
"""

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
