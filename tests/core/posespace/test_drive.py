"""The training poses' drive (core/posespace/drive.py): the blend follows the rig's pose."""

import numpy as np
import pytest

from core.pipeline import SolverSettings, prepare_pose_space
from core.posespace.drive import PoseSpaceDrive
from tests.core.pipeline.characters import prepare, swing, two_spheres


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    prepared = prepare(two_spheres(), tmp_path_factory.mktemp("c"))
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9])
    held = swing(2 * np.pi)
    return PoseSpaceDrive(ps.model, SolverSettings().simulation(), lambda f: held, ps.render, ps.probes)


def test_the_blend_is_the_pose_the_rig_holds(drive):
    """A rig held at the training pose weights that pose alone (1e-12)."""
    np.testing.assert_allclose(drive.pose_weights(5), [0.0, 1.0], atol=1e-12)
    assert drive.jiggles and drive.skin_correction(5) is None


def test_a_restart_is_at_rest_and_keeps_the_step_count(drive):
    p = drive.sample(0)
    state = drive.initial_state(p, 0.9 * p)
    for f in (1, 2):
        state, _ = drive.step(state, p, float(f), 1.0, 1.0)
    assert state.step == 2 and np.abs(state.z).max() > 0
    fresh = drive.restart(state, p)
    assert fresh.step == 2 and not fresh.z.any()
    assert not drive.displacement(fresh, 2).any() and not drive.probe_displacement(fresh, 2).any()
