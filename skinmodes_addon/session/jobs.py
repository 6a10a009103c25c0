"""Computing an object's modes on a worker thread (:class:`ModesJob`), one job per object at a time."""

from __future__ import annotations

from collections.abc import Callable

import bpy

from ..core.errors import SkinmodesError
from ..core.pipeline import Cancelled, PreparedCharacter
from ..props import settings
from ..registry import JOBS
from .prepare import prepare
from .request import SessionRequest, read_request
from .session import Session, install_session, object_by_uid
from .staleness import settings_snapshot
from .worker import Worker


class ModesJob(Worker):
    """:func:`prepare` on a daemon worker thread, polled from Blender's main thread.

    numpy and scipy release the GIL in their heavy calls, so Blender stays
    responsive.  The worker never touches bpy.  It cannot be killed:
    :meth:`cancel` makes it stop at the next stage (see ``prepare_character``)
    and its result is thrown away.  ``stage`` and ``fraction`` are written by
    the worker and read by the main thread (single attribute stores: atomic
    under the GIL).
    """

    def __init__(self, request: SessionRequest) -> None:
        self.request = request
        self.for_preview = False  # started by Live Preview, which cancels it when turned off
        self.stage = "starting"
        self.fraction = 0.0
        self._prepared: PreparedCharacter | None = None
        self._start(f"skinmodes modes: {request.object_name}")

    def _progress(self, stage: str, fraction: float) -> None:
        self.stage, self.fraction = stage, fraction

    def _work(self) -> None:
        self._prepared = prepare(self.request, self._progress, self._stop.is_set)

    def result(self) -> PreparedCharacter:
        """The prepared character; re-raises the worker's exception (Cancelled after :meth:`cancel`)."""
        if not self.done:
            raise RuntimeError("the modes are still being computed")
        if self._error is not None:
            raise self._error
        if self._stop.is_set():
            raise Cancelled("computing modes was cancelled; nothing was changed")
        assert self._prepared is not None
        return self._prepared


def start_job(obj: bpy.types.Object, scene: bpy.types.Scene, frames: tuple[int, int] | None = None) -> ModesJob:
    """Read ``obj`` here (main thread) and prepare it on a worker thread; one job per object at a time."""
    if running_job(obj) is not None:
        raise SkinmodesError(f"the modes of '{obj.name}' are already being computed; wait, or press Esc to stop")
    job = ModesJob(read_request(obj, scene, frames))
    JOBS[obj.session_uid] = job
    return job


def running_job(obj: bpy.types.Object) -> ModesJob | None:
    """The object's job, unless there is none or it was cancelled."""
    job = JOBS.get(obj.session_uid)
    return None if job is None or job.cancelled else job


def forget_job(job: ModesJob) -> None:
    """Take ``job`` out of the registry (it was finished, failed or cancelled): a new one may start."""
    if JOBS.get(job.request.object_uid) is job:
        del JOBS[job.request.object_uid]


def finish_job(job: ModesJob, log: Callable[[str], None] | None = None) -> Session:
    """Install a finished job's session (main thread); raises the worker's error, or SkinmodesError
    if the object is gone.  The job is forgotten either way."""
    try:
        prepared = job.result()
        obj = object_by_uid(job.request.object_uid)
        if obj is None:
            raise SkinmodesError(
                f"'{job.request.object_name}' was deleted while its modes were computed; nothing was changed"
            )
        if settings_snapshot(settings(obj)) != job.request.snapshot:
            # The result is for the old settings: showing its figures would claim them for the new ones.
            raise SkinmodesError(
                f"the settings of '{obj.name}' changed while its modes were computed; nothing was changed: "
                "Compute Modes again"
            )
        return install_session(obj, job.request, prepared, log)
    finally:
        forget_job(job)
