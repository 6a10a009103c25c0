"""The character's size (core/geometry/size.py)."""

import numpy as np

from core.geometry.size import character_size
from core.validation.scenes import random_rotation


def test_the_size_of_a_unit_cube_is_its_diagonal():
    corners = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.float64)
    assert np.isclose(character_size(corners), np.sqrt(3.0), rtol=1e-15)


def test_the_size_does_not_change_when_the_character_turns_or_moves():
    X = np.random.default_rng(3).standard_normal((200, 3))
    R = random_rotation(np.random.default_rng(4))
    moved = X @ R.T + np.array([5.0, -2.0, 7.0])
    assert np.isclose(character_size(moved), character_size(X), rtol=1e-12)
