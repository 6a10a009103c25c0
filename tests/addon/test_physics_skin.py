"""Physics Skin (mixed-FEM skinning, Song et al.) in real Blender: bake, preview, API, CLI and panel.

The output with Physics Skin on is the Armature modifier's result, plus the physics correction
(physics-skinned minus linearly blended tet positions, carried to the render mesh), plus, with
Secondary Motion on, the jiggle simulated on the physics-skinned rig.

Most tests key the creature's rig with a new action, one pose per frame (:data:`POSES`): the rest
pose; the whole rig moved and turned (a rigid motion); the tail bent 90 degrees at its middle joint
(tail.2) upwards and sideways.  The tail is a closed part of the render mesh, so its volume is
measured exactly on the baked triangles (divergence theorem).

Tolerances:
- "Equal" positions agree to 1e-5 of the creature's size (about 2 m): .pc2 files and Blender's
  meshes hold float32, and the physics solve stops at a residual whose position error is about
  4e-7 of the size (core/physskin/solve.py), so two bakes, or a bake and the preview, of the same
  frames agree far below this however the frames were ordered (measured: bit for bit).  Shape keys pass through a 3x3
  inverse-skinning solve and the armature's float32 arithmetic: 1e-4 m, as in bake/test_outputs.py.
- At the rest pose and under a rigid motion of the whole rig the correction is zero to round-off
  (measured 1e-8 of the size): the bake equals the Armature output to the same 1e-5.
- Volume: bending tail.2 by 90 degrees, linear blend skinning loses 10-16 % of the tail's volume
  and the physics skin 3 % (measured); the test asks for at least 5 % lost by the rig alone (the
  pose does bend the joint) and at most a third of that loss with the physics skin.
- Jiggle on top of the physics skin: on the creature's hop the physics correction and the jiggle
  each reach 2-5 % of the size and the jiggle on the physics-skinned rig differs from the jiggle on
  the plain rig by up to 0.4 % (measured); the test asks for more than 1 % for each and more than
  0.01 % for that difference, and for the difference to stay under a quarter of the jiggle (it is
  the same jiggle, on a slightly different rig).
- Pin depth: at the bent joints pins at 0.6 of the flesh move it by 0.6 % of the size from the
  default 0.3's (measured); the command-line test asks for 0.1 %, a hundred times its tolerance.

The headless command is run in its own process (tools/skinmodes_cli.py, as in test_cli.py), about
a second.
"""

import importlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from core.io.pc2 import read_pc2
from tests.addon.helpers import (
    actions_fingerprint,
    evaluated,
    modifiers_fingerprint,
    rna_values,
    run_cli,
    settings_fingerprint,
)

# One pose per frame: (armature location, armature rotation, {bone: rotation in degrees}).
POSES = {
    1: ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), {}),
    2: ((0.3, -0.2, 0.5), (0.4, 0.1, 1.0), {}),
    3: ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), {"tail.2": (90.0, 0.0, 0.0)}),
    4: ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), {"tail.2": (0.0, 0.0, 90.0)}),
}
REST, RIGID, BENT = (1,), (2,), (3, 4)


def key_poses(arm, scene):
    """Replace the rig's animation by a new action holding :data:`POSES`, and set the scene's range to it."""
    arm.animation_data.action = None
    for frame, (location, rotation, bones) in POSES.items():
        arm.location, arm.rotation_euler = location, rotation
        arm.keyframe_insert("location", frame=frame)
        arm.keyframe_insert("rotation_euler", frame=frame)
        for pb in arm.pose.bones:
            pb.rotation_mode = "XYZ"
            pb.rotation_euler = tuple(math.radians(a) for a in bones.get(pb.name, (0.0, 0.0, 0.0)))
            pb.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = min(POSES), max(POSES)


def rig_only(bpy, obj, scene, frames):
    """What the Armature modifier outputs at each frame (call before baking: there is no other modifier)."""
    assert [m.type for m in obj.modifiers] == ["ARMATURE"]
    out = {}
    for f in frames:
        scene.frame_set(f)
        out[f] = evaluated(bpy, obj)
    return out


def size_of(positions):
    return float(np.ptp(positions, axis=0).max())


