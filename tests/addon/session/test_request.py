"""Reading an object and its settings into a request: nothing is created on disk, an unwritable cache
is said once, and bad training poses are refused in one line before any work."""

import pytest


def test_reading_creates_no_cache_folder(addon, creature, tmp_path):
    session_mod = addon.session
    obj, _, scene = creature
    request = session_mod.read_request(obj, scene)
    assert request.cache == tmp_path / "cache" and request.cache_note == ""
    assert not (tmp_path / "cache").exists()
    session_mod.install_session(obj, request, session_mod.prepare(request))
    assert any((tmp_path / "cache").iterdir())  # made when the first cache file was written


def test_an_unwritable_cache_is_said_once_and_modes_still_compute(addon, creature, tmp_path):
    session_mod = addon.session
    obj, _, scene = creature
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the folder should be")
    obj.skinmodes.cache_dir = str(blocker / "cache") + "/"
    lines = []
    session = session_mod.build_session(obj, scene, log=lines.append)
    assert session.prepared.stats["modes"] == 8
    assert [line for line in lines if "not writable" in line] == [
        f"cache folder {blocker / 'cache'} is not writable; modes are not cached"
    ]
    assert blocker.read_text() == "a file where the folder should be"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("twice", "frame 12 is a training pose twice; remove one of them in the Pose-Space panel"),
        ("rest", "frame 1 is the rest frame (the start of the frame range; pre-roll comes before it), always pose 0"),
        ("no group", "the contact group 'gone' of the pose at frame 12 is not a vertex group"),
    ],
)
def test_bad_training_poses_are_refused_in_one_line_and_change_nothing(addon, creature, setup, message):
    import bpy

    from tests.addon.helpers import full_fingerprint

    session_mod = addon.session
    obj, _, scene = creature
    s = obj.skinmodes
    frames = {"twice": [12, 12], "rest": [1], "no group": [12]}[setup]
    for f in frames:
        pose = s.poses.add()
        pose.frame = f
        if setup == "no group":
            pose.contact, pose.contact_group = "GROUP", "gone"
    before = full_fingerprint(bpy, obj)
    with pytest.raises(addon.core.errors.SkinmodesError) as refused:
        session_mod.build_session(obj, scene)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    assert full_fingerprint(bpy, obj) == before


def test_local_blend_reaches_the_request_and_makes_the_session_stale(addon, creature):
    """Local Blend (issue 29) is read as the pose-space reach; toggling it asks for new pose-space modes."""
    session_mod = addon.session
    obj, _, scene = creature
    assert session_mod.read_request(obj, scene).pose_reach == 0.5  # on by default: the local support
    before = session_mod.settings_snapshot(obj.skinmodes)
    obj.skinmodes.pose_local_blend = False
    assert session_mod.read_request(obj, scene).pose_reach == 0.0
    assert session_mod.settings_snapshot(obj.skinmodes) != before


def test_a_pose_contact_mode_reaches_the_request_and_makes_the_session_stale(addon, creature):
    """A pose's Contact Mode (issue 29): Stick by default; One-Sided is read per pose and asks for new modes."""
    session_mod = addon.session
    obj, _, scene = creature
    pose = obj.skinmodes.poses.add()
    pose.frame = 12
    assert pose.contact_mode == "STICK" and not session_mod.read_request(obj, scene).poses[0].one_sided
    before = session_mod.settings_snapshot(obj.skinmodes)
    pose.contact_mode = "ONE_SIDED"
    assert session_mod.read_request(obj, scene).poses[0].one_sided
    assert session_mod.settings_snapshot(obj.skinmodes) != before


def test_locomotion_without_a_stored_gait_is_refused_in_one_line(addon, creature, tmp_path):
    """Issue 39, item 2: Locomotion on, no gait stored: the bake used to play plain jiggle and say nothing.
    Refused before any work, for a rigged character and for a mesh without an armature alike, with what to do
    on the surface the user is on (Find Gait, `skinmodes gait`, or Locomotion off); nothing is written."""
    import bpy

    from tests.addon.locomotion.conftest import blob_object

    obj, _, scene = creature
    obj.skinmodes.locomotion = True
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.session.read_request(obj, scene)
    line = str(err.value)
    assert "\n" not in line and "rigged" in line and "turn Locomotion off" in line
    slug = blob_object(bpy, tmp_path, "Gaitless")
    slug.skinmodes.locomotion = True
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.session.read_request(slug, scene)  # what the bake, the preview and Compute Modes read first
    line = str(err.value)
    assert "no stored gait" in line and "Find Gait" in line and "skinmodes gait" in line
    assert "skinmodes_gait" not in slug and not (tmp_path / "cache").exists()
    # Find Gait reads the same object to search, Locomotion ticked or not: it is not refused.
    assert addon.session.read_request(slug, scene, searching=True).object_name == "Gaitless"
