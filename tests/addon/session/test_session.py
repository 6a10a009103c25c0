"""The session: built from the training poses too (issue 16), and stale when the rig changes at one."""

import numpy as np

# --- training poses (issue 16) ------------------------------------------------------------------


def tip_group(obj, name="tip"):
    """A vertex group on the creature's last tenth along its length (the tail's end)."""
    co = np.array([v.co[:] for v in obj.data.vertices])
    axis = int(np.argmax(np.ptp(co, axis=0)))
    cut = np.quantile(co[:, axis], 0.9)
    vg = obj.vertex_groups.new(name=name)
    vg.add(np.flatnonzero(co[:, axis] >= cut).tolist(), 1.0, "REPLACE")
    return vg


def test_training_poses_give_the_session_pose_space_modes(addon, creature):
    """A pose at frame 12 with a painted contact: the session's modes hold those vertices still there,
    the poses' signature is part of the session (changing the contact makes it stale), and the
    session key (what a bake is checked against) changes with the poses."""
    session_mod = addon.session
    obj, _, scene = creature
    plain = session_mod.build_session(obj, scene)
    tip_group(obj)
    pose = obj.skinmodes.poses.add()
    pose.frame, pose.contact, pose.contact_group = 12, "GROUP", "tip"
    assert session_mod.current_session(obj, scene) is None  # the poses changed: stale
    session = session_mod.build_session(obj, scene)
    ps = session.prepared.posespace
    assert ps is not None and ps.frames == (-1, 12) and ps.contacts[0] == 0 and ps.contacts[1] > 0
    assert session.key != plain.key
    assert session_mod.current_session(obj, scene) is session
    session_mod.sample_range(session, scene, session.missing_frames(session.end))
    assert np.abs(session.offsets_local(14)).max() > 0
    pose.contact = "AUTO"
    assert session_mod.current_session(obj, scene) is None


def test_a_rig_change_at_a_pose_frame_makes_the_session_stale(addon, creature):
    session_mod = addon.session
    obj, arm, scene = creature
    pose = obj.skinmodes.poses.add()
    pose.frame = 12
    session = session_mod.build_session(obj, scene)
    session_mod.sample_range(session, scene, [12])
    assert session_mod.current_session(obj, scene) is session
    bone = arm.pose.bones[-1]
    bone.rotation_mode = "XYZ"
    bone.keyframe_insert("rotation_euler", frame=12)  # keyed where it was, then moved
    bone.rotation_euler[0] += 0.5
    bone.keyframe_insert("rotation_euler", frame=12)
    session_mod.sample_range(session, scene, [12])
    assert session.poses_stale and session_mod.current_session(obj, scene) is None
