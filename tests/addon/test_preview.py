"""Live Preview's first run: a job under way is used, not repeated; the rig is sampled in slices;
a preview whose modes cannot be computed turns itself off and says why (issue 11, item 7).

Offsets are compared exactly: the preview writes the session's float32 offsets into a float32
attribute, so the attribute must hold the very same numbers.
"""

import numpy as np


def shown_offsets(obj):
    attr = obj.data.attributes["skinmodes_offset"]
    out = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
    attr.data.foreach_get("vector", out)
    return out.reshape(-1, 3)


def test_turning_the_preview_on_uses_the_job_already_under_way(addon, creature):
    session_mod = addon.session
    obj, _, scene = creature
    scene.frame_set(12)
    job = session_mod.start_job(obj, scene)
    obj.skinmodes.live_preview = True  # headless: waits for the job instead of computing again
    session = session_mod.session_for(obj)
    assert session is not None and session.prepared is job.result()
    assert session_mod.running_job(obj) is None
    offsets = session.offsets_local(12)
    assert np.abs(offsets).max() > 0
    assert np.array_equal(shown_offsets(obj), offsets.astype(np.float32))


def test_the_rig_is_resampled_in_slices_and_the_frame_on_screen_is_shown(addon, creature):
    preview = addon.preview
    obj, _, scene = creature
    scene.frame_set(12)
    obj.skinmodes.live_preview = True
    session = addon.session.session_for(obj)
    expected = session.offsets_local(12).astype(np.float32)
    session.invalidate()  # what an edit to the action does (on_depsgraph_update)
    preview.write_offsets(obj, np.zeros_like(expected))
    ticks = 0
    while preview._resample(obj.session_uid) is not None:
        ticks += 1
        assert ticks < 1000  # each tick samples at least one frame: 24 frames end well before this
    assert not session.missing_frames(session.end)
    assert scene.frame_current == 12  # sampling restores the frame
    assert np.array_equal(shown_offsets(obj), expected)
    assert obj.session_uid not in addon.registry.RESAMPLING


def test_a_preview_that_cannot_get_its_modes_turns_off_and_says_why(addon, creature):
    preview = addon.preview
    obj, _, _ = creature
    obj.skinmodes.live_preview = True
    uid = obj.session_uid
    preview.give_up(uid, "the mesh is flat")  # it has a valid session: left alone
    assert obj.skinmodes.live_preview and uid not in preview.ERRORS
    addon.session.drop_session(obj)
    preview.give_up(uid, "the mesh is flat")
    assert not obj.skinmodes.live_preview
    assert preview.ERRORS[uid] == "Live Preview turned off: the mesh is flat"
    assert obj.modifiers.get("Skinmodes Preview") is None
    assert obj.data.attributes.get("skinmodes_offset") is None


def test_turning_the_preview_off_cancels_only_a_job_it_started(addon, creature):
    session_mod = addon.session
    obj, _, scene = creature
    job = session_mod.start_job(obj, scene)  # as if Compute Modes was pressed
    obj.skinmodes.live_preview = True
    obj.skinmodes.live_preview = False
    assert not job.cancelled
    session_mod.drop_session(obj)
    job = session_mod.start_job(obj, scene)
    job.for_preview = True  # as the preview's own request sets it
    obj.skinmodes["live_preview"] = True  # on, without running the toggle (the job is the preview's)
    obj.skinmodes.live_preview = False
    assert job.cancelled and session_mod.running_job(obj) is None
    job.wait()


def test_the_preview_hears_its_toggle_through_the_settings_listeners_once(addon):
    """props imports nothing of the add-on: the preview adds its own update on register, once."""
    assert addon.props.LIVE_PREVIEW_TOGGLED.count(addon.preview.on_toggle) == 1
    addon.preview.register()  # registering again adds nothing
    assert addon.props.LIVE_PREVIEW_TOGGLED.count(addon.preview.on_toggle) == 1
    addon.preview.unregister()
    assert addon.preview.on_toggle not in addon.props.LIVE_PREVIEW_TOGGLED
    addon.preview.register()
