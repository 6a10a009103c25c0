"""The worker-thread job the modal Compute Modes and the first Live Preview run (issue 11, item 7).

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
    # The panel shows the model's own count: the Modes setting is the budget of the flesh model too (its m
    # slowest Ritz vectors of the modes and the parts' responses, issue 37), so the creature's 8.
    assert figures[1] == background.prepared.model.m == obj.skinmodes.modes and figures[4] == background.prepared.key

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
    assert not addon.registry.JOBS


def test_loading_a_file_cancels_every_job(addon, creature):
    import bpy

    session_mod = addon.session
    obj, _, scene = creature
    job = session_mod.start_job(obj, scene)
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    assert job.cancelled and not addon.registry.JOBS
    job.wait()
