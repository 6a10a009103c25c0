"""Issue 24, low item: a bake and Clear Bake remove only the shape keys skinmodes made.

Before: a user's shape key named ``skinmodes.smile`` was deleted by the first Point Cache bake,
and the user's own Basis was removed by Clear Bake of a shape-key bake.  Key names and the
Basis's coordinates are compared exactly.
"""

import numpy as np


def user_keys(obj):
    basis = obj.shape_key_add(name="Basis", from_mix=False)
    smile = obj.shape_key_add(name="skinmodes.smile", from_mix=False)
    smile.data[0].co.z += 0.01
    return basis


def names(obj):
    keys = obj.data.shape_keys
    return [] if keys is None else [kb.name for kb in keys.key_blocks]


def test_a_point_cache_bake_keeps_a_user_key_named_like_ours(addon, shot):
    obj, _, _scene, _folder = shot
    user_keys(obj)
    addon.api.bake(obj, output="PC2", frames=(1, 4))
    assert names(obj) == ["Basis", "skinmodes.smile"]
    addon.api.clear_bake(obj)
    assert names(obj) == ["Basis", "skinmodes.smile"]


def test_clearing_a_shape_key_bake_keeps_the_user_s_basis_and_keys(addon, creature):
    obj, _arm, _scene = creature
    user_keys(obj)
    rest = np.array([v.co for v in obj.data.shape_keys.key_blocks["Basis"].data])
    addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 4))
    assert names(obj)[:2] == ["Basis", "skinmodes.smile"] and len(names(obj)) == 6
    addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 3))  # a rebake sets only its own keys aside
    assert names(obj)[:2] == ["Basis", "skinmodes.smile"] and len(names(obj)) == 5
    addon.api.clear_bake(obj)
    assert names(obj) == ["Basis", "skinmodes.smile"]
    assert np.array_equal(np.array([v.co for v in obj.data.shape_keys.key_blocks["Basis"].data]), rest)


def test_the_basis_a_bake_added_goes_with_it(addon, creature):
    obj, _arm, _scene = creature
    addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 4))
    addon.api.clear_bake(obj)
    assert obj.data.shape_keys is None


def test_only_a_user_basis_is_kept_by_clear_bake(addon, creature):
    obj, _arm, _scene = creature
    obj.shape_key_add(name="Basis", from_mix=False)
    addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 4))
    addon.api.clear_bake(obj)
    assert names(obj) == ["Basis"]
