"""Issue 24, item 7: a shape-key bake never moves another object that shares the mesh.

Before: baking shape keys on one of two linked duplicates (Alt+D: one mesh, two objects) keyed the
shared mesh, so the never-baked twin played the first object's jiggle, and baking the twin was then
refused with a message about the first object's action.  Now the bake is refused in one line that
says to make the mesh single-user, and nothing changes (fingerprints compared exactly).
"""

import pytest

from tests.addon.helpers import evaluated, full_fingerprint


def test_shape_keys_on_a_shared_mesh_are_refused_and_the_twin_stays_still(addon, creature):
    import bpy

    obj, _arm, scene = creature
    twin = obj.copy()  # a linked duplicate: its own object, the same mesh
    twin.name = "Twin"
    scene.collection.objects.link(twin)
    assert twin.data == obj.data
    scene.frame_set(12)
    still = evaluated(bpy, twin).copy()
    before = full_fingerprint(bpy, obj), full_fingerprint(bpy, twin)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 12))
    line = str(err.value)
    assert "\n" not in line and "'Twin'" in line and "single-user" in line, line
    assert (full_fingerprint(bpy, obj), full_fingerprint(bpy, twin)) == before
    scene.frame_set(12)
    assert (evaluated(bpy, twin) == still).all()  # exact: nothing reached the shared mesh


def test_once_single_user_the_shape_key_bake_moves_only_its_object(addon, creature):
    import bpy

    obj, _arm, scene = creature
    twin = obj.copy()
    twin.name = "Twin"
    scene.collection.objects.link(twin)
    obj.data = obj.data.copy()  # Make Single User > Object & Data
    scene.frame_set(12)
    still = evaluated(bpy, twin).copy()
    addon.api.bake(obj, output="SHAPE_KEYS", frames=(1, 12))
    scene.frame_set(12)
    assert (evaluated(bpy, twin) == still).all() and twin.data.shape_keys is None
