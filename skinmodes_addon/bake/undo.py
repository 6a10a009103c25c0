"""The undo log of a bake's commit: each step recorded as its inverse."""

from __future__ import annotations

from collections.abc import Callable


class Undo:
    """The steps a commit has taken, each as its inverse; undone newest first if the commit fails."""

    def __init__(self) -> None:
        self._inverses: list[Callable[[], object]] = []

    def add(self, inverse: Callable[[], object]) -> None:
        self._inverses.append(inverse)

    def run(self) -> list[str]:
        """Undo every step, each even if another fails; returns one note per step that failed."""
        failed = []
        while self._inverses:
            inverse = self._inverses.pop()
            try:
                inverse()
            except BaseException as exc:  # keep going: a half-restored scene is the worst outcome
                failed.append(f"{type(exc).__name__}: {exc}")
        return failed


def set_all(target: object, values: dict[str, object]) -> None:
    for name, value in values.items():
        setattr(target, name, value)