def triangles(obj):
    mesh = obj.data
    mesh.calc_loop_triangles()
    tri = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", tri)
    return tri.reshape(-1, 3)


def tail_triangles(obj):
    """The triangles of the tail: the closed part of the mesh holding its rearmost vertex (the tip)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    mesh = obj.data
    edges = np.empty(2 * len(mesh.edges), dtype=np.int64)
    mesh.edges.foreach_get("vertices", edges)
    edges = edges.reshape(-1, 2)
    n = len(mesh.vertices)
    graph = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    part = connected_components(graph, directed=False)[1]
    co = np.empty(3 * n)
    mesh.vertices.foreach_get("co", co)
    tip = int(np.argmin(co.reshape(-1, 3)[:, 1]))
    tri = triangles(obj)
    return tri[part[tri[:, 0]] == part[tip]]


def volume(positions, tri):
    """Signed volume enclosed by the triangles (divergence theorem): exact for a closed part."""
    a, b, c = (positions[tri[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->", a, np.cross(b, c)) / 6.0)


def baked_positions(bpy, obj):
    """The point cache the object plays back: (frames, k, 3) float32."""
    positions, start, _ = read_pc2(bpy.path.abspath(obj.skinmodes.bake_file))
    assert start == obj.skinmodes.bake_start
    return positions


def test_physics_skin_alone_is_a_deformer_that_keeps_the_volume_of_a_bent_joint(addon, creature, tmp_path):
    """Secondary Motion off bakes the physics skin alone: the Armature output at the rest pose and under a
    rigid motion of the whole rig, the tail's volume kept where the rig alone collapses the bent joint; the
    Armature modifier and the user's keys are untouched, and Clear Bake gives back the rig-only stack."""
    import bpy

    obj, arm, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    key_poses(arm, scene)
    rig = rig_only(bpy, obj, scene, POSES)
    size = size_of(rig[1])
    keys, stack = actions_fingerprint(bpy), modifiers_fingerprint(obj)
    armature = rna_values(obj.modifiers["Armature"], skip={"is_active"})  # panel state: a new modifier is active
    s = obj.skinmodes
    s.physics_skin, s.secondary_motion = True, False
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    assert [m.name for m in obj.modifiers] == ["Armature", "Skinmodes Cache"]
    cache_file = Path(bpy.path.abspath(s.bake_file))
    baked = baked_positions(bpy, obj)
    shown = {}
    for f in POSES:
        scene.frame_set(f)
        shown[f] = evaluated(bpy, obj)
        assert np.abs(shown[f] - baked[f - 1]).max() < 1e-5 * size, f  # the cache is what plays
    for f in REST + RIGID:
        assert np.abs(shown[f] - rig[f]).max() < 1e-5 * size, f
    tail = tail_triangles(obj)
    rest_volume = volume(rig[1], tail)
    for f in BENT:
        lbs_loss = volume(rig[f], tail) / rest_volume - 1.0
        physics_loss = volume(shown[f], tail) / rest_volume - 1.0
        report = f"frame {f}: tail volume {100 * lbs_loss:+.2f} % rig only, {100 * physics_loss:+.2f} % physics"
        assert lbs_loss < -0.05, report  # the pose does bend the joint: linear blend skinning collapses it
        assert abs(physics_loss) <= abs(lbs_loss) / 3.0, report
        assert np.abs(shown[f] - rig[f]).max() > 0.01 * size, report  # the correction is there to see
    assert rna_values(obj.modifiers["Armature"], skip={"is_active"}) == armature
    assert actions_fingerprint(bpy) == keys
    assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    assert not cache_file.exists() and s.bake_kind == "" and s.bake_file == ""
    assert modifiers_fingerprint(obj) == stack
    for f in BENT:
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - rig[f]).max() < 1e-5 * size, f
    assert actions_fingerprint(bpy) == keys


