"""Batched closest rotations (core/linalg/polar.py): the closed form against the SVD reference."""

import numpy as np
import pytest

from core.linalg.polar import rotation, rotation_rows, rotation_svd
from core.validation.scenes import random_rotation


@pytest.mark.parametrize("stretch", [0.01, 0.2, 0.6])
def test_fast_path_equals_the_svd_reference(stretch):
    rng = np.random.default_rng(int(stretch * 100))
    F = np.stack([random_rotation(rng) for _ in range(200)]) @ (np.eye(3) + stretch * rng.standard_normal((200, 3, 3)))
    R = rotation(F)
    # Both are the exact polar factor; they differ by round-off only.
    assert np.abs(R - rotation_svd(F)).max() < 1e-12
    assert np.abs(R @ np.swapaxes(R, 1, 2) - np.eye(3)).max() < 1e-13
    assert np.allclose(np.linalg.det(R), 1.0, atol=1e-13)


def test_reflections_and_singular_matrices_get_the_determinant_corrected_rotation():
    rng = np.random.default_rng(1)
    F = np.eye(3) + 0.1 * rng.standard_normal((50, 3, 3))
    F[:10] *= -1  # det < 0: the closest rotation flips the weakest axis
    F[10, 2] = 0.0  # singular
    R = rotation(F)
    assert np.allclose(np.linalg.det(R), 1.0, atol=1e-12)
    # Optimality: no random rotation is closer to F than R.
    for k in (0, 3, 10):
        best = np.linalg.norm(F[k] - R[k])
        for _ in range(200):
            Q = random_rotation(rng)
            assert np.linalg.norm(F[k] - Q) >= best - 1e-12


def test_rotation_is_equivariant():
    rng = np.random.default_rng(2)
    F = np.eye(3) + 0.3 * rng.standard_normal((64, 3, 3))
    Q = random_rotation(rng)
    assert np.abs(rotation(Q @ F) - Q @ rotation(F)).max() < 1e-13


def test_rows_entry_point_matches_the_stacked_one():
    """rotation_rows is what the solver calls; rotation only reshapes around it (bit for bit)."""
    rng = np.random.default_rng(3)
    F = np.stack([random_rotation(rng) for _ in range(40)]) @ (np.eye(3) + 0.1 * rng.standard_normal((40, 3, 3)))
    R = rotation_rows(np.ascontiguousarray(F.reshape(40, 9).T))
    assert np.array_equal(R.T.reshape(40, 3, 3), rotation(F))
