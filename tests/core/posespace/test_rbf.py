"""Pose-space RBF weights (core/posespace/rbf.py)."""

import numpy as np
import pytest

from core.errors import SubspaceError
from core.model.rig import rig_parameters
from core.posespace.rbf import pose_features, train, weights
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
