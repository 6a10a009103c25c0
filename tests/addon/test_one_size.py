"""Issue 23, item 6c: one size.  The bake summary's ``max_offset_percent`` and its guard messages, the
panel's Character Size and the real-character harness (testkit/real_characters.py, the README's table)
all use one "character's size": twice the largest distance of the simulated volume from its centre
(core.geometry.size.character_size), which the solver's tolerance also uses and which does not
change when the character turns.  Before, the harness and the README took the bounding-box diagonal
(45.8 units on a quadruped whose summary used 55.9)."""

import math

import numpy as np

from testkit import real_characters as rc


def test_the_summary_the_panel_and_the_harness_give_one_size(addon, creature, tmp_path):
    import bpy

    obj, _arm, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))  # the point cache goes beside it
    scene.frame_set(scene.frame_start)
    summary = addon.api.bake(obj, output="PC2")
    size = summary["character_size"]
    # The panel's status property is a float32: the same number to its precision (1e-6 relative).
    assert math.isclose(obj.skinmodes.stat_size, size, rel_tol=1e-6), (obj.skinmodes.stat_size, size)
    # The simulated volume's size, recomputed from the prepared tet mesh: the same definition, exactly.
    from bl_ext.user_default.skinmodes.session import session_for

    sim = session_for(obj).ensure_simulation()
    X = sim.prepared.mesh.X
    assert size == 2.0 * float(np.sqrt(np.max(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))
    # The harness's percentages are of that size: a 1 %-of-size offset reads 1 %.
    rig = np.zeros((1, 1, 3))
    moved = rig + np.array([0.01 * size, 0.0, 0.0])
    assert math.isclose(float(rc.offsets_percent(moved, rig, size)[0, 0]), 1.0)
    # Rotating the rest shape does not change it (a bounding-box diagonal would: up to 1.7x for a cube).
    R = np.array([[0.6, -0.8, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]])
    from bl_ext.user_default.skinmodes.core.geometry.size import character_size

    assert math.isclose(character_size(X @ R.T), size, rel_tol=1e-12)
