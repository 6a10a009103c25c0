"""The character's parts (core/model/parts.py): bones' flesh merged along the bone tree into pieces of a
useful size, a light thin chain kept apart from a thick body, the count bounded, the same under rotation."""

import numpy as np

from core.model.parts import MAX_PARTS, MIN_PART_SHARE, body_parts, bone_neighbours


def _chain(lengths, masses=None):
    """A line of n vertices split into bones by ``lengths`` (vertices each): weights (n, b), one-hot."""
    bone = np.repeat(np.arange(len(lengths)), lengths)
    W = np.zeros((len(bone), len(lengths)))
    W[np.arange(len(bone)), bone] = 1.0
    m = np.ones(len(bone)) if masses is None else np.asarray(masses)
    return W, m


def test_neighbours_are_parent_children_and_siblings():
    parents = np.array([-1, 0, 0, 1])
    near = bone_neighbours(parents)
    assert near[0] == {1, 2} and near[1] == {0, 2, 3} and near[2] == {0, 1} and near[3] == {1}


def test_a_light_thin_chain_stays_a_part_of_its_own_and_light_bones_of_a_kind_merge():
    # Bone 0: a thick body (deep flesh); bones 1-3: a thin tail chain of three light bones.
    W, m = _chain([400, 4, 4, 4])
    depth = np.r_[np.linspace(0, 1, 400), np.full(12, 0.1)]
    parents = np.array([-1, 0, 1, 2])
    parts = body_parts(W, m, depth, parents)
    assert parts.count == 2  # the body, and the tail (its bones merged together, never into the body)
    assert parts.bone_part[0] != parts.bone_part[1] == parts.bone_part[2] == parts.bone_part[3]
    assert parts.thin[parts.bone_part[1]] and not parts.thin[parts.bone_part[0]]
    assert np.allclose(parts.loads.sum(axis=1), 1.0)
    assert np.isclose(parts.masses.sum(), m.sum())


def test_the_count_is_bounded_and_every_part_is_heavy_enough_or_alone_of_its_kind():
    W, m = _chain([10] * 30)
    depth = np.ones(len(m))  # all thick
    parents = np.r_[-1, np.arange(29)]
    parts = body_parts(W, m, depth, parents)
    assert parts.count <= MAX_PARTS
    assert parts.masses.min() >= MIN_PART_SHARE * m.sum()


def test_bones_without_flesh_join_their_ancestors_part():
    W, m = _chain([50, 0, 50])
    parts = body_parts(W, m, np.ones(len(m)), np.array([-1, 0, 1]))
    assert parts.bone_part[1] == parts.bone_part[0]  # an IK pole: no flesh, loads its parent's part
    assert (parts.bone_part >= 0).all()


def test_parts_do_not_depend_on_scale_or_the_order_of_vertices():
    W, m = _chain([300, 6, 6, 100])
    depth = np.r_[np.linspace(0, 1, 300), np.full(12, 0.05), np.linspace(0, 0.9, 100)]
    parents = np.array([-1, 0, 1, 0])
    a = body_parts(W, m, depth, parents)
    perm = np.random.default_rng(0).permutation(len(m))
    b = body_parts(W[perm], 7.0 * m[perm], 1e3 * depth[perm], parents)
    assert np.array_equal(a.bone_part, b.bone_part) and np.array_equal(a.thin, b.thin)
    assert np.allclose(a.loads[perm], b.loads)