def test_shape_keys_under_the_armature_reproduce_the_physics_skin(addon, creature, tmp_path):
    """A shape-key bake of the physics skin alone shows what its point cache shows, bent joints included
    (corrections of 10 % of the size, stored in rest space through the inverse of the blended bone maps)."""
    import bpy

    obj, arm, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    key_poses(arm, scene)
    s = obj.skinmodes
    s.physics_skin, s.secondary_motion = True, False
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    cache = baked_positions(bpy, obj)
    assert bpy.ops.skinmodes.bake(output="SHAPE_KEYS") == {"FINISHED"}
    assert obj.modifiers.get("Skinmodes Cache") is None and s.bake_kind == "SHAPE_KEYS"
    for f in POSES:
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - cache[f - 1]).max() < 1e-4, f


@pytest.mark.parametrize("secondary_motion", [False, True], ids=["physics_alone", "with_jiggle"])
def test_preview_equals_bake_with_physics_skin_in_any_order_of_frames(addon, creature, tmp_path, secondary_motion):
    """Turning Physics Skin on under a running preview re-simulates; the preview, visited in any order,
    shows what a bake from scratch (no session left from the preview) plays back."""
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    s = obj.skinmodes
    s.live_preview = True
    scene.frame_set(12)
    plain = evaluated(bpy, obj)
    s.physics_skin, s.secondary_motion = True, secondary_motion
    order = [12, 3, 24, 1, 17, 16, 18, 5, 24, 2, *np.random.default_rng(1).integers(1, 25, 8).tolist()]
    shown = {}
    for f in order:
        scene.frame_set(int(f))
        shown[int(f)] = evaluated(bpy, obj)
    size = size_of(shown[1])
    assert np.abs(shown[12] - plain).max() > 1e-3 * size  # the preview took the physics skin on
    s.live_preview = False
    assert obj.modifiers.get("Skinmodes Preview") is None
    addon.session.clear_sessions()
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - pos).max() < 1e-5 * size, f


@pytest.mark.xfail(
    strict=True,
    reason="issue 37, open: on the flesh-calibrated model the jiggle on the physics skin differs from the one on "
    "the rig by 0.20 of the jiggle, over the 0.25 asked",
)
def test_jiggle_is_simulated_on_the_physics_skinned_rig(addon, creature, tmp_path):
    """On the creature's hop, physics + jiggle differs from the physics skin alone by a jiggle and from the
    jiggle alone by the physics correction; it starts at rest on the physics-skinned pose, and its jiggle is
    driven by the physics-skinned rig (not the plain rig's jiggle added on).  The physics skin alone is a
    deformer: a bake of a few frames equals the full bake there, with no simulation history."""
    import bpy
    import skinmodes_api as api

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    rig = np.stack(list(rig_only(bpy, obj, scene, range(1, 25)).values()))
    size = size_of(rig[0])
    offsets = {}
    for name, physics, jiggle in (("jiggle", False, True), ("physics", True, False), ("both", True, True)):
        api.configure(obj, physics_skin=physics, secondary_motion=jiggle)
        api.bake(obj, output="PC2")
        offsets[name] = baked_positions(bpy, obj) - rig

    def largest(u):  # per frame, the largest offset as a share of the size
        return np.linalg.norm(u, axis=2).max(axis=1) / size

    jiggle_on_physics = offsets["both"] - offsets["physics"]
    assert largest(jiggle_on_physics[:1]).max() < 1e-5  # the first frame is at rest on the physics skin
    assert largest(jiggle_on_physics).max() > 0.01
    assert largest(offsets["both"] - offsets["jiggle"]).max() > 0.01
    other_rig = largest(jiggle_on_physics - offsets["jiggle"]).max()
    assert 1e-4 < other_rig < 0.25 * largest(offsets["jiggle"]).max(), other_rig
    api.configure(obj, physics_skin=True, secondary_motion=False)
    api.bake(obj, frames=(10, 14), output="PC2")
    part = baked_positions(bpy, obj)
    assert np.abs(part - (rig[9:14] + offsets["physics"][9:14])).max() < 1e-5 * size


