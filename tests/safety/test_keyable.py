"""Issue 24, low item: what the bake reads once is not keyable.

Before: frame start/end, Scene Range, Live Preview, the inspected mode and a training pose's frame
and contact could be keyed; a keyed End made the baked range depend on the current frame.  Now
only settings the simulation reads per frame are animatable; keying the others is refused by
Blender itself (TypeError), and frame properties hold only Blender's frames.
"""

import pytest

SETTINGS = ["frame_start", "frame_end", "use_scene_range", "live_preview", "inspect_mode"]
POSE = ["frame", "contact", "contact_group"]


def test_range_and_view_settings_cannot_be_keyed(addon, creature):
    obj, _arm, _scene = creature
    s = obj.skinmodes
    for name in SETTINGS:
        assert not s.bl_rna.properties[name].is_animatable, name
        with pytest.raises(TypeError):
            s.keyframe_insert(name, frame=1)
    assert (s.bl_rna.properties["frame_end"].hard_min, s.bl_rna.properties["frame_end"].hard_max) == (
        -1048574,
        1048574,
    )


def test_a_training_pose_cannot_be_keyed(addon, creature):
    obj, _arm, _scene = creature
    addon.api.set_poses(obj, [(40, "auto")])
    pose = obj.skinmodes.poses[0]
    for name in POSE:
        assert not pose.bl_rna.properties[name].is_animatable, name
