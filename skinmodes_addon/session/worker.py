"""One daemon worker thread polled from Blender's main thread: the base of the modes and gait jobs."""

from __future__ import annotations

import threading
import time


class Worker:
    """Runs :meth:`_work` on a daemon thread; its exception is kept for the main thread; a stop flag.

    The worker never touches bpy and cannot be killed: :meth:`cancel` sets the flag that the work
    checks at its next stage, and the main thread throws the result away.  Subclasses set their own
    fields, then call :meth:`_start`, and give :meth:`_work`; ``result()`` is theirs (its type is).
    """

    started: float
    _stop: threading.Event
    _error: BaseException | None
    _thread: threading.Thread

    def _start(self, name: str) -> None:
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._error = None
        self._thread = threading.Thread(target=self._guarded, name=name, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        raise NotImplementedError

    def _guarded(self) -> None:
        try:
            self._work()
        except BaseException as exc:  # handed to the main thread by the subclass's result()
            self._error = exc

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def cancel(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker ends (or ``timeout`` seconds); True if it has."""
        self._thread.join(timeout)
        return self.done
