"""Training poses (core/pipeline/poses.py): contacts, pose-space modes, and the frames they drive (issue 16)."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.pipeline import Cancelled, FrameSimulation, SolverSettings, pose_contacts, prepare_pose_space
from tests.core.pipeline.characters import _held, swing


def test_poses_without_contact_reproduce_todays_motion(prepared):
    """A training pose without contact has the rest eigenproblem, so the blend is the rest
    subspace and the motion is today's: offsets agree to float32 round-off of the render bases
    (1e-5 of the largest offset) over a swing through the pose."""
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9])
    assert ps.model.k == 2 and ps.frames == (-1, 9) and ps.contacts == (0, 0)
    plain = FrameSimulation(prepared, SolverSettings(), 1, 40, swing)
    blended = FrameSimulation(prepared, SolverSettings(), 1, 40, swing, posespace=ps)
    a = np.array([plain.offsets(f) for f in range(1, 41)])
    b = np.array([blended.offsets(f) for f in range(1, 41)])
    assert np.abs(a).max() > 1e-4
    np.testing.assert_allclose(b, a, atol=1e-5 * np.abs(a).max())


def test_a_painted_contact_holds_its_vertices_still_in_its_pose(prepared, character):
    """Contact painted on the small sphere's far cap (x > 0.95) for a training pose: held at that
    pose (same rotations, so the blend is that pose's basis) and jerked, those tet vertices do not
    move relative to the rig (1e-9 of the largest offset) while the rest of the flesh does."""
    p = swing(2 * np.pi)
    mask = (character.rest[:, 0] > 0.95).astype(float)
    ps = prepare_pose_space(prepared, p[None], frames=[9], contacts=[mask])
    stuck = pose_contacts(prepared, p, mask)
    assert ps.contacts == (0, len(stuck)) and len(stuck) > 0
    sim = FrameSimulation(prepared, SolverSettings(), 1, 20, _held(p, 0.3), posespace=ps)
    state = sim.state(12)
    np.testing.assert_allclose(sim.drive.pose_weights(12), [0.0, 1.0], atol=1e-12)
    blended, _ = ps.model.blend(np.array([0.0, 1.0]))
    u = blended.basis() @ state.z
    assert np.abs(u).max() > 1e-4
    assert np.abs(u[stuck]).max() <= 1e-9 * np.abs(u).max()


def test_pose_space_frames_do_not_depend_on_the_order_they_are_asked_for(prepared, character):
    """Bake (in order) equals preview (any order), bit for bit, with pose-space modes too."""
    mask = (character.rest[:, 0] > 0.95).astype(float)
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9], contacts=[mask])
    a = FrameSimulation(prepared, SolverSettings(substeps=2), 1, 30, swing, posespace=ps)
    seq = {f: a.offsets(f) for f in range(1, 31)}
    b = FrameSimulation(prepared, SolverSettings(substeps=2), 1, 30, swing, posespace=ps)
    for f in (25, 3, 30, 1, 17):
        assert np.array_equal(b.offsets(f), seq[f])


def test_poses_with_the_same_rotations_are_refused_naming_the_frames(prepared):
    p = swing(2 * np.pi)
    moved = p.reshape(-1, 3, 4).copy()
    moved[:, :, 3] += 1.0  # the same pose, the whole rig moved
    with pytest.raises(SimulationError, match="frame 9 and frame 30 have the same bone rotations"):
        prepare_pose_space(prepared, np.array([p, moved.ravel()]), frames=[9, 30])
    with pytest.raises(SimulationError, match="the rest frame and frame 4"):
        prepare_pose_space(prepared, swing(0.0)[None], frames=[4])


def test_pose_space_modes_can_be_cancelled_between_poses(prepared):
    asked = []

    def cancelled():
        asked.append(1)
        return True

    with pytest.raises(Cancelled, match="cancelled; nothing was changed"):
        prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9], cancelled=cancelled)
    assert asked and prepared.posespace is None


def test_local_blend_fades_a_contact_pose_out_half_way_to_the_rest(prepared, character):
    """reach reaches the model (issue 29): with the painted contact pose at a full swing, half-way there
    the global blend still gives the contact basis about half, the local one nothing; at the pose, all."""
    p = swing(2 * np.pi)
    mask = (character.rest[:, 0] > 0.95).astype(float)
    glob = prepare_pose_space(prepared, p[None], frames=[9], contacts=[mask])
    local = prepare_pose_space(prepared, p[None], frames=[9], contacts=[mask], reach=0.5)
    half = swing(2 * np.pi / 3)  # half the full swing angle (0.3 of 0.6 rad)
    assert 0.3 < glob.model.pose_weights(half)[1] < 0.7
    np.testing.assert_allclose(local.model.pose_weights(half), [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(local.model.pose_weights(p), [0.0, 1.0], atol=1e-9)
