"""The per-process registries live in one module, and its reset() clears every one of them."""

from pathlib import Path


def fill(registry):
    """Put one entry in every registry; returns a job stand-in that records its cancellation."""

    class Job:
        cancelled = False

        def cancel(self):
            self.cancelled = True

    job = Job()
    registry.SESSIONS[1] = object()
    registry.JOBS[1] = job
    registry.BUSY[0] = 2
    registry.UNSAVED_FOLDER.append(Path("/nowhere"))
    registry.ERRORS[1] = "an error"
    registry.SHOWN[1] = (3, "key")
    registry.STARTING.add(1)
    registry.RESAMPLING.add(1)
    registry.SHADING_BEFORE[1] = ("SOLID", "MATERIAL")
    registry.PENDING["/a.blend"] = ["/a.pc2"]
    registry.SAVED_PLAYS["/a.blend"] = {"/a.pc2"}
    registry.HOLD_PENDING.append(True)
    registry.STOP_REQUESTS.append(2)
    registry.PROGRESS_LISTENERS.append(print)
    registry.PREPARED_ONLY.append(True)
    registry.KEEP_REPLACED.append(True)
    registry.REPLACED.append(("/a.pc2.1.replaced", "/a.pc2"))
    return job


def registries(registry):
    return {
        name: value for name, value in vars(registry).items() if name.isupper() and isinstance(value, (dict, list, set))
    }


def test_reset_clears_every_registry_and_cancels_the_jobs(addon):
    registry = addon.registry
    job = fill(registry)
    assert all(registries(registry).values()) and len(registries(registry)) == 17
    registry.reset()
    assert job.cancelled
    assert {name: value for name, value in registries(registry).items() if value != [0] and value} == {}
    assert registry.BUSY == [0]


def test_a_new_file_forgets_the_objects_but_not_what_is_per_blend(addon):
    """Loading a file drops sessions, jobs, preview errors and view addresses; pending deletions stay
    with the deletion policy (its own load handler decides)."""
    registry = addon.registry
    try:
        job = fill(registry)
        registry.forget_objects()
        assert job.cancelled
        assert not (registry.SESSIONS or registry.JOBS or registry.ERRORS or registry.SHOWN or registry.SHADING_BEFORE)
        assert registry.SAVED_PLAYS and registry.STOP_REQUESTS and registry.BUSY == [2]
    finally:
        registry.reset()


def test_the_modules_use_the_registry_itself(addon):
    """The registries the rooms read are the registry's own objects, so reset() reaches them."""
    registry = addon.registry
    assert addon.preview.ERRORS is registry.ERRORS and addon.operators.SHADING_BEFORE is registry.SHADING_BEFORE
    assert addon.session.jobs.JOBS is registry.JOBS and addon.session.session.SESSIONS is registry.SESSIONS
    assert addon.bake.deletion.PENDING is registry.PENDING and addon.cli.STOP_REQUESTS is registry.STOP_REQUESTS
