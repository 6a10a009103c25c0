"""What the frame loop watches and says: the rig's collapses, flips, jumps and cuts, and implausible offsets.

Each warning is one line, said once per kind, in the order it arose (:class:`Warnings`).
The rig guard (:class:`RigGuard`) measures the rig at a few probe tet vertices
(:func:`guard_probes`); the offset guard measures a drive's displacement there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..dynamics.drive import remember_near
from ..model.rig import rig_matrix

# The guard speaks when the secondary motion exceeds this share of the
# character's size (twice its largest distance from the centroid).
OFFSET_WARNING = 0.5
# A rig whose probe points accelerate by more than this share of the
# character's size in one frame (second difference) has a cut or a jump: at
# 24 fps and 1.8 m that is 26 g, beyond any performed motion.
JUMP_WARNING = 0.25
# ... and it is a cut only where that frame's step is a discontinuity: at some probe point that
# accelerates so, the step is more than CUT_RATIO times the largest step of the same point in the
# CUT_WINDOW frames either side.  A fast periodic motion (a wasp's wing flapping 45 % of the body
# per frame) accelerates as hard, but its steps repeat within a few frames: it is not a cut.
CUT_RATIO = 2.0
CUT_WINDOW = 4
# Tet vertices the guard measures each frame (the farthest from the centroid
# and an even spread): the offset's maximum sits on the outside.
GUARD_PROBES = 512


def guard_probes(X: np.ndarray, count: int = GUARD_PROBES) -> np.ndarray:
    """Indices (k,) of at most ``count`` tet vertices X (n, 3) that the offset guard watches."""
    n = len(X)
    if n <= count:
        return np.arange(n)
    r = np.sum((X - X.mean(axis=0)) ** 2, axis=1)
    far = np.argsort(-r, kind="stable")[: count // 2]
    spread = np.linspace(0, n - 1, count - len(far)).astype(np.int64)
    return np.unique(np.concatenate([far, spread]))


def frame_ranges(frames: Sequence[int]) -> str:
    """Sorted frames as ranges: [1, 2, 3, 7] -> "1-3, 7"."""
    out: list[str] = []
    i = 0
    while i < len(frames):
        j = i
        while j + 1 < len(frames) and frames[j + 1] == frames[j] + 1:
            j += 1
        out.append(str(frames[i]) if i == j else f"{frames[i]}-{frames[j]}")
        i = j + 1
    return ", ".join(out)


class Warnings:
    """A simulation's warnings: one line each, each kind said once, in the order they arose."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._said: set[str] = set()

    def said(self, kind: str) -> bool:
        return kind in self._said

    def once(self, kind: str, line: str) -> None:
        """Say ``line`` unless a line of this ``kind`` was said already."""
        if kind not in self._said:
            self._said.add(kind)
            self.lines.append(line)


def offset_share(u: np.ndarray, size: float) -> float:
    """The largest displacement in u (p, 3) as a share of the character's size."""
    return float(np.sqrt(np.max(np.sum(u**2, axis=1)))) / size


def offset_warning(frame: int, share: float, stiffness_mode: str) -> str:
    """The line the guard says when the secondary motion reaches ``share`` of the size at ``frame``."""
    hint = (
        "raise the wobble frequency, then the damping ratio"
        if stiffness_mode == "frequency"
        else "raise Young's modulus or switch the stiffness to Wobble Frequency"
    )
    return (
        f"frame {frame}: the secondary motion reached {100 * share:.0f}% of the character's size "
        f"(a plausible jiggle stays under {100 * OFFSET_WARNING:.0f}%); {hint}, or check the rig for jumps"
    )


