"""Obstacles queried at sample points (core/contact/colliders.py): planes, depths and normals.

Depths and normals of a box are exact to round-off (1e-12 m on a 1 m box).
"""

import numpy as np

from core.contact.colliders import Ground, MeshCollider, obstacle_planes
from tests.core.contact.scenes import box


def test_ground_keeps_points_near_or_below_it():
    P = np.array([[0.0, 0.0, -0.1], [0.0, 0.0, 0.05], [0.0, 0.0, 1.0]])
    planes = Ground(height=0.0).planes(P, margin=0.1)
    assert planes.index.tolist() == [0, 1]
    assert np.allclose(planes.depth(P), [0.1, -0.05])


def test_a_tilted_ground_normalises_its_normal():
    planes = Ground(height=0.0, normal=(0.0, 3.0, 4.0)).planes(np.zeros((1, 3)), margin=1.0)
    assert np.allclose(planes.normal, [[0.0, 0.6, 0.8]])


def test_box_depths_and_outward_normals():
    collider = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    P = np.array([[0.5, 0.5, 0.9], [0.5, 0.5, 1.05], [0.2, 0.5, 0.5], [5.0, 5.0, 5.0]])
    planes = collider.planes(P, margin=0.1)
    assert planes.index.tolist() == [0, 1, 2]
    assert np.allclose(planes.depth(P), [0.1, -0.05, 0.2], atol=1e-12)
    assert np.allclose(planes.normal, [[0, 0, 1], [0, 0, 1], [-1, 0, 0]], atol=1e-12)


def test_face_orientation_does_not_matter():
    collider = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    flipped = MeshCollider(collider.V, collider.F[:, ::-1])
    P = np.random.default_rng(0).uniform(-0.2, 1.2, (200, 3))
    a, b = collider.planes(P, 0.1), flipped.planes(P, 0.1)
    assert np.array_equal(a.index, b.index)
    assert np.allclose(a.depth(P), b.depth(P), atol=1e-12)


def test_a_point_on_the_surface_takes_the_face_normal():
    collider = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    planes = collider.planes(np.array([[0.5, 0.5, 1.0]]), margin=0.1)
    assert np.allclose(planes.normal, [[0.0, 0.0, 1.0]]) and np.allclose(planes.depth(np.array([[0.5, 0.5, 1.0]])), 0)


def test_a_collider_scaled_to_zero_touches_nothing():
    collider = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    point = MeshCollider(np.zeros_like(collider.V), collider.F)
    assert len(point.planes(np.zeros((3, 3)), margin=1.0).index) == 0
    assert len(MeshCollider(np.zeros((0, 3)), np.zeros((0, 3), dtype=int)).planes(np.zeros((2, 3)), 1.0).index) == 0


def test_large_meshes_search_the_nearest_triangles(monkeypatch):
    """A sphere of 796 triangles (more than WHOLE_SEARCH): near its surface, where contact happens, the
    nearest triangles give the same planes as searching them all (round-off)."""
    from scipy.spatial import ConvexHull

    from core.contact import colliders

    rng = np.random.default_rng(1)
    V = rng.standard_normal((400, 3))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    F = ConvexHull(V).simplices
    inward = np.einsum("ij,ij->i", np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), V[F[:, 0]]) < 0
    F[inward] = F[inward][:, ::-1]  # the hull's triangles come in any winding; a closed mesh winds one way
    P = rng.standard_normal((300, 3))
    P *= rng.uniform(0.9, 1.05, (300, 1)) / np.linalg.norm(P, axis=1, keepdims=True)
    near = MeshCollider(V, F).planes(P, margin=0.1)
    monkeypatch.setattr(colliders, "WHOLE_SEARCH", 10**6)
    whole = MeshCollider(V, F).planes(P, margin=0.1)
    assert len(near.index) == 300 and np.array_equal(near.index, whole.index)
    assert np.allclose(near.depth(P), whole.depth(P), atol=1e-12)
    assert np.all(near.depth(P)[np.linalg.norm(P, axis=1) < 0.95] > 0)  # inside the hull


def test_obstacles_concatenate():
    P = np.array([[0.5, 0.5, 0.05]])
    planes, inside = obstacle_planes([Ground(0.0), box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))], P, margin=0.1)
    assert planes.index.tolist() == [0, 0] and inside.tolist() == [False, True]
    assert len(obstacle_planes([], P, 0.1)[0].index) == 0


def test_inside_asks_about_other_positions_of_the_samples():
    """The flesh near the box's face, the rig beyond its far side: the rig is not inside the box."""
    collider = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    flesh, rig = np.array([[-0.05, 0.5, 0.5]]), np.array([[1.5, 0.5, 0.5]])
    planes, inside = obstacle_planes([collider], flesh, 0.1, rig)
    assert planes.depth(rig)[0] > 0 and not inside[0]  # inside the face's half-space, outside the box
