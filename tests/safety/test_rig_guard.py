"""Issue 12, item 9: the rig's discontinuities are reported with their frame, and can reset the simulation.

Before: a 100 m jump of the root bone smeared the flesh 90-104 m on a 2.3 m
creature with exit 0 and no warning; shape keys after a 180-degree flip sat
541 km from the basis; an armature scaled to 0 gave a raw ``LinAlgError``.
Each case is made in the creature's own animation (constant keys at frame
12) and baked as a user would: the Python API and the command line.
Bounds are shares of the creature's size (about 2.3 m).
"""

import json
import math

import numpy as np

from tests.safety import faults
from tests.safety.conftest import run_command

CUT = 12


def constant_keys(target, path, before, after):
    """``path`` holds ``before`` up to frame CUT-1 and ``after`` from CUT on: a cut, not a motion."""
    setattr(target, path, before)
    target.keyframe_insert(path, frame=CUT - 1)
    setattr(target, path, after)
    target.keyframe_insert(path, frame=CUT)
    action = target.id_data.animation_data.action
    from bl_ext.user_default.skinmodes.character import fcurves_of

    for fc in fcurves_of(action):
        for kp in fc.keyframe_points:
            if kp.co[0] in (CUT - 1, CUT) and fc.data_path.endswith(path):
                kp.interpolation = "CONSTANT"


def jump_root_bone(arm, metres=100.0):
    constant_keys(arm.pose.bones["body"], "location", (0.0, 0.0, 0.0), (0.0, metres, 0.0))


def flip_armature(arm):
    arm.rotation_mode = "XYZ"
    constant_keys(arm, "rotation_euler", (0.0, 0.0, 0.0), (0.0, 0.0, math.pi))


def uncut_max_offset(addon, obj, scene):
    """The creature's own largest offset (% of its size), baked before the cut is made: its tail
    swings a fifth of the body, so a fixed bound would measure the defaults, not the cut."""
    scene.frame_set(1)
    return addon.api.bake(obj, output="PC2")["max_offset_percent"]


def test_a_100m_jump_is_reported_with_its_frame_and_reset_at_cuts_holds_the_flesh(addon, shot):
    obj, arm, scene, _folder = shot
    uncut = uncut_max_offset(addon, obj, scene)
    jump_root_bone(arm)
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    (warning,) = [w for w in summary["warnings"] if "the rig jumps" in w]
    assert warning.startswith(f"frame {CUT}: the rig jumps by") and "turn on Reset at Cuts" in warning
    assert "\n" not in warning
    # The advice: Reset at Cuts restarts at rest on the new pose; the message changes and the flesh holds.
    obj.skinmodes.reset_at_cuts = True
    summary = addon.api.bake(obj, output="PC2")
    warning = next(w for w in summary["warnings"] if "the rig jumps" in w)
    assert warning.startswith(f"frame {CUT}: ") and "restarts at rest there (Reset at Cuts)" in warning
    # A jiggle, not a smear across the jump (100 m, 4,000 % of the creature): at most a quarter
    # more than the uncut shot, the restart's own settling.
    assert summary["max_offset_percent"] <= 1.25 * uncut + 1.0, (summary["max_offset_percent"], uncut)


def test_one_cut_is_one_warning(addon, shot):
    obj, arm, scene, _folder = shot
    jump_root_bone(arm)
    obj.skinmodes.reset_at_cuts = True
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    assert [w.split(":")[0] for w in summary["warnings"] if "the rig jumps" in w] == [f"frame {CUT}"]


def test_shape_keys_after_a_flip_stay_near_the_basis_with_reset_at_cuts(addon, shot):
    """A 180-degree turn of the whole rig in one frame: reported at its frame; with Reset at Cuts
    every shape key stays within the uncut shot's own jiggle of the basis (541 km before)."""
    obj, arm, scene, _folder = shot
    uncut = uncut_max_offset(addon, obj, scene)
    addon.api.clear_bake(obj)
    flip_armature(arm)
    obj.skinmodes.reset_at_cuts = True
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="SHAPE_KEYS")
    assert any(w.startswith(f"frame {CUT}: ") for w in summary["warnings"]), summary["warnings"]
    keys = obj.data.shape_keys.key_blocks
    basis = np.empty(3 * len(obj.data.vertices))
    keys["Basis"].data.foreach_get("co", basis)
    size = obj.skinmodes.stat_size
    for kb in keys:
        if kb.name.startswith("skinmodes."):
            co = np.empty_like(basis)
            kb.data.foreach_get("co", co)
            # Within the uncut shot's own jiggle (plus a quarter for the restart), not 541 km.
            assert np.abs(co - basis).max() <= (1.25 * uncut + 1.0) / 100.0 * size, kb.name


