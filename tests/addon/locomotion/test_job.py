"""Find Gait's worker (skinmodes_addon/locomotion/job.py): a tiny seeded search on a real Blender mesh.

Budgets are tiny (one restart of two generations of four 1 s rollouts, no judge): these tests check the
plumbing (the request read here, the search on the worker, the gait stored or nothing changed), not the
gait's quality, which tests/core/locomotion/test_gait.py checks on the creatures.
"""

import numpy as np
import pytest

from tests.addon.helpers import settings_fingerprint


def tiny(addon):
    """One restart of two generations of four 1 s rollouts, no judge (the add-on's own GaitSettings class)."""
    settings = addon.core.locomotion.stored.GaitSettings
    return settings(rollout_s=1.0, judge_s=0.0, generations=2, population=4, restarts=1, seed=5)


def test_a_search_stores_its_gait_and_the_same_seed_finds_it_again(addon, slug):
    """Bit for bit (exact equality): the same request, settings and seed on one machine."""
    import bpy

    job = addon.locomotion.job
    first = job.start_gait_job(slug, bpy.context.scene, tiny(addon))
    assert first.wait(300)
    gait = job.finish_gait_job(first)
    assert slug.skinmodes.locomotion and addon.locomotion.store.read_gait(slug).to_json() == gait.to_json()
    assert gait.evaluations == 8 and first.done_rollouts == 8 and first.planned == 8
    assert np.isfinite(first.figures["body_lengths_per_10s"]) and job.GAIT_JOBS == {}
    again = job.start_gait_job(slug, bpy.context.scene, tiny(addon))
    again.wait(300)
    np.testing.assert_array_equal(job.finish_gait_job(again).x, gait.x)


def state(obj):
    """The object's custom properties (the stored gait among them), every skinmodes setting and its transform.

    The skinmodes group is compared through its values: Blender 4.2 wraps it anew on every access, so the
    wrappers of one unchanged group are not equal there."""
    custom = {k: obj[k] for k in obj.keys() if k != "skinmodes"}
    return custom, settings_fingerprint(obj), tuple(map(tuple, obj.matrix_world))


def test_a_cancelled_search_leaves_the_object_as_it_was(addon, slug):
    import bpy

    job = addon.locomotion.job
    before = state(slug)
    running = job.start_gait_job(slug, bpy.context.scene, tiny(addon))
    with pytest.raises(addon.core.errors.SkinmodesError, match="already being searched"):
        job.start_gait_job(slug, bpy.context.scene, tiny(addon))
    running.cancel()
    assert running.wait(300)
    with pytest.raises(job.GaitCancelledByUser, match="nothing was changed"):
        job.finish_gait_job(running)
    assert state(slug) == before
    assert job.GAIT_JOBS == {}
