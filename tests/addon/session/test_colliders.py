"""The Colliders collection and the ground, read in real Blender (skinmodes_addon/session/colliders.py; issue 29).

Tolerances: preview and bake agree to float32 round-off on metre-sized
coordinates (1e-5 m), as in tests/addon/bake/test_job.py.
"""

import numpy as np
import pytest

from tests.addon.helpers import evaluated


def collider(bpy, name="Pusher", collision=True, frames=((1, -3.0), (24, 3.0)), size=(0.4, 0.4, 0.4), z=0.3):
    """A box (size, m) in collection "Colliders" at height z, keyed to slide along x (frames: (frame, x))."""
    coll = bpy.data.collections.get("Colliders") or bpy.data.collections.new("Colliders")
    if coll.name not in bpy.context.scene.collection.children:
        bpy.context.scene.collection.children.link(coll)
    mesh = bpy.data.meshes.new(name)
    a, b, c = (0.5 * e for e in size)
    verts = [(x, y, w) for x in (-a, a) for y in (-b, b) for w in (-c, c)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    coll.objects.link(obj)
    if collision:
        obj.modifiers.new("Collision", "COLLISION")
    for f, x in frames:
        obj.location = (x, 0.0, z)
        obj.keyframe_insert("location", frame=f)
    return obj


def test_colliders_are_read_per_frame_in_metres(addon, creature):
    import bpy

    obj, _, scene = creature
    collider(bpy)
    obj.skinmodes.colliders = "Colliders"
    request = addon.session.read_request(obj, scene)
    (track,) = request.solver.collider_tracks
    assert track.name == "Pusher" and track.F.shape == (12, 3) and len(track.frames) == 24
    unit = scene.unit_settings.scale_length
    assert np.allclose(track.V[0].mean(axis=0), unit * np.array([-3.0, 0.0, 0.3]), atol=1e-6)
    assert np.allclose(track.V[-1].mean(axis=0), unit * np.array([3.0, 0.0, 0.3]), atol=1e-6)
    assert scene.frame_current == 1  # the frame is restored


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "the Colliders collection 'Nowhere' does not exist"),
        ("no collision", "no object of the Colliders collection 'Colliders' has Collision physics"),
    ],
)
def test_a_bad_colliders_collection_is_refused_in_one_line(addon, creature, setup, message):
    import bpy

    obj, _, scene = creature
    collider(bpy, collision=False)
    obj.skinmodes.colliders = "Nowhere" if setup == "missing" else "Colliders"
    with pytest.raises(addon.core.errors.SkinmodesError, match=message):
        addon.session.read_request(obj, scene)


def preview(bpy, obj, scene, frames):
    """The live preview's positions at ``frames``, visited in that order."""
    obj.skinmodes.live_preview = True
    shown = {}
    for f in frames:
        scene.frame_set(f)
        shown[f] = evaluated(bpy, obj)
    obj.skinmodes.live_preview = False
    return shown


@pytest.mark.parametrize("what", ["ground", "collider", "skin on skin"])
def test_preview_equals_bake_with_contact_on(addon, creature, tmp_path, what):
    """The ground, or a box sliding under the creature with its top at the belly's underside: where the
    hop lands, the flesh would sink below it; or skin on skin (the tail's swing against the body).  The
    preview's frames, visited in any order, are the bake's, and the ground or collider changed the motion."""
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    order = [12, 3, 24, 1, 17, 16, 18, 5, 24, 2, 6, 9, 20]
    free = preview(bpy, obj, scene, order)
    floor = float(min((obj.matrix_world @ v.co).z for v in obj.data.vertices))
    s = obj.skinmodes
    if what == "collider":
        box = collider(bpy, size=(2.0, 4.0, 0.4), frames=((1, -0.3), (24, 0.3)), z=floor - 0.2)
        assert box.modifiers[0].type == "COLLISION"
        s.colliders = "Colliders"
    elif what == "ground":
        s.ground, s.ground_height = True, floor
    else:
        s.self_contact = True
    shown = preview(bpy, obj, scene, order)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.abs(evaluated(bpy, obj) - pos).max() < 1e-5, f
    if what != "skin on skin":  # whether the tail meets the body in this hop is the creature's business
        assert max(np.abs(shown[f] - free[f]).max() for f in order) > 1e-3


@pytest.mark.parametrize("mode", ["STICK", "ONE_SIDED"])
def test_preview_equals_bake_with_poses_and_the_ground(addon, creature, tmp_path, mode):
    """Training poses with contact on (issue 29): a pose at frame 12, Stick or One-Sided (Skin on Skin then on
    for it), and the ground under the belly.  The preview's frames, in any order, are the bake's."""
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    s = obj.skinmodes
    pose = s.poses.add()
    pose.frame, pose.contact_mode = 12, mode
    s.ground, s.ground_height = True, float(min((obj.matrix_world @ v.co).z for v in obj.data.vertices))
    order = [12, 3, 24, 1, 17, 16, 18, 5, 24, 2, 6, 9, 20]
    shown = preview(bpy, obj, scene, order)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    for f, pos in shown.items():
        scene.frame_set(f)
        assert np.isfinite(pos).all() and np.abs(evaluated(bpy, obj) - pos).max() < 1e-5, f


def test_the_colliders_signature_follows_their_keys_and_meshes(addon, creature):
    import bpy

    obj, _, _ = creature
    sign = addon.session.colliders.colliders_signature
    assert sign(obj, "") == () and sign(obj, "Nowhere") == ("refused", "Nowhere")
    box = collider(bpy)
    before = sign(obj, "Colliders")
    assert sign(obj, "Colliders") == before  # stable: read twice, the same
    box.location = (3.0, 0.0, 0.1)
    box.keyframe_insert("location", frame=24)  # the last key moved down
    moved = sign(obj, "Colliders")
    assert moved != before
    box.data.vertices[0].co.z -= 0.1
    assert sign(obj, "Colliders") != moved


def test_moving_a_colliders_key_changes_the_preview(addon, creature, tmp_path):
    """A box sliding under the belly; its last key moved down out of reach while Live Preview is on: the
    preview's frames are then those of a preview started afresh with the moved box, not the old ones."""
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    floor = float(min((obj.matrix_world @ v.co).z for v in obj.data.vertices))
    box = collider(bpy, size=(2.0, 4.0, 0.4), frames=((1, -0.3), (24, 0.3)), z=floor - 0.2)
    obj.skinmodes.colliders = "Colliders"
    order = [1, 6, 12, 18, 24]
    pressed = preview(bpy, obj, scene, order)
    obj.skinmodes.live_preview = True
    scene.frame_set(1)
    box.location = (0.3, 0.0, floor - 5.0)
    box.keyframe_insert("location", frame=24)  # the box now sinks away while it slides
    shown = {}
    for f in order:
        scene.frame_set(f)
        shown[f] = evaluated(bpy, obj)
    obj.skinmodes.live_preview = False
    addon.session.drop_session(obj)
    fresh = preview(bpy, obj, scene, order)
    for f in order:
        assert np.abs(shown[f] - fresh[f]).max() < 1e-5, f
    assert max(np.abs(shown[f] - pressed[f]).max() for f in order) > 1e-3
