"""Issue 24 (low): a Compute Modes job never shows figures for settings it was not computed with.

Before: changing Modes while the job ran, the finished job wrote the old mode count to the panel
(and installed a session for the old settings).  Now finishing it refuses in one line and changes
nothing; the next Compute Modes uses the new settings.  Counts compared exactly.
"""

import pytest


def test_a_job_finished_after_the_settings_changed_installs_nothing(addon, creature):
    import bpy

    obj, _arm, scene = creature
    session = addon.session
    s = obj.skinmodes
    before = s.stat_modes, s.modes_key
    job = session.start_job(obj, scene)
    s.modes = s.modes + 4  # while it runs (or after it ended, before it was collected)
    assert job.wait(600)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        session.finish_job(job)
    line = str(err.value)
    assert "changed while its modes were computed" in line and "\n" not in line, line
    assert (s.stat_modes, s.modes_key) == before and session.session_for(obj) is None
    assert session.running_job(obj) is None  # forgotten: a new one may start
    addon.api.compute_modes(obj, bpy.context.scene)
    assert s.stat_modes == s.modes


def test_loading_a_file_cancels_find_gait(addon, tmp_path):
    """Issue 39 (low): a Find Gait left running while another file loaded ended minutes later with "'Slug' was
    deleted while its gait was searched for".  Loading a file now cancels it at once, as it cancels Compute
    Modes; the search's worker stops at its next rollout.  Exact: the job's stop flag, the job table."""
    import bpy

    from tests.addon.locomotion.conftest import blob_object

    obj = blob_object(bpy, tmp_path)
    obj.skinmodes.gait_generations = 50  # minutes: it is still searching when the file loads
    locomotion = addon.locomotion.job
    job = locomotion.start_gait_job(obj, bpy.context.scene)
    assert locomotion.GAIT_JOBS and not job.cancelled
    bpy.ops.wm.read_homefile(use_empty=True)
    assert job.cancelled and not locomotion.GAIT_JOBS
    assert job.wait(120), "the cancelled search did not stop"
    with pytest.raises(addon.core.errors.SkinmodesError, match="Find Gait was cancelled; nothing was changed"):
        locomotion.finish_gait_job(job)
