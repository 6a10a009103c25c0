"""Obstacles over time (core/contact/scene.py): colliders interpolated between the frames read."""

import numpy as np
import pytest

from core.contact.colliders import Ground
from core.contact.scene import ColliderTrack, Obstacles
from core.errors import SimulationError
from tests.core.contact.scenes import box


def track():
    b = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    return ColliderTrack("Box", b.F, np.array([1.0, 2.0]), np.stack([b.V, b.V + np.array([1.0, 0.0, 0.0])]))


def test_vertices_interpolate_between_frames_and_hold_outside():
    t = track()
    assert np.allclose(t.at(1.25).V, t.V[0] + [0.25, 0.0, 0.0])
    assert np.array_equal(t.at(0.0).V, t.V[0]) and np.array_equal(t.at(7.0).V, t.V[1])
    assert np.array_equal(t.at(2.0).V, t.V[1])


def test_obstacles_list_the_ground_first():
    assert not Obstacles()
    obstacles = Obstacles(Ground(0.5), (track(),))
    found = obstacles.at(1.5)
    assert obstacles and isinstance(found[0], Ground) and len(found) == 2


def test_a_collider_with_nan_is_refused_in_one_line():
    b = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    with pytest.raises(SimulationError, match="collider 'Box' has NaN"):
        ColliderTrack("Box", b.F, np.array([1.0]), np.full((1, 8, 3), np.nan))
