"""The Drive protocol and the rig's drive (core/dynamics/drive.py)."""

import numpy as np
import pytest

from core.dynamics.drive import Drive, RigDrive, remember_near
from core.pipeline import SolverSettings
from core.pipeline.guards import guard_probes
from tests.core.pipeline.characters import prepare, swing, two_spheres


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    prepared = prepare(two_spheres(), tmp_path_factory.mktemp("c"))
    probes = guard_probes(prepared.model.X)
    return RigDrive(prepared.model, SolverSettings().simulation(), swing, prepared.reconstructor, probes)


def test_the_rig_drive_is_a_drive(drive):
    def takes(d: Drive) -> Drive:  # what a type checker checks; here its attributes exist
        return d

    for name in ("size", "arap", "jiggles", "sample", "initial_state", "restart", "step", "skin_correction"):
        assert hasattr(takes(drive), name)
    assert drive.jiggles and drive.skin_correction(3) is None


def test_a_restart_is_at_rest_on_the_sample_and_keeps_the_step_count(drive):
    """At a cut the drive restarts with no secondary motion and no velocity (q_prev = q)."""
    state = drive.initial_state(drive.sample(0), drive.sample(0) - 0.5 * (drive.sample(1) - drive.sample(0)))
    for f in (1, 2, 3):
        state, _ = drive.step(state, drive.sample(f), float(f), 1.0, 1.0)
    assert state.step == 3 and np.abs(state.z).max() > 0
    fresh = drive.restart(state, drive.sample(3))
    assert fresh.step == 3 and not fresh.z.any() and not fresh.z_prev.any()
    assert np.array_equal(fresh.q, fresh.q_prev)
    k = drive.reconstructor.count
    assert drive.displacement(state, 3).shape == (k, 3) and drive.probe_displacement(state, 3).shape[1] == 3


def test_remember_near_keeps_the_frames_within_two():
    cache = {}
    for f in range(10):
        remember_near(cache, f, np.array([f]))
    assert sorted(cache) == [7, 8, 9]
    remember_near(cache, 3, np.array([3]))
    assert sorted(cache) == [3]
