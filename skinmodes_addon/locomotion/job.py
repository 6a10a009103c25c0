"""Find Gait's worker: prepare the object's tet mesh and search for its gait off the main thread.

Like the modes job (``session.jobs.ModesJob``): the request is read on the main thread,
the worker never touches bpy, numpy releases the GIL in the heavy calls, and a cancel is
honoured at the next CMA-ES generation (a fraction of a second at a few thousand
vertices), after which the result is thrown away and the object is left as it was.
"""

from __future__ import annotations

from dataclasses import replace

import bpy

from ..character import is_object_rig
from ..core.errors import SkinmodesError
from ..core.locomotion.stored import GaitSettings, StoredGait, measure, search
from ..props import settings as object_settings
from ..session.prepare import prepare
from ..session.request import SessionRequest, read_request
from ..session.session import object_by_uid
from ..session.worker import Worker
from ..threads import one_blas_thread
from .store import gait_settings, write_gait

# Per object (session_uid): its running Find Gait job.  Per process, like registry.JOBS.
GAIT_JOBS: dict[int, GaitJob] = {}


class GaitCancelledByUser(SkinmodesError):
    """Find Gait was cancelled (Esc, a signal, the object gone); nothing was changed."""


class GaitJob(Worker):
    """prepare + :func:`core.locomotion.stored.search` + a 10 s replay on a daemon thread, polled from the main
    thread.  ``done_rollouts``, ``planned`` and ``best`` (objective J so far) are written by the worker and
    read by the main thread (single attribute stores: atomic under the GIL)."""

    def __init__(self, request: SessionRequest, settings: GaitSettings) -> None:
        self.request, self.settings = request, settings
        self.stage = "preparing the mesh"
        self.done_rollouts, self.planned, self.best = 0, 0, float("-inf")
        self.gait: StoredGait | None = None
        self.figures: dict[str, float] = {}
        self._start(f"skinmodes gait: {request.object_name}")

    def _progress(self, done: int, planned: int, best: float) -> bool:
        self.done_rollouts, self.planned, self.best = done, planned, best
        return not self._stop.is_set()

    def _work(self) -> None:
        with one_blas_thread():  # small dense steps: threads only add hand-offs (threads.one_blas_thread)
            prepared = prepare(self.request, None, self._stop.is_set)
            self.stage = "searching"
            gait = search(prepared.mesh, self.settings, self._progress)
            self.stage = "measuring"
            self.figures = measure(gait, prepared.mesh)
            self.gait = replace(gait, figures=self.figures)  # stored with it: the panel shows what was found

    @property
    def fraction(self) -> float:
        return self.done_rollouts / self.planned if self.planned else 0.0

    def result(self) -> StoredGait:
        """The gait; re-raises the worker's error, or :class:`GaitCancelledByUser` after :meth:`cancel`."""
        if not self.done:
            raise RuntimeError("the gait is still being searched for")
        if self._stop.is_set():
            raise GaitCancelledByUser("Find Gait was cancelled; nothing was changed")
        if self._error is not None:
            raise self._error
        assert self.gait is not None
        return self.gait


def start_gait_job(obj: bpy.types.Object, scene: bpy.types.Scene, settings: GaitSettings | None = None) -> GaitJob:
    """Read ``obj`` here (main thread) and search on a worker thread; one job per object at a time.

    settings: what to search with (default: the object's, :func:`store.gait_settings`)."""
    if obj.session_uid in GAIT_JOBS:
        raise SkinmodesError(f"a gait for '{obj.name}' is already being searched for; wait, or press Esc to stop")
    if not is_object_rig(obj):  # issue 39: it was searched, then failed on the coarse copy with another line
        raise SkinmodesError(
            f"a gait is found for a mesh without an armature, and '{obj.name}' is rigged: its bones move it; "
            "remove the Armature modifier to let the mesh crawl on its own"
        )
    request = read_request(obj, scene, searching=True)
    chosen = gait_settings(obj, request) if settings is None else settings
    job = GaitJob(request, replace(chosen, dt=1.0 / (request.solver.fps * request.solver.substeps)))
    GAIT_JOBS[obj.session_uid] = job
    return job


def finish_gait_job(job: GaitJob) -> StoredGait:
    """Store a finished job's gait on its object and switch Locomotion on (main thread); the job is forgotten
    either way.  Raises the worker's error, or one line if the object is gone: then nothing changes."""
    try:
        gait = job.result()
        obj = object_by_uid(job.request.object_uid)
        if obj is None:
            raise SkinmodesError(f"'{job.request.object_name}' was deleted while its gait was searched for")
        write_gait(obj, gait)
        object_settings(obj).locomotion = True
        return gait
    finally:
        forget_gait_job(job)


def forget_gait_job(job: GaitJob) -> None:
    """Take ``job`` out of GAIT_JOBS (finished, failed or cancelled): a new search may start."""
    if GAIT_JOBS.get(job.request.object_uid) is job:
        del GAIT_JOBS[job.request.object_uid]
