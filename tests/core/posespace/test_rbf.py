"""Pose-space RBF weights (core/posespace/rbf.py)."""

import numpy as np
import pytest

from core.errors import SubspaceError
from core.model.rig import rig_parameters
from core.posespace.rbf import local_support, pose_features, support_radii, train, weights
from core.validation.scenes import random_rotation


def random_pose(rng, b=4):
    """Rig parameters (12 b,) of b bones with random rotations, scales near 1 and translations."""
    A = np.zeros((b, 3, 4))
    for i in range(b):
        A[i, :, :3] = random_rotation(rng) * rng.uniform(0.9, 1.1)
        A[i, :, 3] = rng.normal(size=3)
    return rig_parameters(A)


def test_weights_interpolate_the_training_poses_and_sum_to_one():
    """w_i(p_j) = δ_ij and Σ w = 1 anywhere: a dense 6 x 6 solve, so round-off of order
    cond(A) eps; 1e-10 leaves a margin of about 1e3 over the measured 1e-13."""
    rng = np.random.default_rng(0)
    F = np.array([pose_features(random_pose(rng)) for _ in range(6)])
    C = train(F)
    for j in range(6):
        np.testing.assert_allclose(weights(C, F, F[j]), np.eye(6)[j], atol=1e-10)
    for _ in range(5):
        assert abs(weights(C, F, pose_features(random_pose(rng))).sum() - 1.0) < 1e-10


def test_weights_ignore_a_rigid_motion_of_the_whole_rig():
    """Turning and moving the whole character is not a new pose: features agree to round-off
    (products of three rotations, 1e-13) and so do the weights."""
    rng = np.random.default_rng(1)
    F = np.array([pose_features(random_pose(rng)) for _ in range(4)])
    C = train(F)
    p = random_pose(rng)
    A = p.reshape(-1, 3, 4)
    G, t = random_rotation(rng), rng.normal(size=3)
    moved = np.concatenate([G @ A[:, :, :3], (G @ A[:, :, 3].T).T[:, :, None] + t[None, :, None]], axis=2)
    np.testing.assert_allclose(pose_features(rig_parameters(moved)), pose_features(p), atol=1e-13)
    np.testing.assert_allclose(
        weights(C, F, pose_features(rig_parameters(moved))), weights(C, F, pose_features(p)), atol=1e-12
    )


def test_a_single_pose_weighs_one_everywhere():
    rng = np.random.default_rng(2)
    F = pose_features(random_pose(rng))[None]
    C = train(F)
    assert weights(C, F, pose_features(random_pose(rng))) == pytest.approx([1.0], abs=1e-14)


def test_weights_vary_continuously_between_two_poses():
    """Along a straight path between two training poses the weights are 1 - s and s
    (phi(r) = r is linear along the segment; exact up to the 2 x 2 solve's round-off)."""
    rng = np.random.default_rng(3)
    F = np.array([pose_features(random_pose(rng)) for _ in range(2)])
    C = train(F)
    for s in np.linspace(0.0, 1.0, 7):
        np.testing.assert_allclose(weights(C, F, (1 - s) * F[0] + s * F[1]), [1 - s, s], atol=1e-12)


def test_duplicate_training_poses_are_refused():
    rng = np.random.default_rng(4)
    f = pose_features(random_pose(rng))
    with pytest.raises(SubspaceError, match="same bone rotations"):
        train(np.array([f, f]))


def bent(degrees):
    """Two bones: the first still, the second turned ``degrees`` about z (rig parameters (24,))."""
    t = np.radians(degrees)
    A = np.zeros((2, 3, 4))
    A[0, :, :3] = np.eye(3)
    A[1, :, :3] = [[np.cos(t), -np.sin(t), 0.0], [np.sin(t), np.cos(t), 0.0], [0.0, 0.0, 1.0]]
    return rig_parameters(A)


def test_a_contact_pose_weighs_nothing_half_way_to_the_rest():
    """The issue's case: rest and a contact pose bent 90 degrees.  Measured at 45 degrees the global RBF
    gives the contact pose 0.5 (to round-off); with local support (reach 0.5) it gives 0, since the
    45-degree pose lies 0.51 of the way from the contact pose to the rest in feature distance.  At the
    training poses nothing changes, and the weights sum to one at every angle."""
    F = np.array([pose_features(bent(0.0)), pose_features(bent(90.0))])
    C = train(F)
    radii = support_radii(F, np.array([False, True]), 0.5)
    assert np.isinf(radii[0]) and radii[1] > 0
    f45 = pose_features(bent(45.0))
    assert abs(weights(C, F, f45)[1] - 0.5) < 1e-12  # before: half the contact basis where nothing touches
    np.testing.assert_allclose(local_support(weights(C, F, f45), F, f45, radii), [1.0, 0.0], atol=1e-15)
    for j in range(2):
        np.testing.assert_allclose(local_support(weights(C, F, F[j]), F, F[j], radii), np.eye(2)[j], atol=1e-12)
    previous = 0.0
    for deg in np.linspace(0.0, 90.0, 31):
        f = pose_features(bent(deg))
        w = local_support(weights(C, F, f), F, f, radii)
        assert abs(w.sum() - 1.0) < 1e-12 and w[1] >= previous - 1e-12  # sums to one, grows towards the pose
        previous = w[1]


def test_local_support_moves_the_faded_weight_to_the_nearest_contact_free_pose():
    """Three poses: rest, a contact-free pose at -90 and a contact pose at +90 degrees.  At +30 degrees
    the contact pose's weight (positive there) is faded to nothing and goes mostly to the rest, the
    nearer contact-free pose; the weights still sum to one."""
    F = np.array([pose_features(bent(d)) for d in (0.0, -90.0, 90.0)])
    C = train(F)
    radii = support_radii(F, np.array([False, False, True]), 0.5)
    f = pose_features(bent(30.0))
    w, w0 = local_support(weights(C, F, f), F, f, radii), weights(C, F, f)
    assert w0[2] > 0.1 and w[2] == 0.0 and abs(w.sum() - 1.0) < 1e-12
    assert w[0] - w0[0] > w[1] - w0[1] > 0.0
    with pytest.raises(SubspaceError, match="contact-free"):
        support_radii(F, np.array([True, True, True]), 0.5)
