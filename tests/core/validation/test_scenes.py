"""Synthetic scenes (core/scenes.py)."""

import numpy as np

from core.model.rig import rest_parameters
from core.validation.scenes import bar_scene, chain_weights, grid_scene, random_material, random_rotation


def test_chain_weights_are_a_smooth_partition_of_unity():
    X = np.c_[np.linspace(-1, 5, 50), np.zeros(50), np.zeros(50)]
    W = chain_weights(X, np.linspace(0, 4, 5))
    assert np.allclose(W.sum(axis=1), 1.0) and (W >= 0).all()


def test_animation_starts_at_rest_and_spins_rigidly():
    s = bar_scene(cells_per_unit=2, bones=3)
    assert np.allclose(s.parameters(0.0), rest_parameters(3))
    x = s.positions(0.5, amplitude=0.0, spin=1.0)
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    d0 = np.linalg.norm(s.mesh.X[:, None] - s.mesh.X[None], axis=2)
    assert np.allclose(d, d0)  # no bending: a rigid turn


def test_helpers_are_deterministic():
    assert np.array_equal(random_material(10, seed=3).mu, random_material(10, seed=3).mu)
    R = random_rotation(np.random.default_rng(0))
    assert np.allclose(R @ R.T, np.eye(3)) and np.isclose(np.linalg.det(R), 1.0)
    assert grid_scene(5, 2).mesh.n == 125


def test_rotated_transforms_move_the_rotated_rest_shape_to_the_rotated_pose():
    """A' (R X) = R (A X) for every bone (1e-12: two 4 x 4 products of round-off)."""
    from core.validation.scenes import bar_scene, random_rotation, rotated_transforms

    scene = bar_scene(cells_per_unit=2, bones=3)
    A = scene.transforms(0.3, amplitude=1.5, spin=0.7)
    R = random_rotation(np.random.default_rng(5))
    Ar = rotated_transforms(A, R)
    X = scene.mesh.X[:20]
    for a, ar in zip(A, Ar):
        np.testing.assert_allclose((X @ R.T) @ ar[:, :3].T + ar[:, 3], (X @ a[:, :3].T + a[:, 3]) @ R.T, atol=1e-12)
