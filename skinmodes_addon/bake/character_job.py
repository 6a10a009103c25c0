"""Bake every mesh of a character (issue 38): all simulate first, then all commit.

Each mesh has its own :class:`~.job.BakeJob` (its own cache file, modifier or shape keys), and each bakes
the one body it belongs to (Whole Character, ``character.read_character``): the first of a body's meshes
simulates it, and the others with the same settings read its offsets (``Session.share_key``).  The jobs' frames run
one job after the other, each writing aside (a ``.partial`` file, offsets in memory); only when every job
has run do they commit, in order.  So a failure or Esc while any mesh simulates leaves every mesh as it was.
A commit that fails after others succeeded (a full disk between two renames) leaves the earlier meshes baked
and says so; each commit is itself all or nothing (``bake/transaction.py``).
"""

from __future__ import annotations

from collections.abc import Generator

import bpy

from ..core.errors import SkinmodesError
from ..session.signals import raise_if_stopped
from .job import BakeJob, SharedBody


class CharacterBake:
    """The bakes of ``meshes``; the interface of :class:`BakeJob` the operator and the API use: iterate
    :meth:`steps`, then :meth:`commit` (or :meth:`cancel`); ``start``, ``end``, ``frames_done`` are the
    current mesh's, ``warnings`` and ``messages`` every mesh's, each line naming its mesh."""

    def __init__(
        self,
        context: bpy.types.Context,
        meshes: list[bpy.types.Object],
        output: str | None = None,
        frames: tuple[int, int] | None = None,
        keep_previous: bool = False,
    ) -> None:
        if not meshes:
            raise SkinmodesError("the character has no mesh to bake")
        # Every job is made (and so every mesh checked: output, folder, room) before any simulates.  The meshes
        # of one body with the same settings simulate it once: the first, and the others read its offsets.
        shared: dict[tuple[object, ...], SharedBody] = {}
        self.jobs = [
            BakeJob(context, m, output=output, frames=frames, keep_previous=keep_previous, shared=shared)
            for m in meshes
        ]
        self.current = self.jobs[0]
        self.committed: list[BakeJob] = []

    @property
    def start(self) -> int:
        return self.current.start

    @property
    def end(self) -> int:
        return self.current.end

    @property
    def frames_done(self) -> int:
        return self.current.frames_done

    @property
    def seconds(self) -> float:
        return sum(j.seconds for j in self.jobs)

    @property
    def warnings(self) -> list[str]:
        return [f"'{j.obj.name}': {w}" for j in self.jobs for w in j.warnings]

    @property
    def messages(self) -> list[str]:
        return [f"'{j.obj.name}': {m}" for j in self.jobs for m in j.messages]

    def steps(self) -> Generator[float, None, None]:
        """Every job's frames in turn; yields the fraction of all of them done."""
        n = len(self.jobs)
        for i, job in enumerate(self.jobs):  # meshes, not vertices
            self.current = job
            try:
                for fraction in job.steps():
                    yield (i + fraction) / n
            except SkinmodesError as exc:
                raise type(exc)(f"'{job.obj.name}' of the character: {exc}; no mesh of it changed") from exc

    def commit(self) -> None:
        """Commit every job, in order (module notes)."""
        for job in self.jobs:
            try:
                job.commit()
            except SkinmodesError as exc:
                done = ", ".join(f"'{j.obj.name}'" for j in self.committed)
                kept = f"; {done} kept the new bake" if done else "; no mesh changed"
                raise type(exc)(f"'{job.obj.name}' of the character: {exc}{kept}") from exc
            self.committed.append(job)

    def cancel(self) -> None:
        """Cancel every job not committed (each leaves its mesh and the disk as before)."""
        errors = []
        for job in self.jobs:
            if job in self.committed:
                continue
            try:
                job.cancel()
            except Exception as exc:  # every job gets its cancel, whatever one of them raises
                errors.append(exc)
        if errors:
            raise errors[0]

    def run(self) -> CharacterBake:
        """Run every step and commit; cancels cleanly on any error."""
        try:
            for _ in self.steps():
                pass
            raise_if_stopped()  # the last chance to stop before any bake is replaced
        except BaseException:
            self.cancel()
            raise
        self.commit()
        return self
