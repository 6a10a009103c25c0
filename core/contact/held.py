"""Normal rows held back from a step's system while no iterate of the step can press them.

Most samples within the search margin of an obstacle are not pressed: the
margin is there for samples that a fast step carries into the obstacle.
Giving every one of them a row makes each iteration of the step pay for
rows that add nothing.  So a step enters into its system only the rows that
are pressed or near (:meth:`HeldRows.split`) and holds the others here,
each a sample s with a plane normal n and target b, and its slack
n . u_s(c) - b > 0 at a centre c (3, q), u_s(z) = z Y_s.

Why that is exact.  For any z, |n . u_s(z) - n . u_s(c)| = |n . (z - c) Y_s|
<= |z - c|_F |Y_s|, so while |z - c|_F < reach = min over held rows of
slack / |Y_s|, no held row is pressed at z: it adds exactly nothing to the
energy, gradient, Hessian or global step there.  The check costs one norm
of z - c.  Only when an iterate leaves that ball are the held rows
evaluated at it (one product over them, :meth:`HeldRows.take`); those
pressed, or as near as the distance just travelled, join the system, and
the rest are re-centred on the iterate.  The solution is the one with every
row given, to round-off (sums over fewer rows, in another order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .sample_rows import stacked_rows

# The bound is taken this much tighter than exact, so that the round-off of the slack never admits a
# pressed row as held.
SAFETY = 1.0 - 1e-9


@dataclass(eq=False)  # holds arrays: never compared
class HeldRows:
    """Held normal rows (module doc): Y (k, q) every sample's basis row and scale (k,) its norm |Y_s|;
    index (h,) the held rows' samples, normal (h, 3), b (h,) their targets, weight the penalty k (N/m);
    centre (3, q) and reach (the ball's radius) of the bound."""

    Y: np.ndarray
    scale: np.ndarray
    index: np.ndarray
    normal: np.ndarray
    b: np.ndarray
    weight: float
    centre: np.ndarray
    reach: float

    @staticmethod
    def split(
        Y: np.ndarray,
        scale: np.ndarray,
        index: np.ndarray,
        normal: np.ndarray,
        b: np.ndarray,
        weight: float,
        z: np.ndarray,
        slack: np.ndarray,
        band: np.ndarray,
    ) -> tuple[np.ndarray, HeldRows | None]:
        """(enter (a,): the rows whose slack (a,) at z (3, q) is below band (a,) (m), the others held; None
        when none is).  index, normal, b: the rows' samples (a,), normals (a, 3) and targets (a,)."""
        enter = slack < band
        keep = ~enter
        if not keep.any():
            return enter, None
        i = index[keep]
        held = HeldRows(Y, scale, i, normal[keep], b[keep], weight, z.copy(), 0.0)
        held.reach = _reach(slack[keep], scale[i])
        return enter, held

    def clear(self, z: np.ndarray) -> bool:
        """Whether no held row can be pressed at z (3, q): z lies within reach of the centre."""
        d = z - self.centre
        return float(np.vdot(d, d)) < self.reach * self.reach  # asked at every iterate: no square root

    def take(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The rows (J (e, 3q), b (e,), w (e,)) that leave the hold at z (3, q): pressed there, or nearer than
        the distance from the centre to z; the others stay, re-centred on z.  None: none leaves."""
        distance = float(np.linalg.norm(z - self.centre))
        s = self.scale[self.index]
        slack = np.einsum("ij,ij->i", self.normal, self.Y[self.index] @ z.T) - self.b
        leave = slack < distance * s
        out = None
        if leave.any():
            i, n, b = self.index[leave], self.normal[leave], self.b[leave]
            out = stacked_rows(self.Y, i, n), b, np.full(len(i), self.weight)
            stay = ~leave
            self.index, self.normal, self.b, slack, s = (
                self.index[stay],
                self.normal[stay],
                self.b[stay],
                slack[stay],
                s[stay],
            )
        self.centre = np.array(z, dtype=np.float64)
        self.reach = _reach(slack, s)
        return out

    def __len__(self) -> int:
        return len(self.index)


def _reach(slack: np.ndarray, scale: np.ndarray) -> float:
    """The bound's radius: the smallest slack over scale (inf for no rows)."""
    if len(slack) == 0:
        return np.inf
    with np.errstate(divide="ignore"):
        return SAFETY * float(np.min(slack / scale))
