"""Issue 12, item 2: any modifier stack around the Armature modifier.

Before: a Point Cache bake with a Subdivision modifier after the Armature
(also Mirror before it, Decimate) failed with ``operands could not be
broadcast together``.  Now the simulated mesh is the mesh as the Armature
modifier receives it, the cache holds what the Armature modifier outputs plus
the secondary offsets, and plays back right after the Armature modifier, so
the modifiers after it act on the jiggled mesh.

Each stack is checked against a reference built without skinmodes: the
Armature modifier's output (everything after it muted) plus the session's
offsets, put on a copy of the mesh the Armature modifier deforms, through the
same later modifiers.  Tolerance 1e-5 m: positions pass through float32 (the
.pc2 file, Blender's meshes) on a creature about 2 m long; the same float32
inputs through the same modifiers give the same result to round-off.
Stacks that cannot work are refused in one line before any work: nothing
changes in the scene or on disk (hashed).
"""

import numpy as np
import pytest

from tests.addon.helpers import differences, disk_fingerprint, evaluated, full_fingerprint

TOL = 1e-5
FRAMES = (1, 12, 24)


def geometry_nodes_subdivide(bpy):
    """A Geometry Nodes group that subdivides the mesh once (changes the topology, as production GN do)."""
    ng = bpy.data.node_groups.get("Test Subdivide")
    if ng is not None:
        return ng
    ng = bpy.data.node_groups.new("Test Subdivide", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    gin, gout = ng.nodes.new("NodeGroupInput"), ng.nodes.new("NodeGroupOutput")
    sub = ng.nodes.new("GeometryNodeSubdivideMesh")
    sub.inputs["Level"].default_value = 1
    ng.links.new(gin.outputs[0], sub.inputs["Mesh"])
    ng.links.new(sub.outputs[0], gout.inputs[0])
    return ng


def add_subdivision(bpy, obj):
    mod = obj.modifiers.new("Subdivision", "SUBSURF")
    mod.levels = 1


def add_decimate(bpy, obj):
    mod = obj.modifiers.new("Decimate", "DECIMATE")
    mod.ratio = 0.5


def add_solidify(bpy, obj):
    mod = obj.modifiers.new("Solidify", "SOLIDIFY")
    mod.thickness = 0.02


def add_geometry_nodes(bpy, obj):
    mod = obj.modifiers.new("GeometryNodes", "NODES")
    mod.node_group = geometry_nodes_subdivide(bpy)


def add_mirror_before(bpy, obj):
    """A half-modelled character: Mirror cuts at x = 0 and mirrors, above the Armature modifier."""
    mod = obj.modifiers.new("Mirror", "MIRROR")
    mod.use_bisect_axis[0] = True
    mod.use_mirror_merge = True
    obj.modifiers.move(obj.modifiers.find("Mirror"), 0)


def add_decimate_before(bpy, obj):
    add_decimate(bpy, obj)
    obj.modifiers.move(obj.modifiers.find("Decimate"), 0)


# (id, modifiers to add, the ones after the Armature modifier (re-made on the reference))
STACKS = {
    "subdivision after": (add_subdivision, [add_subdivision]),
    "decimate after": (add_decimate, [add_decimate]),
    "solidify after": (add_solidify, [add_solidify]),
    "geometry nodes after": (add_geometry_nodes, [add_geometry_nodes]),
    "mirror before": (add_mirror_before, []),
    "decimate before": (add_decimate_before, []),
}


def armature_output(bpy, obj):
    """Object-space positions the Armature modifier outputs (with skinmodes' own modifier, if it is shown,
    right after it): it and everything above it act, the user's modifiers below it do not."""
    mods = list(obj.modifiers)
    below = [m for m in mods[[m.type for m in mods].index("ARMATURE") + 1 :] if not m.name.startswith("Skinmodes")]
    saved = [(m, m.show_viewport) for m in below]
    for m, _ in saved:
        m.show_viewport = False
    try:
        return evaluated(bpy, obj).astype(np.float32)
    finally:
        for m, shown in saved:
            m.show_viewport = shown


def through_later_modifiers(bpy, obj, positions, later):
    """``positions`` on a copy of the mesh the Armature modifier receives, through the ``later`` modifiers."""
    mods = list(obj.modifiers)
    from_armature = mods[[m.type for m in mods].index("ARMATURE") :]
    saved = [(m, m.show_viewport) for m in from_armature]
    for m, _ in saved:
        m.show_viewport = False
    try:
        mesh = bpy.data.meshes.new_from_object(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()))
    finally:
        for m, shown in saved:
            m.show_viewport = shown
    mesh.vertices.foreach_set("co", np.asarray(positions, dtype=np.float32).ravel())
    mesh.update()
    ref = bpy.data.objects.new("Reference", mesh)
    bpy.context.scene.collection.objects.link(ref)
    for add in later:
        add(bpy, ref)
    try:
        return evaluated(bpy, ref)
    finally:
        bpy.data.objects.remove(ref)
        bpy.data.meshes.remove(mesh)