def test_api_sets_the_physics_settings_and_refuses_bad_ones_changing_nothing(addon, creature):
    """configure() sets the three settings at once; an out-of-range pin depth (or a non-boolean switch) is
    refused in one line naming the setting and its range, and none of the values given with it is set."""
    import skinmodes_api as api

    obj = creature[0]
    s = api.settings(obj)
    assert (s.physics_skin, s.secondary_motion) == (False, True) and s.pin_depth == pytest.approx(0.3, rel=1e-6)
    api.configure(obj, physics_skin=True, secondary_motion=False, pin_depth=0.4)
    assert (s.physics_skin, s.secondary_motion) == (True, False) and s.pin_depth == pytest.approx(0.4, rel=1e-6)
    api.configure(obj, physics_skin=False, secondary_motion=True, pin_depth=0.3)
    before = settings_fingerprint(obj)
    for bad, message in (
        (1.5, "pin_depth must lie in [0.05, 0.95], got 1.5"),
        (0.0, "pin_depth must lie in [0.05, 0.95], got 0.0"),
    ):
        with pytest.raises(api.SkinmodesError) as refused:
            api.configure(obj, physics_skin=True, secondary_motion=False, pin_depth=bad)
        assert str(refused.value) == message
        assert settings_fingerprint(obj) == before
    with pytest.raises(api.SkinmodesError, match=r"^secondary_motion must be true or false, got 'no'$"):
        api.configure(obj, physics_skin=True, secondary_motion="no")
    assert settings_fingerprint(obj) == before


