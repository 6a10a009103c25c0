"""Issue 39 (low): a Colliders collection that can push nothing is refused, whatever the reason.

Before: a collection of meshes without Collision physics was refused in one line, but an empty one, or one
holding only the character, baked silently with no contact.  All three are refused alike now, in one line that
names the collection and what to do, before any work; the scene and the files stay as they were.
"""

import pytest

from tests.addon.helpers import disk_fingerprint, full_fingerprint


@pytest.mark.parametrize("setup", ["empty", "only itself"])
def test_a_colliders_collection_with_no_other_mesh_is_refused_in_one_line(addon, shot, setup):
    import bpy

    obj, _arm, _scene, folder = shot
    coll = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(coll)
    if setup == "only itself":
        coll.objects.link(obj)
    obj.skinmodes.colliders = "Colliders"
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2")
    line = str(err.value)
    assert "\n" not in line and line.startswith("the Colliders collection 'Colliders' holds no mesh"), line
    assert line.endswith("or clear the field")
    assert ("'Creature' itself" in line) == (setup == "only itself"), line
    assert (full_fingerprint(bpy, obj), disk_fingerprint(folder)) == before
