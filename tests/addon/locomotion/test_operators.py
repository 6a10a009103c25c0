"""Find Gait and Clear Gait (skinmodes_addon/locomotion/operators.py) in real Blender, and the found gait
played by the Live Preview and the bake through the same frame loop as the jiggle.

Find Gait runs with the object's settings at one generation (3 restarts of 12 rollouts of 3 s, 12 finalists
judged on 10 s: about 15 s on this machine's 2 cores); the gait it finds is weak, but it moves the mesh.
"""

import numpy as np

from tests.addon.helpers import evaluated


def test_find_gait_stores_a_gait_the_preview_and_the_bake_play_alike(addon, slug, tmp_path):
    """The preview scrubbed in any order and the point cache give the same mesh (1e-5 m: float32 positions
    of a 1 m blob); the object's transform is never touched; Clear Gait removes the gait."""
    import bpy

    scene = bpy.context.scene
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "slug.blend"))
    transform = np.array(slug.matrix_world)
    rest = evaluated(bpy, slug)
    assert bpy.ops.skinmodes.find_gait() == {"FINISHED"}
    assert slug.skinmodes.locomotion and slug.get("skinmodes_gait")
    slug.skinmodes.live_preview = True
    shown = {}
    for f in (9, 3, 16, 1, 8):
        scene.frame_set(f)
        shown[f] = evaluated(bpy, slug)
    slug.skinmodes.live_preview = False
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, slug) - pos).max() < 1e-5, f
    assert np.abs(shown[1] - rest).max() < 1e-5  # it starts at rest, on the ground
    assert np.abs(shown[16] - rest).max() > 1e-3  # and the gait moves it (a millimetre at the least)
    np.testing.assert_array_equal(np.array(slug.matrix_world), transform)
    assert bpy.ops.skinmodes.clear_gait() == {"FINISHED"}
    assert not slug.get("skinmodes_gait")


def test_find_gait_needs_a_mesh_without_an_armature(addon, slug):
    import bpy

    slug.modifiers.new("Armature", "ARMATURE")
    assert not bpy.ops.skinmodes.find_gait.poll()