@pytest.mark.xfail(
    strict=True,
    reason="issue 37, open: with the flesh-calibrated model two steps of frames 3-4 stop at the 20-iteration cap "
    "(and the 1-sub-step damping note shows), so the summary's warnings are not empty",
)
def test_cli_physics_flags_bake_what_the_api_bakes(addon, dev_zip, creature, tmp_path):
    """``--physics-skin true --secondary-motion false --pin-depth 0.6`` bakes the same point cache as the
    same settings through the API (not the default pin depth's), and the saved .blend keeps them."""
    import bpy
    import skinmodes_api as api

    obj, arm, scene = creature
    key_poses(arm, scene)
    shot = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))  # saved with Physics Skin off: the flags must turn it on
    rig = rig_only(bpy, obj, scene, POSES)
    size = size_of(rig[1])
    api.configure(obj, physics_skin=True, secondary_motion=False)
    api.bake(obj, output="PC2")
    default_pins = baked_positions(bpy, obj)
    api.configure(obj, pin_depth=0.6)
    api.bake(obj, output="PC2")
    through_api = baked_positions(bpy, obj)
    out = run_cli(
        dev_zip,
        tmp_path,
        *("bake", "--blend", str(shot), "--object", obj.name, "--frames", "1-4"),
        *("--physics-skin", "true", "--secondary-motion", "false", "--pin-depth", "0.6"),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["frames"] == [1, 4] and summary["frames_baked"] == 4 and summary["warnings"] == []
    through_cli = read_pc2(summary["files"][0])[0]
    assert np.abs(through_cli - through_api).max() < 1e-5 * size
    # The pin depth reached the solve: 5x the agreement bound above.  Small in itself (measured 1.1e-4
    # of the size): most of the creature is weighted to one bone alone, pinned at any depth.
    assert np.abs(through_cli - default_pins).max() > 5e-5 * size
    assert np.abs(through_cli[2] - rig[3]).max() > 0.01 * size  # the physics skin bent the joint's flesh
    name = obj.name
    bpy.ops.wm.open_mainfile(filepath=str(shot))
    s = bpy.data.objects[name].skinmodes
    assert (s.physics_skin, s.secondary_motion, s.bake_kind) == (True, False, "PC2")
    assert s.pin_depth == pytest.approx(0.6, rel=1e-6)


def test_physics_panel_says_when_it_bakes_a_deformer(addon, creature):
    """The Physics Skin panel's note appears exactly when the bake will be the physics skin alone."""
    import bpy

    from tests.addon.test_ui import draw, texts

    s = creature[0].skinmodes
    note = "Bakes the physics skin alone (a deformer)"
    for physics, jiggle, shown in ((False, False, False), (True, True, False), (True, False, True)):
        s.physics_skin, s.secondary_motion = physics, jiggle
        assert (note in texts(draw(bpy, addon.ui.SKINMODES_PT_physics.draw))) == shown, (physics, jiggle)


def test_from_bones_only_skins_a_mesh_the_armature_cannot_deform(addon, creature, tmp_path):
    """The creature's vertex groups emptied: the Armature modifier leaves the mesh where it is.  Physics Skin
    From Bones Only bakes a plausible skin all the same: the rest pose is the mesh; with the tail bent 90°
    its tip lands within 5 % of the size of where the painted weights put it, and the tail keeps its
    volume within 8 % (measured -6.4 % and -6.5 %, where the painted weights' linear blend skinning
    loses 10-16 %)."""
    import bpy

    obj, arm, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    key_poses(arm, scene)
    painted = rig_only(bpy, obj, scene, POSES)
    for group in obj.vertex_groups:
        group.remove(list(range(len(obj.data.vertices))))
    rig = rig_only(bpy, obj, scene, POSES)
    size = size_of(rig[1])
    for f in BENT:
        assert np.abs(rig[f] - rig[1]).max() < 1e-6 * size, f  # the Armature modifier cannot deform it
    s = obj.skinmodes
    s.physics_skin, s.secondary_motion, s.physics_skin_from = True, False, "BONES"
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    baked = baked_positions(bpy, obj)
    assert np.isfinite(baked).all()
    assert np.abs(baked[0] - rig[1]).max() < 1e-5 * size
    tail = tail_triangles(obj)
    tip = int(np.argmin(rig[1][:, 1]))
    rest_volume = volume(rig[1], tail)
    for f in BENT:
        change = volume(baked[f - 1], tail) / rest_volume - 1.0
        off = float(np.linalg.norm(baked[f - 1][tip] - painted[f][tip]))
        report = f"frame {f}: tail volume {100 * change:+.2f} %, tip {off / size:.3f} of the size from the painted"
        assert abs(change) < 0.08 and off < 0.05 * size, report


@pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the humanoid's import: main lane only")
def test_from_bones_only_beats_blenders_automatic_weights_on_a_real_elbow(addon, tmp_path):
    """CesiumMan's elbow bent 90°, re-weighted by Blender's Automatic Weights (bone heat): their linear blend
    skinning loses 16.0 % of the joint with 11 inverted tets (measured); the physics skin from bones only,
    which uses no weights, loses 2.1 % with none.  Bound: at most a quarter of LBS's joint loss, the limb
    within 3 %, no inverted tet."""
    import bpy

    from testkit import physskin_auto, real_characters

    m = physskin_auto.compare(bpy, real_characters.ELBOW, tmp_path)
    assert m["automatic_lbs_joint_pct"] < -5.0  # the pose does bend the elbow
    assert abs(m["automatic_physics_joint_pct"]) <= 0.25 * abs(m["automatic_lbs_joint_pct"])
    assert abs(m["automatic_physics_limb_pct"]) <= 3.0
    assert m["automatic_physics_joint_inverted"] == 0 and m["automatic_physics_limb_inverted"] == 0
    assert m["automatic_pinned_share"] < 0.05


def bare_limb(bpy, scene, twist_deg):
    """A closed cylinder (radius 0.5 m, 4 m along z, 17 rings of 16) parented to a two-bone armature with an
    Armature modifier and no vertex group at all; bone 2 twisted by ``twist_deg`` about its axis at frame 2."""
    rings, sides = 17, 16
    a = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    z = np.linspace(-2.0, 2.0, rings)
    verts = [(0.5 * math.cos(t), 0.5 * math.sin(t), h) for h in z for t in a] + [(0.0, 0.0, -2.0), (0.0, 0.0, 2.0)]
    faces = [(r * sides + i, r * sides + (i + 1) % sides, (r + 1) * sides + (i + 1) % sides, (r + 1) * sides + i)
             for r in range(rings - 1) for i in range(sides)]  # fmt: skip
    bottom, top = rings * sides, rings * sides + 1
    faces += [(bottom, (i + 1) % sides, i) for i in range(sides)]
    faces += [(top, (rings - 1) * sides + i, (rings - 1) * sides + (i + 1) % sides) for i in range(sides)]
    mesh = bpy.data.meshes.new("limb")
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new("limb", mesh)
    arm = bpy.data.objects.new("rig", bpy.data.armatures.new("rig"))
    for o in (obj, arm):
        scene.collection.objects.link(o)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    for name, head, tail in (("upper", (0, 0, -2), (0, 0, 0)), ("lower", (0, 0, 0), (0, 0, 2))):
        bone = arm.data.edit_bones.new(name)
        bone.head, bone.tail = head, tail
    arm.data.edit_bones["lower"].parent = arm.data.edit_bones["upper"]
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.parent = arm
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    lower = arm.pose.bones["lower"]
    lower.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (2, twist_deg)):
        lower.rotation_euler = (0.0, math.radians(angle), 0.0)  # a bone's own Y is its axis
        lower.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, 2
    return obj


