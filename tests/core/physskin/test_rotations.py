import numpy as np

from core.physskin.rotations import blended_rotation_rows, blended_rotations, bone_rotations, tet_rotations
from core.validation.scenes import random_rotation


def rx(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def test_identity_stays_exactly_identity():
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    assert (bone_rotations(A) == np.eye(3)).all()
    assert (blended_rotations(A, np.full((5, 3), 1 / 3)) == np.eye(3)).all()


def test_scaled_bones_keep_their_rotation():
    # The closest rotation of R * diag(s) with s > 0 is R; the batched polar solver is accurate to ~1e-12.
    R = random_rotation(np.random.default_rng(1))
    A = np.zeros((1, 3, 4))
    A[0, :, :3] = R @ np.diag([1.2, 0.9, 1.1])
    np.testing.assert_allclose(bone_rotations(A)[0], R, atol=1e-10)


def test_tet_rotations_pick_the_bone():
    rng = np.random.default_rng(2)
    A = np.zeros((2, 3, 4))
    A[0, :, :3], A[1, :, :3] = random_rotation(rng), random_rotation(rng)
    R = tet_rotations(A, np.array([1, 0, 1]))
    np.testing.assert_array_equal(R, bone_rotations(A)[[1, 0, 1]])


def test_half_of_a_180_degree_twist_is_a_90_degree_twist():
    # nlerp of the identity and a 180° turn with equal weights is the 90° turn (to round-off, 1e-12).
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    A[1, :, :3] = rx(np.pi)
    W = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    R = blended_rotations(A, W)
    np.testing.assert_allclose(R[0], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(R[1], rx(np.pi / 2), atol=1e-12)
    np.testing.assert_allclose(abs(R[2]), abs(rx(np.pi)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)


def test_rotation_rows_are_the_matrices_component_major():
    """The solve's layout (9, t) holds exactly the entries of (t, 3, 3): the same arithmetic, so bits."""
    rng = np.random.default_rng(3)
    A = np.stack([np.hstack([random_rotation(rng), rng.normal(size=(3, 1))]) for _ in range(3)])
    W = rng.random((50, 3))
    R = blended_rotations(A, W)
    rows = blended_rotation_rows(A, W)
    assert rows.shape == (9, 50) and rows.flags.c_contiguous
    assert np.array_equal(rows.T.reshape(-1, 3, 3), R)
