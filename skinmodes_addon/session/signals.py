"""The command line's signal channel: stop requests and progress listeners (their lists live in
the registry), and the exception a stopped bake raises."""

from __future__ import annotations

from ..registry import PROGRESS_LISTENERS, STOP_REQUESTS


class Interrupted(KeyboardInterrupt):
    """A signal (SIGINT, SIGTERM) asked the bake to stop; see :data:`registry.STOP_REQUESTS`."""

    def __init__(self, signum: int, what: str = "bake") -> None:
        super().__init__(signum)
        self.signum = signum
        self.what = what  # what the signal cancelled, in the line the command says ("the bake was cancelled")


def stop_requested() -> bool:
    """Whether a signal asked the work to stop (checked between stages and frames)."""
    return bool(STOP_REQUESTS)


def raise_if_stopped() -> None:
    """Raise :class:`Interrupted` for the first signal received, if any."""
    if STOP_REQUESTS:
        raise Interrupted(STOP_REQUESTS[0])


def report_progress(stage: str, fraction: float) -> None:
    for listener in list(PROGRESS_LISTENERS):
        listener(stage, fraction)
