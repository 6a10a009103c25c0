"""Issue 39 (low): Physics Skin on a prop bound entirely to one bone.

Before: the bake failed with "ValueError: zero-size array to reduction operation maximum which has no
identity".  Every vertex of such a prop is pinned by its one bone (Physics Skin has no joint to let bend), so it
bakes as its bone moves it: all pinned, with one message that says so.  Exact: the baked positions are the
rig's (the pinned flesh has no secondary motion), to round-off of the point cache's float32.
"""

import numpy as np

from tests.addon.helpers import evaluated


def one_bone_prop(bpy, obj, arm):
    """The creature with every vertex weighted to its 'body' bone alone (the tail groups removed)."""
    for group in list(obj.vertex_groups):
        if group.name != "body":
            obj.vertex_groups.remove(group)
    body = obj.vertex_groups["body"]
    body.add(list(range(len(obj.data.vertices))), 1.0, "REPLACE")
    return obj


def test_physics_skin_on_a_one_bone_prop_bakes_it_pinned_with_a_message(addon, shot):
    import bpy

    obj, arm, scene, _folder = shot
    one_bone_prop(bpy, obj, arm)
    obj.skinmodes.physics_skin = True
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    notes = [m for m in summary["messages"] + summary["warnings"] if "one bone" in m]
    assert len(notes) == 1 and "\n" not in notes[0], summary
    assert summary["max_offset_percent"] <= 1e-4, summary
    for frame in (5, 20):
        scene.frame_set(frame)
        baked = evaluated(bpy, obj)
        mod = next(m for m in obj.modifiers if m.type == "MESH_CACHE")
        mod.show_viewport = False
        rig = evaluated(bpy, obj)
        mod.show_viewport = True
        assert np.abs(baked - rig).max() <= 1e-5 * obj.skinmodes.stat_size


def test_with_pin_rigidly_bound_off_the_same_prop_gets_a_physics_skin(addon, shot):
    """The way out the message names: only Pin Depth pins, the rest of the prop is solved (no note)."""
    import bpy

    obj, arm, scene, _folder = shot
    one_bone_prop(bpy, obj, arm)
    obj.skinmodes.physics_skin = True
    obj.skinmodes.pin_rigid = False
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    assert not [m for m in summary["messages"] + summary["warnings"] if "pins every vertex" in m], summary
    assert summary["frames_baked"] == 24
