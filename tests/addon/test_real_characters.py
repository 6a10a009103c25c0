"""Real rigged characters baked with the default settings look plausible (issue 11).

Five public glTF characters (tests/assets/characters/CREDITS.md) are imported
as an animator would, baked through the Python API with every setting at its
default, and measured by testkit/real_characters.py: offsets are ``baked -
rig-only`` world positions in % of the character's size (the bake summary's).  Each clip is followed
by a 1.5 s hold on its last pose.

Thresholds are the issue's, stated as what an animator accepts:
- the bake finishes, writes no NaN and its summary raises nothing;
- max offset <= 25 % of the size: jiggle, not an explosion;
- first simulated frame <= 1 % (the start state and the first solver step,
  frames start and start + 1): no pop when the shot starts moving;
- from 1 s after the rig stops to the end of the hold, every vertex is within
  1 % of the animated pose (the flesh settles back on the animator's pose).

A character whose clip stops dead from full speed (``abrupt_stop``: the
robot's waving forearm moves 30 % of its size per frame and stops within one
frame) may make the guard name that frame (and nothing else); its follow-through
may reach ABRUPT_MAX_PCT (a real overshoot, not an explosion), and it must
still settle.

Each character is baked once per module and shared by its checks.
"""

import math
import os

import numpy as np
import pytest

from testkit import real_characters as rc

pytestmark = pytest.mark.slow
# The plausibility of the motion is the solver's, the same in every Blender; the 4.2 lane bakes the
# smallest character only (its glTF import and bake path), to keep CI's two lanes under 30 minutes.
LANE_42 = os.environ.get("SKINMODES_LANE") == "4.2"
NAMES = ["rigged_simple"] if LANE_42 else [c.name for c in rc.CHARACTERS]

MAX_OFFSET_PCT = 25.0
FIRST_FRAME_PCT = 1.0
SETTLED_PCT = 1.0
# After a dead stop from 7 sizes per second the default jiggle (3 Hz, damping ratio 0.2) overshoots
# by about a third of the size; half the size would mean the solver, not the rig, is at fault.
ABRUPT_MAX_PCT = 50.0
# Scale invariance: relative offsets (offset / size) agree to 1e-3 per vertex and frame.  The
# .pc2 stores float32 positions (1e-7 relative) and the solver stops at a tolerance relative to the
# character's size, so an implementation whose physics does not depend on the modelling scale
# differs far below this; a scale-dependent one differs by tens of % of the size (issue 11).
# 1e-3 of a 1.8 m humanoid is 1.8 mm, invisible in a render.
SCALE_RTOL = 1e-3
SCALES = (0.01, 1.0, 100.0)


@pytest.fixture(scope="module")
def baked(addon, tmp_path_factory):
    """measure(name, scale=None): the character's default bake, measured once per module."""
    import bpy

    done = {}

    def measure(name, scale=None):
        character = rc.spec(name)
        scale = character.scale if scale is None else scale
        if (name, scale) not in done:
            folder = tmp_path_factory.mktemp(f"{name}-x{scale:g}")
            done[name, scale] = rc.measure(bpy, character, folder, scale=scale)
        return done[name, scale]

    return measure


# Known short (issue 37, open): the frog's jump at the default Wobble moves its shoulders, the flesh between its
# held front legs and its body, 30.7 % of the size (the body itself 15-18 %, as a / (2 pi f)^2 asks), and two
# solver steps of the landing stop at the iteration cap: the flesh has no strain limit yet.
PLAUSIBLE = [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="issue 37: frog shoulders 30.7 % at the landing"))
    if n == "frog"
    else n
    for n in NAMES
]


