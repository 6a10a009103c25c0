"""Sessions built in three steps (read on the main thread, prepare anywhere, install on the main thread)
and the background job the modal Compute Modes and the first Live Preview run (issue 11, item 7).

The background path must give exactly the synchronous one's result: same inputs, same deterministic
pipeline, so offsets are compared bit for bit (np.array_equal), not to a tolerance.
"""

import threading

import numpy as np
import pytest

from tests.addon.helpers import flatten


def settings_figures(obj):
    s = obj.skinmodes
    return (s.stat_tets, s.stat_modes, s.stat_clusters, s.stat_mesher, s.modes_key)


def test_background_job_gives_the_synchronous_session(addon, creature):
    session_mod = addon.session
    obj, _, scene = creature
    threads = []
    job = session_mod.start_job(obj, scene)
    assert session_mod.running_job(obj) is job
    job.wait()
    assert job.done and job.stage == "done" and job.fraction == 1.0
    background = session_mod.finish_job(job)
    assert session_mod.running_job(obj) is None and session_mod.session_for(obj) is background
    figures = settings_figures(obj)
    assert figures[1] == 8 and figures[4] == background.prepared.key

    # The same request prepared in this thread, through the one-call path.
    request = session_mod.read_request(obj, scene)
    prepared = session_mod.prepare(request, progress=lambda stage, f: threads.append(threading.current_thread()))
    assert set(threads) == {threading.main_thread()}
    assert prepared.key == background.prepared.key
    sync = session_mod.build_session(obj, scene)
    assert settings_figures(obj) == figures
    for s in (background, sync):
        session_mod.sample_range(s, scene, s.missing_frames(s.end))
    for f in (2, 12, 24):
        assert np.array_equal(background.offsets_local(f), sync.offsets_local(f))
    assert np.abs(sync.offsets_local(12)).max() > 0  # there is motion to compare


def test_worker_runs_off_the_main_thread_and_reports_its_stages(addon, creature):
    session_mod = addon.session
    obj, _, scene = creature
    seen = []
    request = session_mod.read_request(obj, scene)

    def progress(stage, fraction):
        seen.append((stage, fraction, threading.current_thread() is threading.main_thread()))

    worker = threading.Thread(target=session_mod.prepare, args=(request, progress), daemon=True)
    worker.start()
    worker.join()
    stages = [s for s, _, _ in seen]
    assert stages == ["meshing", "volume weights", "modes and clusters", "embedding", "slowest frequency", "done"]
    fractions = [f for _, f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert not any(main for _, _, main in seen)


def test_cancelling_stops_at_the_next_stage_and_changes_nothing(addon, creature, tmp_path):
    from bl_ext.user_default.skinmodes.core.pipeline import Cancelled

    session_mod = addon.session
    obj, _, scene = creature
    before = settings_figures(obj)
    request = session_mod.read_request(obj, scene)
    stages = []
    with pytest.raises(Cancelled, match="cancelled"):
        session_mod.prepare(request, progress=lambda s, f: stages.append(s), cancelled=lambda: len(stages) >= 2)
    assert stages == ["meshing", "volume weights"]  # the stage under way finished; the next never started

    job = session_mod.start_job(obj, scene)
    job.cancel()
    assert session_mod.running_job(obj) is None  # a cancelled job no longer blocks a new one
    job.wait()
    with pytest.raises(Cancelled):
        session_mod.finish_job(job)  # whether the worker saw it in time or not, a cancelled job installs nothing
    assert session_mod.session_for(obj) is None
    assert settings_figures(obj) == before


def test_a_failing_worker_raises_one_line_and_changes_nothing(addon, creature, tmp_path):
    import bpy
    from bl_ext.user_default.skinmodes.core.errors import SkinmodesError

    session_mod = addon.session
    obj, _, scene = creature
    cache = tmp_path / "cache"
    assert not cache.exists()
    flatten(obj)  # flat: reading works, meshing refuses
    before = settings_figures(obj)
    job = session_mod.start_job(obj, scene)
    job.wait()
    with pytest.raises(SkinmodesError, match="flat") as err:
        session_mod.finish_job(job)
    assert "\n" not in str(err.value)
    assert session_mod.session_for(obj) is None and session_mod.running_job(obj) is None
    assert settings_figures(obj) == before
    assert not cache.exists()  # nothing was written, so no cache folder was made
    assert bpy.context.scene.frame_current == 1


def test_one_job_per_object_and_a_deleted_object_is_reported(addon, creature):
    import bpy
    from bl_ext.user_default.skinmodes.core.errors import SkinmodesError

    session_mod = addon.session
    obj, _, scene = creature
    job = session_mod.start_job(obj, scene)
    with pytest.raises(SkinmodesError, match="already being computed"):
        session_mod.start_job(obj, scene)
    name = obj.name
    bpy.data.objects.remove(obj)
    job.wait()
    with pytest.raises(SkinmodesError, match=f"'{name}' was deleted"):
        session_mod.finish_job(job)
    assert not session_mod._JOBS


def test_loading_a_file_cancels_every_job(addon, creature):
    import bpy

    session_mod = addon.session
    obj, _, scene = creature
    job = session_mod.start_job(obj, scene)
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    assert job.cancelled and not session_mod._JOBS
    job.wait()


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


def test_moving_a_bone_in_edit_mode_makes_the_session_stale(addon, creature):
    """The physics skin pins the flesh around each bone's rest segment: a bone moved in Edit Mode
    must rebuild the session (the modes themselves come back from the cache)."""
    import bpy

    session_mod = addon.session
    obj, arm, scene = creature
    session = session_mod.build_session(obj, scene)
    assert session_mod.current_session(obj, scene) is session
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones[-1].tail.z += 0.1
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = obj
    assert session_mod.current_session(obj, scene) is None