def test_a_bone_scaled_to_zero_is_reported_with_its_frame(addon, shot):
    obj, arm, scene, _folder = shot
    constant_keys(arm.pose.bones["tail.3"], "scale", (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    (warning,) = [w for w in summary["warnings"] if "scaled to zero" in w]
    assert warning.startswith(f"frame {CUT}: ") and "\n" not in warning


def test_an_armature_scaled_to_zero_is_one_line_from_the_command_line(addon, installed, tmp_path):
    """Exit 1, one line naming the frame, no traceback, the .blend and its caches as they were."""
    import bpy

    from tests.addon.helpers import disk_fingerprint

    name, folder = installed
    blend = folder / "shot.blend"
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arm = bpy.data.objects["CreatureRig"]
    constant_keys(arm, "scale", (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    bpy.ops.wm.save_mainfile()
    before = disk_fingerprint(folder)
    out = run_command(tmp_path, "bake", "--blend", str(blend), "--object", name)
    assert out.returncode == 1
    assert faults.last_line(out.stderr).startswith(f"skinmodes: error: frame {CUT}: the rig cannot be inverted")
    assert {k: v for k, v in disk_fingerprint(folder).items() if not k.endswith(".npz")} == {
        k: v for k, v in before.items() if not k.endswith(".npz")
    }  # the tet and model caches may stay: the next bake of the same mesh reuses them
    # Fixed as it says, a jump instead: the warning reaches the command's JSON summary.
    constant_keys(arm, "scale", (1.0, 1.0, 1.0), (1.0, 1.0, 1.0))
    jump_root_bone(arm)
    bpy.ops.wm.save_mainfile()
    out = run_command(tmp_path, "bake", "--blend", str(blend), "--object", name)
    assert out.returncode == 0, out.stderr
    assert any(w.startswith(f"frame {CUT}: the rig jumps") for w in json.loads(out.stdout)["warnings"])


def test_a_rig_that_is_not_a_number_is_refused_by_name(addon, shot):
    """Issue 24 (low).  Before: a NaN in the rig with Reset at Cuts baked NaN positions and said only
    "the rig jumps by nan%".  Now the bake stops at that frame naming the bone, and changes nothing."""
    import bpy

    from tests.addon.helpers import disk_fingerprint, full_fingerprint

    obj, arm, _scene, folder = shot
    obj.skinmodes.reset_at_cuts = True
    addon.api.compute_modes(obj)  # the shared caches exist already: only the bake's own files may not change
    constant_keys(arm.pose.bones["body"], "location", (0.0, 0.0, 0.0), (math.nan, 0.0, 0.0))
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    try:
        addon.api.bake(obj, output="PC2", frames=(1, 24))
    except addon.core.errors.SkinmodesError as exc:
        line = str(exc)
    else:
        line = "baked"
    assert line.startswith(f"frame {CUT}: the rig is not a number there (body") and "nan%" not in line, line
    assert (full_fingerprint(bpy, obj), disk_fingerprint(folder)) == before


def test_a_parent_bone_scaled_to_zero_is_named_and_not_called_a_mirror_flip(addon, shot):
    """tail.2 scaled to 0 collapses tail.3 with it: the warning names the parent that was scaled, and
    round-off signs of the collapsed children are not reported as negative scale."""
    obj, arm, scene, _folder = shot
    constant_keys(arm.pose.bones["tail.2"], "scale", (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    (warning,) = [w for w in summary["warnings"] if "scaled to zero" in w]
    assert warning.startswith(f"frame {CUT}: bone 'tail.2' "), warning
    assert not [w for w in summary["warnings"] if "negative scale" in w], summary["warnings"]


def test_a_wing_flapping_half_the_body_per_frame_is_not_called_a_cut(addon, shot, monkeypatch):
    """Issue 23, item 6b: a wasp's wing, its tips moving 45 % of the body per frame, periodically, was
    reported as "the rig jumps ... (a cut?)" with advice to turn on Reset at Cuts.  The creature's tail
    flaps here 1 rad per frame (a 4-frame triangle wave keyed on every frame), its tip about half the
    creature's size per frame: the rig accelerates past the guard's threshold at every stroke's end,
    but its steps repeat, so nothing is called a cut."""
    import sys

    obj, arm, scene, _folder = shot
    tail = arm.pose.bones["tail.1"]
    tail.rotation_mode = "XYZ"
    for f in range(scene.frame_start, scene.frame_end + 1):
        tail.rotation_euler = (0.0, 0.0, (1.0, 0.0, -1.0, 0.0)[f % 4])
        tail.keyframe_insert("rotation_euler", frame=f)
    scene.frame_set(scene.frame_start)
    summary = addon.api.bake(obj, output="PC2")
    assert [w for w in summary["warnings"] if "the rig jumps" in w] == []
    # The flap does pass the acceleration threshold: without the discontinuity test (every step
    # isolated, as before issue 23) the same bake is told it has a cut.
    package = addon.api.__name__.rsplit(".", 1)[0]
    monkeypatch.setattr(sys.modules[package + ".core.pipeline.guards"], "CUT_RATIO", 0.0)
    sys.modules[package + ".session"].session_for(obj).invalidate()  # a fresh simulation below
    scene.frame_set(scene.frame_start)
    summary = addon.api.bake(obj, output="PC2")
    assert [w for w in summary["warnings"] if "the rig jumps" in w] != []


def test_a_mirrored_parent_of_an_object_rig_is_named_as_the_object(addon, tmp_path):
    """Issue 39 (low): a mesh without an armature, under an empty whose scale flips to -1, was reported as
    "bone 'the object 'OnNegEmpty'' of the rig has a negative scale".  The object's own column is named as
    what it is now: "the object 'OnNegEmpty' or a parent of it"."""
    import bpy

    from tests.addon.test_object_rig import soft_box

    obj = soft_box(bpy, tmp_path, name="OnNegEmpty")
    obj.skinmodes.frame_end = CUT + 6
    bpy.ops.object.empty_add()
    parent = bpy.context.active_object
    obj.parent = parent
    constant_keys(parent, "scale", (1.0, 1.0, 1.0), (-1.0, 1.0, 1.0))
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    bpy.context.scene.frame_set(1)
    summary = addon.api.bake(obj, output="PC2")
    (warning,) = [w for w in summary["warnings"] if "negative scale" in w]
    assert warning.startswith(f"frame {CUT}: the object 'OnNegEmpty' or a parent of it has a negative scale"), warning
    assert "bone" not in warning.split(" has ")[0] and "\n" not in warning