@pytest.mark.parametrize("name", PLAUSIBLE)
def test_default_bake_is_plausible(baked, name):
    m = baked(name)
    report = (
        f"{name}: max {m.max_offset_pct:.3g} %, first frame {m.first_offset_pct:.3g} %, "
        f"settled {m.settled_offset_pct:.3g} % of the {m.size:.3g}-unit size "
        f"(worst: vertex {m.worst_vertex}, bone {m.worst_bone}, frame {m.worst_frame}); "
        f"messages {m.messages}, warnings {m.warnings}"
    )
    assert m.frames_baked == m.frames[1] - m.frames[0] + 1, report
    assert not m.nan, report
    stop = rc.spec(name).abrupt_stop
    if stop is None:
        assert m.messages == [] and m.warnings == [], report
        assert m.max_offset_pct <= MAX_OFFSET_PCT, report
    else:
        # The stop's second difference sits near the guard's threshold (25 % of the size per frame):
        # the guard may or may not call it a cut, but it must name no other frame and nothing else.
        # The forearm is an appendage that swings through (issue 31): stopping it dead may leave the
        # solver's step or two after the stop at its iteration cap (issue 23 makes it converge).
        cut = [w for w in m.warnings if w.startswith(f"frame {stop}: the rig jumps by")]
        after = tuple(f"(frames {f}" for f in (stop + 1, stop + 2))
        capped = [w for w in m.warnings if "stopped unconverged" in w and any(a in w for a in after)]
        assert m.messages == [] and len(cut) <= 1 and len(cut) + len(capped) == len(m.warnings), report
        assert m.max_offset_pct <= ABRUPT_MAX_PCT, report
    assert m.first_offset_pct <= FIRST_FRAME_PCT, report
    assert m.settled_offset_pct <= SETTLED_PCT, report


@pytest.mark.skipif(LANE_42, reason="three bakes of the humanoid: run in the main lane only (CI time)")
def test_same_motion_relative_to_size_at_any_scale(baked):
    """The humanoid at x0.01, x1 and x100 object scale (x100 is also its bake above)."""
    runs = {s: baked(rc.SCALE_TEST_CHARACTER, scale=s) for s in SCALES}
    ref = runs[1.0]
    for s, m in runs.items():
        # The size itself scales exactly (object scale): a check of the harness, to float32 round-off.
        assert math.isclose(m.size, s * ref.size, rel_tol=1e-5), (s, m.size, ref.size)
        assert m.relative_offsets.shape == ref.relative_offsets.shape
        assert np.isfinite(m.relative_offsets).all(), f"x{s}: NaN offsets"
        worst = float(np.abs(m.relative_offsets - ref.relative_offsets).max())
        assert worst <= SCALE_RTOL, (
            f"x{s}: offsets differ from x1 by {100 * worst:.3g} % of the size "
            f"(max offset {m.max_offset_pct:.3g} % vs {ref.max_offset_pct:.3g} % at x1)"
        )


@pytest.mark.skipif(LANE_42, reason="the humanoid's import and modes: run in the main lane only (CI time)")
def test_physics_skin_keeps_the_volume_of_a_bent_elbow(addon, tmp_path):
    """Issue 15: a bent elbow on a real character keeps its volume within 3 %.

    CesiumMan (imported at x100) in its rest pose with the left forearm turned 90°, Physics
    Skin on and every other setting at its default (Poisson ratio 0.4), measured on the
    add-on's own tet mesh.  The bent limb (tets bound mostly to the upper arm and forearm):
    LBS -8.5 %, physics skin -2.4 % (bound: 3 %, the issue's).  The joint alone (both
    weights above 5 %), the hardest part: LBS -19.0 % with 2 inverted tets, physics -3.6 %
    with none; bound: at most a quarter of LBS's loss and no inverted tet.
    """
    import bpy

    m = rc.elbow_volumes(bpy, rc.load(bpy, rc.spec(rc.ELBOW.character)), rc.ELBOW, tmp_path)
    print(m)
    assert m["lbs_limb_pct"] < -5.0  # the pose does bend the elbow: LBS visibly collapses it
    assert abs(m["physics_limb_pct"]) <= 3.0
    assert abs(m["physics_joint_pct"]) <= 0.25 * abs(m["lbs_joint_pct"])
    assert m["physics_joint_inverted"] == 0 and m["physics_limb_inverted"] == 0