class RigGuard:
    """Says, once per kind, when the rig collapses, flips or jumps; finds the cuts that Reset at Cuts restarts at.

    rig: LBS parameters (12 b,) at an integer frame; probe_rig: the LBS basis
    (p, 12 b) of the probe points, or None without an LBS rig (no jump is
    measured then); size: the character's size; first, end: the simulated
    frames (pre-roll included); reset: Reset at Cuts.
    """

    def __init__(
        self,
        rig: Callable[[int], np.ndarray],
        probe_rig: np.ndarray | None,
        size: float,
        first: int,
        end: int,
        reset: bool,
        warnings: Warnings,
        column_names: Sequence[str] | None = None,
    ) -> None:
        self.rig, self.probe_rig, self.size = rig, probe_rig, size
        self.first, self.end, self.reset = first, end, reset
        self.warnings = warnings
        self._column_names = list(column_names) if column_names is not None else None
        self._rig_cache: dict[int, np.ndarray] = {}
        self._cuts: set[int] = set()
        self._pending: dict[int, np.ndarray] = {}  # frames the rig may jump at: (k,) probe accelerations

    def prime(self, frame: int) -> None:
        """Measure the rig at ``frame`` and the frame before it (if simulated), before simulating past it."""
        self.probe_positions(frame, self.rig(frame))
        if frame - 1 not in self._rig_cache and frame - 1 >= self.first:
            self.probe_positions(frame - 1, self.rig(frame - 1))

    def probe_positions(self, frame: int, p: np.ndarray) -> np.ndarray | None:
        """Rig positions (k, 3) of the guard's probe points at ``frame`` (None without an LBS rig)."""
        if self.probe_rig is None:
            return None
        x = self._rig_cache.get(frame)
        if x is None:
            x = self.probe_rig @ rig_matrix(p)
            remember_near(self._rig_cache, frame, x)  # the guard looks two frames back
        return x

    def _column(self, index: int) -> str:
        """What drives weight column ``index``, as the warnings name it: the phrase given ("bone 'Hip' of the
        rig", "the object 'Body' or a parent of it"), or "bone <index> of the rig"."""
        names = self._column_names
        return names[index] if names is not None and 0 <= index < len(names) else f"bone {index} of the rig"

    def check(self, frame: int, p: np.ndarray) -> bool:
        """Say, once per kind, when the rig collapses, flips or jumps at ``frame``; True at a jump (a cut)."""
        A = p.reshape(-1, 3, 4)[:, :, :3]
        det = np.linalg.det(A)
        if np.any(np.abs(det) < 1e-9) and not self.warnings.said("collapse"):
            self.warnings.once(
                "collapse",
                f"frame {frame}: {self._column(int(np.argmin(np.abs(det))))} is scaled to zero, "
                "which crushes the flesh; fix the bone's scale keys",
            )
        if np.any(det < 0) and not self.warnings.said("flip"):
            self.warnings.once(
                "flip",
                f"frame {frame}: {self._column(int(np.argmin(det)))} has a negative scale "
                "(a mirror flip); the jiggle there is unreliable: use rotations instead of negative scale",
            )
        x_b = self.probe_positions(frame, p)
        if x_b is None or frame - 1 not in self._rig_cache:
            return False
        x_a = self._rig_cache[frame - 1]
        # No earlier frame, or a cut at the previous one: the rig starts from rest there.
        x_z = x_a if frame - 1 in self._cuts else self._rig_cache.get(frame - 2, x_a)
        acc = np.sqrt(np.sum((x_b - 2.0 * x_a + x_z) ** 2, axis=1)) / self.size
        if acc.max() <= JUMP_WARNING:
            return False
        if not self.reset:
            # Told once the frames after it are simulated (and sampled: a bake samples the rig as it
            # goes), so a flap starting with the clip is seen to go on (:meth:`confirm_cuts`).
            self._pending[frame] = acc
            return False
        # Restarting cannot wait: only the frames before it tell a flap (the first flap of a clip
        # that starts with one may restart once).
        isolated = self._isolated_steps(frame, frame) & (acc > JUMP_WARNING)
        if not isolated.any():
            return False  # fast motion that goes on (a flap), not a discontinuity
        jump = float(acc[isolated].max())
        self._cuts.add(frame)
        # Simulated again from a checkpoint: said already.
        self.warnings.once(
            f"cut {frame}",
            f"frame {frame}: the rig jumps by {100 * jump:.0f}% of the character's size; the simulation "
            "restarts at rest there (Reset at Cuts)",
        )
        return True

    def confirm_cuts(self, simulated: int) -> None:
        """Say "the rig jumps" for the pending frames whose CUT_WINDOW frames after them are simulated."""
        for frame in sorted(self._pending):
            if frame + CUT_WINDOW > simulated and simulated < self.end:
                break
            acc = self._pending.pop(frame)
            isolated = self._isolated_steps(frame, frame + CUT_WINDOW) & (acc > JUMP_WARNING)
            if not isolated.any() or self.warnings.said("jump"):
                continue  # fast motion that goes on (a flap), not a discontinuity; or said already
            self.warnings.once(
                "jump",
                f"frame {frame}: the rig jumps by {100 * float(acc[isolated].max()):.0f}% of the character's "
                "size in one frame (a cut?); turn on Reset at Cuts or smooth the animation there",
            )

    def _isolated_steps(self, frame: int, last: int) -> np.ndarray:
        """(k,) bool: probe points whose rig step into ``frame`` exceeds CUT_RATIO x their own steps nearby.

        Nearby: the steps into the other frames from CUT_WINDOW before ``frame`` to ``last`` (at most
        CUT_WINDOW after it) inside the simulated range, cuts included: a restart on a flap's first
        stroke must not make the next stroke look isolated.  Only asked where the rig accelerates
        beyond JUMP_WARNING: the extra rig samples are rare but in such motion.
        """
        assert self.probe_rig is not None
        lo = max(self.first, frame - CUT_WINDOW - 1)
        hi = min(self.end, last)
        x = {g: self.probe_rig @ rig_matrix(self.rig(g)) for g in range(lo, hi + 1)}
        step = {g: np.linalg.norm(x[g] - x[g - 1], axis=1) for g in range(lo + 1, hi + 1)}
        around = np.zeros(len(step[frame]))
        for g, s in step.items():
            if g != frame:
                around = np.maximum(around, s)
        return step[frame] > CUT_RATIO * around

    def forget_after(self, frame: int) -> None:
        """Forget what was measured after ``frame`` (the rig changed there)."""
        self._rig_cache = {f: x for f, x in self._rig_cache.items() if f <= frame}
        self._cuts = {f for f in self._cuts if f <= frame}
        self._pending = {f: a for f, a in self._pending.items() if f <= frame}
