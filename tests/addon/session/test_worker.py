"""session/worker.py: the worker thread under the modes and gait jobs (no bpy needed, but the add-on's own copy)."""

import threading


def test_the_work_runs_off_the_main_thread_and_its_error_is_kept(addon):
    Worker = addon.session.worker.Worker
    seen = {}

    class Failing(Worker):
        def __init__(self):
            self._start("test worker")

        def _work(self):
            seen["thread"] = threading.current_thread().name
            raise ValueError("kept for the main thread")

    w = Failing()
    assert w.wait(10) and w.done and not w.cancelled
    assert seen["thread"] == "test worker" and isinstance(w._error, ValueError)


def test_cancel_sets_the_flag_the_work_checks(addon):
    Worker = addon.session.worker.Worker
    go = threading.Event()

    class Waiting(Worker):
        def __init__(self):
            self.stopped = False
            self._start("test worker")

        def _work(self):
            go.wait(10)
            self.stopped = self._stop.is_set()

    w = Waiting()
    assert not w.done and not w.wait(0.01)  # still running: wait times out and says so
    w.cancel()
    go.set()
    assert w.wait(10) and w.cancelled and w.stopped and w._error is None and w.started > 0