@pytest.mark.parametrize("stack", list(STACKS))
def test_point_cache_bake_plays_back_rig_plus_offsets_through_the_later_modifiers(addon, shot, stack):
    import bpy

    obj, _, scene, _folder = shot
    add, later = STACKS[stack]
    add(bpy, obj)
    summary = addon.api.bake(obj, output="PC2")
    assert summary["frames_baked"] == 24
    names = [m.name for m in obj.modifiers]
    assert names[names.index("Armature") + 1] == "Skinmodes Cache"  # the later modifiers act on the jiggle
    session = addon.session.session_for(obj)
    moved = 0.0
    for f in FRAMES:
        scene.frame_set(f)
        cache = obj.modifiers["Skinmodes Cache"]
        cache.show_viewport = False
        rig = armature_output(bpy, obj)
        cache.show_viewport = True
        offsets = session.offsets_local(f)
        assert offsets.shape == rig.shape
        jiggled = rig + offsets  # float32, as the bake adds them
        assert np.abs(armature_output(bpy, obj) - jiggled).max() < TOL, f
        expected = through_later_modifiers(bpy, obj, jiggled, later)
        got = evaluated(bpy, obj)
        assert got.shape == expected.shape, f
        assert np.abs(got - expected).max() < TOL, f
        moved = max(moved, float(np.abs(offsets).max()))
    assert moved > 1e-3  # there is secondary motion to see


@pytest.mark.parametrize("stack", ["mirror before", "subdivision after"])
def test_live_preview_shows_what_the_bake_plays_back(addon, shot, stack):
    """The preview's modifier sits right after the Armature too; with a Mirror above it the offsets are
    held beside the mesh (one per mirrored vertex).  Preview and bake ask the same simulation: 1e-5 m."""
    import bpy

    obj, _, scene, _folder = shot
    STACKS[stack][0](bpy, obj)
    obj.skinmodes.live_preview = True
    names = [m.name for m in obj.modifiers]
    assert names[names.index("Armature") + 1] == "Skinmodes Preview"
    shown = {}
    for f in (12, 3, 24, 12):
        scene.frame_set(f)
        shown[f] = evaluated(bpy, obj)
    obj.skinmodes.live_preview = False
    assert obj.modifiers.get("Skinmodes Preview") is None
    assert not [o for o in bpy.data.objects if o.name.startswith("Skinmodes Offsets")]  # nothing left behind
    addon.api.bake(obj, output="PC2")
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - pos).max() < TOL, f