def test_from_bones_only_skins_a_mesh_with_no_vertex_groups(addon, bpy_scene, tmp_path):
    """A mesh parented to its armature with no vertex group at all (issue 30): From Bones Only accepts it
    (it needs no weights; the check refused it before) and gives a plausible skin: twisting the lower bone
    120° keeps the tets' volume within 3 % with no inverted tet, where the Armature modifier leaves the mesh
    where it is.  With Physics Skin from weights the mesh is still refused."""
    import bpy

    from testkit.build_extension import ADDON_MODULE

    api = importlib.import_module(ADDON_MODULE + ".api")
    session_mod = importlib.import_module(ADDON_MODULE + ".session")
    errors = importlib.import_module(ADDON_MODULE + ".character")
    volumes = importlib.import_module(ADDON_MODULE + ".core.geometry.tetmesh").signed_volumes
    obj = bare_limb(bpy, bpy_scene, 120.0)
    assert len(obj.vertex_groups) == 0
    api.configure(obj, physics_skin=True, secondary_motion=False)
    with pytest.raises(errors.SkinmodesError, match="no vertex groups"):
        errors.check_object(obj)  # from weights: there are none
    obj.skinmodes.physics_skin_from = "BONES"
    assert errors.check_object(obj) is not None
    bpy_scene.frame_set(2)
    session = session_mod.build_session(obj, bpy_scene)
    session.record(2, bpy.context.evaluated_depsgraph_get())
    rig = session.prepared.physics_rig(float(obj.skinmodes.pin_depth), bool(obj.skinmodes.pin_rigid), True)
    p = session.rig[2]
    x, lbs = rig.positions(p), rig.lbs(p)
    mesh = rig.mesh
    assert np.abs(lbs - mesh.X).max() < 1e-9  # no weights: the Armature modifier does not move it
    twisted = np.abs(x - mesh.X).max() / np.ptp(mesh.X, axis=0).max()
    v = volumes(x, mesh.T)
    change = float(v.sum() / mesh.volumes.sum() - 1.0)
    assert twisted > 0.05, twisted  # the skin follows the twisted bone
    assert abs(change) < 0.03 and int((v <= 0).sum()) == 0, (change, int((v <= 0).sum()))
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "limb.blend"))
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    assert np.isfinite(baked_positions(bpy, obj)).all()


@pytest.mark.parametrize("secondary_motion", [False, True], ids=["physics_alone", "with_jiggle"])
def test_preview_equals_bake_with_physics_skin_and_a_collider(addon, creature, tmp_path, secondary_motion):
    """Physics Skin (Pin Rigidly Bound off) with a box 10 cm into the belly from below, in the Colliders
    collection (issue 30 item 4): the box changes the physics skin's shape (Secondary Motion off) and the
    jiggle on top of it; the preview, visited in any order, shows what a bake plays back (1e-5 of the size)."""
    import bpy

    from tests.addon.session.test_colliders import collider, preview

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    s = obj.skinmodes
    s.physics_skin, s.pin_rigid, s.secondary_motion = True, False, secondary_motion
    order = [12, 3, 24, 1, 17, 6, 18, 5, 2]
    free = preview(bpy, obj, scene, order)
    floor = float(min((obj.matrix_world @ v.co).z for v in obj.data.vertices))
    collider(bpy, size=(2.0, 4.0, 0.4), frames=((1, -0.3), (24, 0.3)), z=floor - 0.1)
    s.colliders = "Colliders"
    shown = preview(bpy, obj, scene, order)
    size = size_of(shown[1])
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.isfinite(pos).all() and np.abs(evaluated(bpy, obj) - pos).max() < 1e-5 * size, f
    assert max(np.abs(shown[f] - free[f]).max() for f in order) > 1e-3 * size  # the box pushed the skin
