"""A bake's outputs: shape keys that, under the armature, reproduce the simulation, and never a
touched action or keyframe of the user's.  Shape keys pass through an inverse-skinning 3x3 solve and
the armature's float32 arithmetic (1e-4 m)."""

import numpy as np
import pytest

from tests.addon.bake.test_job import save, simulated_positions
from tests.addon.helpers import actions_fingerprint, evaluated


def test_shape_keys_with_the_armature_reproduce_the_simulation(addon, creature, tmp_path):
    import bpy

    obj, _, scene = creature
    save(bpy, tmp_path)
    expected = simulated_positions(addon, bpy, obj, scene, range(1, 25))
    before = actions_fingerprint(bpy)
    assert bpy.ops.skinmodes.bake(output="SHAPE_KEYS") == {"FINISHED"}
    keys = obj.data.shape_keys.key_blocks
    assert len([k for k in keys if k.name.startswith("skinmodes.")]) == 24
    for f in (1, 6, 19, 24):
        scene.frame_set(f)
        active = [k.name for k in keys if k.name.startswith("skinmodes.") and k.value > 0.5]
        assert active == [f"skinmodes.{f:05d}"]
        assert np.abs(evaluated(bpy, obj) - expected[f]).max() < 1e-4
    # The user's actions are unchanged; ours is new.
    obj.skinmodes.bake_action and bpy.data.actions.remove(bpy.data.actions[obj.skinmodes.bake_action], do_unlink=True)
    assert actions_fingerprint(bpy) == before


@pytest.mark.parametrize("output", ["PC2", "SHAPE_KEYS"])
def test_bake_never_touches_actions_or_keyframes(addon, creature, tmp_path, output):
    import bpy

    save(bpy, tmp_path)
    names = sorted(a.name for a in bpy.data.actions)
    before = actions_fingerprint(bpy)
    assert bpy.ops.skinmodes.bake(output=output) == {"FINISHED"}
    obj = creature[0]
    ours = obj.skinmodes.bake_action
    assert sorted(a.name for a in bpy.data.actions if a.name != ours) == names
    if ours:
        bpy.data.actions.remove(bpy.data.actions[ours], do_unlink=True)
    assert actions_fingerprint(bpy) == before
