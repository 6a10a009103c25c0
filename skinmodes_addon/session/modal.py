"""The modal plumbing of an operator that polls a worker thread from a timer (Compute Modes, Find Gait).

:class:`WorkerOperator` owns the start (progress bar, timer, modal handler, first status line), the
``modal`` state machine (Esc cancels; a TIMER updates the status bar until the job is done; then the
operator's done hook; any exception cancels the job and reports one ERROR line) and the cleanup that
runs whatever happens.  An operator gives only what differs through small hooks.  Also here:
:func:`error_line` (one report line for an exception) and :func:`end_modal_ui`, which other modal
operators (the bake) share.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import bpy

from ..core.errors import SkinmodesError


class PolledJob(Protocol):
    """What the modal reads of a job: a :class:`session.worker.Worker` with a progress ``fraction``."""

    started: float

    @property
    def fraction(self) -> float: ...

    @property
    def done(self) -> bool: ...

    @property
    def cancelled(self) -> bool: ...

    def cancel(self) -> None: ...


def error_line(exc: BaseException, failed: str) -> str:
    """What an operator reports for ``exc``, on one line.

    A SkinmodesError already says what is wrong and what to do.  Anything else
    (a bug, a full disk) says what ``failed`` (e.g. "bake"), the exception, and
    that nothing was changed: every operator leaves the scene as it was on failure.
    """
    if isinstance(exc, SkinmodesError):
        text = str(exc)
    else:
        text = f"{failed} failed ({type(exc).__name__}: {exc}); nothing was changed"
    return " ".join(text.split())


def end_modal_ui(context: bpy.types.Context, timer: bpy.types.Timer | None) -> None:
    """Remove a modal operator's timer, progress bar and status text, each even if another step fails."""
    wm = context.window_manager
    try:
        if timer is not None:
            wm.event_timer_remove(timer)
    finally:
        try:
            wm.progress_end()
        finally:
            if context.workspace is not None:
                context.workspace.status_text_set(None)


class WorkerOperator(bpy.types.Operator):
    """Base of an operator whose ``invoke`` starts a worker job and polls it on a timer (not registered itself).

    The operator's ``invoke`` starts its job and returns :meth:`_start_modal`; it gives ``doing`` (its
    report wording: "<doing> cancelled; nothing was changed", "<doing> failed (...)") and the hooks
    :meth:`_status`, :meth:`_succeeded` and :meth:`_forget`, and may give :meth:`_gave_up` and
    :meth:`_abandoned`.  Whatever ends the modal (done, Esc, an error, Blender's cancel) removes the
    timer, the progress bar and the status text, and forgets the job, each even if another step fails.
    """

    doing = "the job"
    _job: Any = None
    _timer: Any = None

    # --- hooks ---------------------------------------------------------------------------------
    def _status(self, job: Any) -> str:
        """The status bar's text for a running job, before ", <seconds> s… Esc to cancel"."""
        raise NotImplementedError

    def _succeeded(self, context: bpy.types.Context, job: Any) -> None:
        """The job is done (main thread): take its result and report it; raising ends in one ERROR line."""
        raise NotImplementedError

    def _forget(self, job: Any) -> None:
        """Take the job out of its registry: a new one may start."""
        raise NotImplementedError

    def _gave_up(self, job: Any, why: str) -> None:
        """The job was cancelled (Esc) or failed, for the one-line reason ``why``: tell whoever waits on it."""

    def _abandoned(self, job: Any) -> bool:
        """True if the job was cancelled elsewhere: the modal ends quietly (CANCELLED, no report)."""
        return False

    # --- the plumbing --------------------------------------------------------------------------
    def _start_modal(self, context: bpy.types.Context, job: PolledJob, step: float = 0.1) -> set[str]:
        """Poll ``job`` every ``step`` seconds from this operator's modal: progress bar, timer, handler, status."""
        self._job = job
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(step, window=context.window)
        wm.modal_handler_add(self)
        self._show_progress(context)
        return {"RUNNING_MODAL"}

    def _show_progress(self, context: bpy.types.Context) -> None:
        job = self._job
        assert job is not None
        context.window_manager.progress_update(int(100 * job.fraction))
        elapsed = time.perf_counter() - job.started
        context.workspace.status_text_set(f"{self._status(job)}, {elapsed:.0f} s… Esc to cancel")

    def _finish(self, context: bpy.types.Context) -> None:
        """Leave nothing behind, each step even if another fails: timer, progress, status text, registry entry."""
        timer, self._timer = self._timer, None
        try:
            end_modal_ui(context, timer)
        finally:
            if self._job is not None:
                self._forget(self._job)

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        job = self._job
        assert job is not None
        done = True  # every return but "keep running" cleans up, whatever is raised
        try:
            if event.type == "ESC":
                job.cancel()
                self._gave_up(job, f"{self.doing} was cancelled")
                self.report({"WARNING"}, f"{self.doing} cancelled; nothing was changed")
                return {"CANCELLED"}
            if self._abandoned(job):
                return {"CANCELLED"}
            if event.type != "TIMER" or not job.done:
                if event.type == "TIMER":
                    self._show_progress(context)
                done = False
                return {"PASS_THROUGH"}
            self._succeeded(context, job)
            return {"FINISHED"}
        except Exception as exc:
            job.cancel()  # if the worker is still at it, its result is not wanted
            why = error_line(exc, self.doing)
            self._gave_up(job, why)
            self.report({"ERROR"}, why)
            return {"CANCELLED"}
        finally:
            if done:
                self._finish(context)

    def cancel(self, context: bpy.types.Context) -> None:
        """Blender ended the modal (a file was loaded, the window closed): stop the worker."""
        if self._job is not None:
            self._job.cancel()
        self._finish(context)
