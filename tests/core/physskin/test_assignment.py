import numpy as np

from core.physskin.assignment import assign_tets, choose_pins, pin_vertices, segment_distances, surface_depth
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


def _two_pieces():
    """Two disjoint 4 x 1 bars (one above the other), two bones along the lower one's axis."""
    from core.geometry.primitives import bar_tet_mesh

    X, T = bar_tet_mesh(4.0, 1.0, 3)
    X2 = X + np.array([0.0, 3.0, 0.0])
    return np.vstack([X, X2]), np.vstack([T, T + len(X)])


def _soft_halves(X):
    """Weights (n, 2): 0.98 / 0.02 on each half of the bar, so no vertex is bound to one bone
    alone (RIGID_WEIGHT) and only the depth rule pins."""
    left = X[:, 0] < 2.0
    return np.stack([np.where(left, 0.98, 0.02), np.where(left, 0.02, 0.98)], axis=1)


def test_pins_are_the_inner_flesh_of_each_bone_at_any_scale():
    """Exact set equality: the rule compares distances with distances, so scaling the character
    by 100 (an import at centimetres) or 0.01 pins the same vertices."""
    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    W = _soft_halves(X)
    pins, bones = choose_pins(X, T, W, HEADS, TAILS, 0.3)
    assert 0 < len(pins) < len(X) // 2
    assert (bones == np.argmax(W[pins], axis=1)).all()  # each pin follows its heaviest bone
    on_bone = segment_distances(X[pins], HEADS, TAILS)[np.arange(len(pins)), bones] == 0.0
    assert ((surface_depth(X, T)[pins] > 0) | on_bone).all()  # the skin is pinned only where a bone touches it
    for s in (0.01, 100.0):
        pins_s, bones_s = choose_pins(s * X, T, W, s * HEADS, s * TAILS, 0.3)
        assert np.array_equal(pins_s, pins) and np.array_equal(bones_s, bones)
    more, _ = choose_pins(X, T, W, HEADS, TAILS, 0.6)
    assert set(pins) < set(more)  # a deeper pin depth pins a superset


def test_blended_vertices_at_a_joint_are_left_to_the_solve():
    """Hat weights blending over x in [1, 3]: the axis vertex at the joint (x = 2, weights 1/2, 1/2)
    lies on both bones, so depth alone pins it; the weight rule does not.  No pin has less than
    PIN_WEIGHT of its bone's largest weight (exact comparisons, no tolerance needed)."""
    from core.physskin.assignment import PIN_WEIGHT
    from core.validation.scenes import chain_weights

    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    W = chain_weights(X, np.array([1.0, 3.0]))
    pins, bones = choose_pins(X, T, W, HEADS, TAILS, 0.3)
    share = W[pins, bones] / W.max(axis=0)[bones]
    assert (share >= PIN_WEIGHT).all()
    joint = np.flatnonzero((X[:, 0] == 2.0) & (X[:, 1] == 0.0) & (X[:, 2] == 0.0))
    assert len(joint) == 1 and joint[0] not in set(pins)
    assert (np.bincount(bones, minlength=2) > 1).all()  # both bones still pin their cores


def test_every_piece_and_every_bone_gets_a_pin():
    """A loose piece far from every bone, and a bone outside the mesh, still pin one vertex each:
    otherwise the pinned system is singular (a free piece can translate)."""
    X, T = _two_pieces()
    n = len(X) // 2
    W = np.zeros((len(X), 3))
    W[:n, :2] = _soft_halves(X[:n])
    W[n:, 2], W[n:, 0] = 0.9, 0.1  # the upper bar belongs mostly to a third bone
    heads = np.vstack([HEADS, [[0.0, -5.0, 0.0]]])  # far outside the upper bar
    tails = np.vstack([TAILS, [[4.0, -5.0, 0.0]]])
    pins, bones = choose_pins(X, T, W, heads, tails, 0.3)
    upper = pins[pins >= n]
    assert len(upper) == 1 and bones[pins >= n][0] == 2


def test_vertices_of_a_bone_without_segment_are_all_pinned():
    """The column of unbound vertices (NaN segment) follows the object: every such vertex is pinned."""
    X, T = _two_pieces()
    n = len(X) // 2
    W = np.zeros((len(X), 3))
    W[:n, 0] = X[:n, 0] < 2.0
    W[:n, 1] = X[:n, 0] >= 2.0
    W[n:, 2] = 1.0
    heads = np.vstack([HEADS, np.full((1, 3), np.nan)])
    tails = np.vstack([TAILS, np.full((1, 3), np.nan)])
    pins, bones = choose_pins(X, T, W, heads, tails, 0.3)
    assert np.array_equal(pins[pins >= n], np.arange(n, 2 * n))
    assert (bones[pins >= n] == 2).all()