@pytest.mark.skipif(LANE_42, reason="the humanoid's import and modes: run in the main lane only (CI time)")
def test_a_contact_pose_holds_a_real_elbow_crease_still(addon, tmp_path):
    """Issue 16 on a real character: CesiumMan's left forearm folds 140° onto the upper arm over
    frames 1-12 and holds.  Added as a training pose with automatic contact, the pose finds the
    fold (the arm's bones own most contact vertices; none at rest), the bake runs with it, and
    while the pose is held the contact vertices do not jiggle (their secondary motion is 0 to
    1e-9 of the largest) although the rest of the flesh does."""
    import bpy
    import skinmodes_api as api

    loaded = rc.load(bpy, rc.spec(rc.ELBOW.character))
    rc.bend_elbow(bpy, loaded, rc.ELBOW)  # rest pose, action unassigned; now key the fold
    bone = loaded.armature.pose.bones[rc.ELBOW.lower]
    axis = "XYZ".index(rc.ELBOW.axis)
    for frame, degrees in ((1, 0.0), (12, 140.0)):
        angles = [0.0, 0.0, 0.0]
        angles[axis] = math.radians(degrees)
        bone.rotation_euler = angles
        bone.keyframe_insert("rotation_euler", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    obj = loaded.obj
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "elbow_fold.blend"))  # the cache goes beside it
    api.set_poses(obj, [(12, "auto")])
    summary = api.bake(obj)
    assert summary["warnings"] == [] and summary["poses"][0][0] == 12 and summary["poses"][0][1] > 50
    session = addon.session.session_for(obj)
    ps = session.prepared.posespace
    sim = session.simulation
    rest = addon.core.model.rig.rest_parameters(ps.model.rest.rig_weights.shape[1])
    contact = addon.core.pipeline.pose_contacts(session.prepared, rest, "auto")  # at rest: nothing touches
    assert len(contact) == 0
    crease = addon.core.pipeline.pose_contacts(session.prepared, session.rig[12], "auto")
    bones = np.argmax(session.prepared.tet_bone_weights[crease], axis=1)
    arm = [session.binding.bones.index(n) for n in (rc.ELBOW.upper, rc.ELBOW.lower)]
    assert np.isin(bones, arm).mean() > 0.5
    for f in (20, 30):  # the fold held: the blend is that pose's basis
        np.testing.assert_allclose(sim.drive.pose_weights(f), [0.0, 1.0], atol=1e-9)
        blended, _ = ps.model.blend(sim.drive.pose_weights(f))
        u = blended.basis() @ sim.state(f).z
        assert np.abs(u).max() > 0
        assert np.abs(u[crease]).max() <= 1e-9 * np.abs(u).max()


# Issue 23: Iterations is a safety cap.  Bakes at caps 10, 50 and 200 with Poisson's ratio at the
# slider's end must each be plausible and give the same max offset within 10 % (measured: identical
# to 4 digits on all seven characters; with the old quasi-Newton solve 50 iterations blew up).
CAPS_CHARACTERS = ["rigged_simple"] if LANE_42 else ["fox", "robot"]


@pytest.mark.parametrize("name", CAPS_CHARACTERS)
def test_the_iteration_cap_does_not_change_the_bake_at_the_poisson_maximum(addon, tmp_path, name):
    import bpy

    from core.settings import BY_NAME

    maxima = []
    for cap in (10, 50, 200):
        loaded = rc.load(bpy, rc.spec(name))
        addon.api.configure(loaded.obj, poisson_ratio=BY_NAME["poisson_ratio"].maximum, iterations=cap)
        m = rc.bake_and_measure(bpy, loaded, tmp_path / f"cap{cap}")
        report = f"{name} cap {cap}: max {m.max_offset_pct:.3g} %, first {m.first_offset_pct:.3g} %, "
        report += f"settled {m.settled_offset_pct:.3g} %, warnings {m.warnings}"
        assert not m.nan and m.max_offset_pct <= MAX_OFFSET_PCT, report
        assert m.first_offset_pct <= FIRST_FRAME_PCT and m.settled_offset_pct <= SETTLED_PCT, report
        maxima.append(m.max_offset_pct)
    assert max(maxima) <= 1.1 * min(maxima), maxima
