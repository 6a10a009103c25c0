"""Issue 24, item 2: the Threads preference cannot crash Blender.

Before: a count above the machine's cores (4 on 2 cores; 8, 64, 1024 too) made the bundled
scipy's OpenBLAS die in the next ``scipy.linalg.eigh`` with SIGSEGV (exit 139).  Now
``threads.limit_threads`` caps the count at the cores this process may use, read when it is
applied.  Each case runs in its own process, so a crash fails the test instead of killing pytest;
thread counts are integers read back from the libraries (exact).
"""

import os
import subprocess
import sys

import pytest

from tests.safety.faults import ROOT

SCRIPT = """
import importlib.util, os, sys
import numpy as np, scipy.linalg
cores = int(sys.argv[2])
if cores:
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
spec = importlib.util.spec_from_file_location("threads", sys.argv[3])
threads = importlib.util.module_from_spec(spec)
sys.modules["threads"] = threads
spec.loader.exec_module(threads)
libraries = threads.limit_threads(int(sys.argv[1]))
assert {lib.owner for lib in libraries} >= {"scipy"}, libraries
a = np.random.default_rng(0).standard_normal((300, 300))
w = scipy.linalg.eigh(a + a.T, eigvals_only=True)  # the call that crashed
assert np.isfinite(w).all()
print(max(lib.threads for lib in libraries), threads.usable_cores())
"""


def run(count, cores=0):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}  # each library's own default
    path = str(ROOT / "skinmodes_addon" / "threads.py")
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(count), str(cores), path],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("count", [4, 64, 1024])
def test_more_threads_than_cores_is_capped_and_scipy_still_answers(count):
    out = run(count)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    used, cores = map(int, out.stdout.split())
    assert used == min(count, cores) and cores <= (os.cpu_count() or 1)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_the_cap_is_the_cores_this_process_may_use_now():
    """A farm job pinned to one core (taskset, cgroups) gets one thread, whatever the preference says."""
    out = run(2, cores=1)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split() == ["1", "1"]