def test_vertices_bound_to_one_bone_alone_are_pinned_wherever_they_lie():
    """Two blocks rigidly bound to their bones (weight 1), skin included, glued by a blended
    band: every rigidly bound vertex is pinned to its bone and the band is left to the solve,
    so glue between parts that nearly touch cannot drag a rigid part.  Exact set equality."""
    from core.model.rigid import RIGID_WEIGHT
    from core.validation.scenes import chain_weights

    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    W = chain_weights(X, np.array([1.5, 2.5]))
    pins, bones = choose_pins(X, T, W, HEADS, TAILS, 0.3)
    rigid = np.flatnonzero(W.max(axis=1) >= RIGID_WEIGHT)
    assert np.isin(rigid, pins).all() and (bones[np.isin(pins, rigid)] == np.argmax(W[rigid], axis=1)).all()
    skin = rigid[surface_depth(X, T)[rigid] == 0.0]
    assert len(skin) > 0 and np.isin(skin, pins).all()  # the skin of a rigid part too
    band = np.flatnonzero(W.min(axis=1) > 0.1)
    assert len(band) > 0 and not np.isin(band, pins).any()


def test_without_the_rigid_rule_only_depth_pins_rigidly_bound_vertices():
    """Pin Rigidly Bound off: a rigidly bound block pins its inner flesh only, so its skin is solved;
    the pins are a subset of the default's (exact sets)."""
    from core.model.rigid import RIGID_WEIGHT
    from core.validation.scenes import chain_weights

    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    W = chain_weights(X, np.array([1.5, 2.5]))
    on, _ = choose_pins(X, T, W, HEADS, TAILS, 0.3)
    off, bones = choose_pins(X, T, W, HEADS, TAILS, 0.3, rigid=False)
    assert np.isin(off, on).all() and len(off) < len(on)
    off_bone = segment_distances(X, HEADS, TAILS).min(axis=1) > 0.0  # the bar's end caps touch the bones
    rigid_skin = np.flatnonzero((W.max(axis=1) >= RIGID_WEIGHT) & (surface_depth(X, T) == 0.0) & off_bone)
    assert len(rigid_skin) > 0 and not np.isin(rigid_skin, off).any()
    assert (np.bincount(bones, minlength=2) >= 1).all()  # every bone still pins its core


def test_bone_tet_weights_are_the_nearest_segment_away_from_the_joint_and_blend_across_it():
    """Rows sum to one; a tet far from the joint belongs to its nearest bone alone (to 1e-12); tets at the
    joint (x = 2) share the two bones; a bone without a segment (NaN) gets no weight."""
    from core.physskin.assignment import bone_tet_weights

    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    heads = np.vstack([HEADS, np.full((1, 3), np.nan)])
    tails = np.vstack([TAILS, np.full((1, 3), np.nan)])
    W = bone_tet_weights(X, T, heads, tails, 0.1)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert (W[:, 2] == 0.0).all()
    c = X[T].mean(axis=1)[:, 0]
    far = np.abs(c - 2.0) > 1.0
    assert np.abs(W[far, :2] - np.eye(2)[assign_tets(X, T, HEADS, TAILS)[far]]).max() < 1e-12
    near = np.abs(c - 2.0) < 0.1
    assert near.any() and (W[near, :2].min(axis=1) > 0.1).all()


def test_skeleton_pins_are_few_lie_on_the_bones_and_pin_every_bone():
    """The seed's minimal pins on the bar: the vertices on the bone line (d = 0), a few percent of all,
    each pinned to its nearest bone, both bones pinned."""
    from core.physskin.assignment import skeleton_pins

    X, T = bar_scene(4.0, 1.0, 4, bones=2).mesh.X, bar_scene(4.0, 1.0, 4, bones=2).mesh.T
    pins, bones = skeleton_pins(X, T, HEADS, TAILS, 0.1)
    D = segment_distances(X, HEADS, TAILS)
    assert len(pins) < 0.1 * len(X) and np.allclose(D[pins].min(axis=1), 0.0)
    assert (D[pins, bones] == D[pins].min(axis=1)).all() and set(bones) == {0, 1}
