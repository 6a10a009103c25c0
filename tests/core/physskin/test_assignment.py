import numpy as np

from core.physskin.assignment import assign_tets, pin_vertices, segment_distances
from core.validation.scenes import bar_scene

HEADS = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
TAILS = np.array([[2.0, 0.0, 0.0], [4.0, 0.0, 0.0]])


def test_segment_distances_match_dense_sampling():
    # Sampling each segment at 10^4 points bounds the error by half the spacing
    # times 1 (the slope of distance), i.e. 1e-4 for segments of length 2.
    rng = np.random.default_rng(0)
    P = rng.uniform(-1, 5, (50, 3))
    s = np.linspace(0.0, 1.0, 20001)
    for b in range(2):
        pts = HEADS[b] + s[:, None] * (TAILS[b] - HEADS[b])
        brute = np.linalg.norm(P[:, None, :] - pts[None], axis=2).min(axis=1)
        np.testing.assert_allclose(segment_distances(P, HEADS, TAILS)[:, b], brute, atol=1e-4)


def test_tets_join_the_nearest_bone():
    scene = bar_scene(4.0, 1.0, 3, bones=3)
    X, T = scene.mesh.X, scene.mesh.T
    bone = assign_tets(X, T, HEADS, TAILS)
    c = X[T].mean(axis=1)[:, 0]
    # Exact: the two bones share the x = 2 plane as their boundary.
    assert (bone[c < 2.0 - 1e-9] == 0).all() and (bone[c > 2.0 + 1e-9] == 1).all()


def test_pins_lie_near_their_bone_and_every_bone_pins():
    scene = bar_scene(4.0, 1.0, 4, bones=3)
    X = scene.mesh.X
    idx, bone = pin_vertices(X, HEADS, TAILS, radius=0.1)
    D = segment_distances(X, HEADS, TAILS)
    assert (D[idx, bone] <= 0.1).all()
    assert set(bone.tolist()) == {0, 1}
    # A radius that catches no vertex still pins the nearest vertex of each bone.
    idx0, bone0 = pin_vertices(X + np.array([0.0, 0.3, 0.3]), HEADS, TAILS, radius=0.01)
    assert set(bone0.tolist()) == {0, 1} and len(idx0) == 2