def test_shape_keys_with_a_subdivision_after_the_armature(addon, shot):
    """Shape keys act before every modifier; the Armature maps them back (1e-4 m: an inverse 3x3 solve and
    the armature's float32 arithmetic, as in tests/addon/bake/test_outputs.py)."""
    import bpy

    obj, _, scene, _folder = shot
    add_subdivision(bpy, obj)
    addon.api.bake(obj, output="SHAPE_KEYS")
    session = addon.session.session_for(obj)
    for f in FRAMES:
        scene.frame_set(f)
        keys = obj.data.shape_keys.key_blocks
        for kb in keys:
            kb.mute = kb.name.startswith("skinmodes.")
        rig = armature_output(bpy, obj)
        for kb in keys:
            kb.mute = False
        jiggled = rig + session.offsets_local(f)
        assert np.abs(armature_output(bpy, obj) - jiggled).max() < 1e-4, f
        assert np.abs(evaluated(bpy, obj) - through_later_modifiers(bpy, obj, jiggled, [add_subdivision])).max() < 1e-4


def refused(addon, bpy, obj, folder, output):
    """Bake ``obj`` expecting a one-line refusal before any work; returns the line."""
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output=output)
    line = str(err.value)
    assert line and "\n" not in line
    after = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    assert not differences(before, after), differences(before, after)[:5]
    assert not list(folder.rglob("*.npz"))  # no meshing, no modes: refused before any work
    return line


def test_a_modifier_above_the_armature_that_changes_the_mesh_over_time_is_refused(addon, shot):
    """Its advice works: moved below the Armature modifier, the same modifier bakes."""
    import bpy

    obj, _, scene, folder = shot
    add_decimate_before(bpy, obj)
    dec = obj.modifiers["Decimate"]
    for frame, ratio in ((1, 1.0), (24, 0.5)):
        dec.ratio = ratio
        dec.keyframe_insert("ratio", frame=frame)
    scene.frame_set(1)  # the animated ratio takes its frame-1 value before the scene is fingerprinted
    line = refused(addon, bpy, obj, folder, "PC2")
    assert "'Decimate'" in line and "move them below the Armature modifier" in line
    obj.modifiers.move(obj.modifiers.find("Decimate"), len(obj.modifiers) - 1)
    assert addon.api.bake(obj, output="PC2")["frames_baked"] == 24


def test_shape_keys_cannot_hold_a_mirrored_mesh_and_say_so(addon, shot):
    """Its advice works: the Point Cache bakes the same stack."""
    import bpy

    obj, _, _scene, folder = shot
    add_mirror_before(bpy, obj)
    line = refused(addon, bpy, obj, folder, "SHAPE_KEYS")
    assert "'Mirror'" in line and line.endswith("bake a Point Cache instead")
    assert addon.api.bake(obj, output="PC2")["frames_baked"] == 24


def test_the_session_notices_a_change_above_the_armature(addon, shot):
    """A modifier's setting above the Armature modifier shapes the simulated mesh: a change rebuilds it."""
    import bpy

    obj, _, scene, _folder = shot
    add_mirror_before(bpy, obj)
    addon.api.compute_modes(obj)
    session = addon.session.current_session(obj, scene)
    assert session is not None
    obj.modifiers["Mirror"].use_bisect_axis[0] = False
    assert addon.session.current_session(obj, scene) is None


def test_a_change_the_up_front_check_cannot_see_stops_the_bake_at_its_frame(addon, shot):
    """Decimated at frame 5 only: the start, middle and end frames agree, so the bake finds it there;
    a transaction, so the scene and the bake files are as before (the tet and model caches may stay)."""
    import bpy

    obj, _, scene, folder = shot
    add_decimate_before(bpy, obj)
    dec = obj.modifiers["Decimate"]
    for frame, ratio in ((4, 1.0), (5, 0.5), (6, 1.0)):
        dec.ratio = ratio
        dec.keyframe_insert("ratio", frame=frame)
    scene.frame_set(1)  # keys at 4, 5, 6: the ratio is 1 at frames 1, 12 and 24, 0.5 at frame 5

    def bake_files():
        return {k: v for k, v in disk_fingerprint(folder).items() if not k.endswith(".npz")}

    before = full_fingerprint(bpy, obj), bake_files()
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2")
    line = str(err.value)
    assert line.startswith("frame 5: ") and "'Decimate'" in line and "\n" not in line
    assert not differences(before, (full_fingerprint(bpy, obj), bake_files()))
