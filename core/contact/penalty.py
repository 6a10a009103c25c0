"""One step's contact as rows on the reduced coordinates: a one-sided penalty normal to each contact plane
and a friction drag along it, with their energy, gradient, Hessian and the exact global step.

Layout as in the simulator's step (``core/dynamics/simulator.py``): Z is
(3, q), one row per coordinate, and a sample's secondary displacement is
u_s = Z Y_s with Y_s (q,) its basis row.  A row r is a direction d_r (3,)
at a sample: its value is d_r . u_s = J_r . vec(Z) with J_r = d_r (x) Y_s
(vec row-major, the Newton system's index q i + a).

* Normal rows (one-sided): k/2 (b_r - J_r z)_+^2.  b_r is how far the rig
  leaves the sample from the plane, capped at 0: where the rig itself puts
  the sample inside the obstacle, the rig wins, the contact neither pushes
  that sample out nor lets the jiggle push it deeper.  Contact acts on the
  secondary motion only, through the reduced coordinates, so the rig's own
  motion is never altered (complementarity holds with contact on).
* Friction rows (two per pressed sample, along the plane): w_r/2 (J_r z -
  b_r)^2, a drag holding the secondary motion where it was, with w_r =
  mu f_n / max(|v_t|, v_stick) / h from the normal force and sliding speed at
  the step's start (regularised Coulomb, lagged one step, as in
  :mod:`core.contact.ground`): fixed within the step, so the energy stays one
  convex function and every solve a minimisation.

All rows together are a convex piecewise quadratic.  Added to a quadratic
1/2 (z - z0)^T (I3 (x) H) (z - z0) it is minimised exactly by a semi-smooth
Newton loop over the normal rows' active set, with a backtracking line search
so that it converges from anywhere (``minimise``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .active_solve import ActiveSolve

if TYPE_CHECKING:
    from .held import HeldRows

# Active-set passes of the global step (it settles in two or three; the line search makes it converge).
PASSES = 40


@dataclass(eq=False)  # holds arrays: never compared
class ContactRows:
    """The rows of one step (module doc).

    J: (a, 3q) row vectors; b: (a,) targets; w: (a,) weights (N/m: the
    stiffness for normal rows, the drag over h for friction rows); one_sided:
    (a,) True for normal rows; held: normal rows held back while no iterate
    can press them (:mod:`core.contact.held`): every evaluation at a z first
    admits those that might be pressed there, so the rows act as if all
    were given.
    """

    J: np.ndarray
    b: np.ndarray
    w: np.ndarray
    one_sided: np.ndarray
    held: HeldRows | None = None
    # J_a^T W J_a per active set, and the global step's solver on it, kept for the step: the local-global
    # and Newton iterations of one step mostly see the same active set.
    _products: dict[bytes, np.ndarray] = field(default_factory=dict, repr=False)
    _solvers: dict[bytes, ActiveSolve] = field(default_factory=dict, repr=False)
    _last: list = field(default_factory=list, repr=False)  # [(z, J z)]: the last product

    def __len__(self) -> int:
        return len(self.b)

    def values(self, z: np.ndarray) -> np.ndarray:
        """J z (a,) at z (3, q), after admitting the held rows that z might press (so read J, b, w after
        this); the last one is kept (an iteration asks for it several times)."""
        flat = np.ascontiguousarray(z).ravel()
        if self._last and (self._last[0][0] == flat).all():  # same shape: one z layout per set
            return self._last[0][1]
        self._admit(flat.reshape(z.shape))
        out = self.J @ flat
        self._last[:] = [(flat.copy(), out)]
        return out

    def _admit(self, z: np.ndarray) -> None:
        """Move the held rows that z (3, q) might press into the rows (:mod:`core.contact.held`)."""
        if self.held is None or self.held.clear(z):
            return
        taken = self.held.take(z)
        if taken is None:
            return
        J, b, w = taken
        self.J, self.b, self.w = np.concatenate([self.J, J]), np.concatenate([self.b, b]), np.concatenate([self.w, w])
        self.one_sided = np.concatenate([self.one_sided, np.ones(len(b), dtype=bool)])
        self._products.clear()
        self._solvers.clear()
        self._last.clear()

    def active(self, z: np.ndarray) -> np.ndarray:
        """(a,) rows that act at z (3, q): every friction row, and the normal rows that are pressed."""
        v = self.values(z)
        return ~self.one_sided | (v < self.b)

    def _residuals(self, z: np.ndarray) -> np.ndarray:
        r = self.values(z) - self.b
        return np.where(self.one_sided, np.minimum(r, 0.0), r)

    def energy(self, z: np.ndarray) -> float:
        """The rows' energy (J) at z (3, q)."""
        r = self._residuals(z)
        return float(0.5 * (self.w * r) @ r)

    def gradient(self, z: np.ndarray) -> np.ndarray:
        """The energy's gradient (3, q) at z (3, q)."""
        r = self._residuals(z)
        return ((self.w * r) @ self.J).reshape(z.shape)

    def hessian(self, z: np.ndarray) -> np.ndarray:
        """The energy's (generalised) Hessian (3q, 3q) at z: the active rows' J^T W J."""
        return self.hessian_of(self.active(z))

    def hessian_of(self, on: np.ndarray) -> np.ndarray:
        """J_a^T W_a J_a (3q, 3q) of the rows ``on`` (a,), kept for the step."""
        key = on.tobytes()
        if key not in self._products:
            K = self.J[on]
            K *= np.sqrt(self.w[on])[:, None]  # in place: with many rows, each copy of them costs
            self._products[key] = K.T @ K
        return self._products[key]

    def _solver(self, H: np.ndarray, on: np.ndarray) -> ActiveSolve:
        """The global step's solve on the active rows ``on`` (a,) for H (q, q) (one H per step)."""
        key = on.tobytes()
        if key not in self._solvers:
            self._solvers[key] = ActiveSolve(H, self, on)
        return self._solvers[key]

    def forces(self, z: np.ndarray) -> np.ndarray:
        """The normal rows' push k (b - J z)_+ (a_n,) at z (3, q) (N)."""
        v = self.values(z)
        n = self.one_sided
        return self.w[n] * np.maximum(self.b[n] - v[n], 0.0)

    def minimise(self, H: np.ndarray, z0: np.ndarray, start: np.ndarray) -> np.ndarray:
        """argmin_z 1/2 (z - z0)^T (I3 (x) H) (z - z0) + energy(z), z0 and start (3, q); H (q, q) SPD.

        Semi-smooth Newton: solve with the active set at the iterate, stop
        when the solution's active set is the same (then it is the exact
        minimiser); otherwise backtrack along the step until the objective
        decreases (it is convex and C^1, so this converges).  Held rows join
        where an iterate might press them; the set only grows, so this ends.
        """
        q = H.shape[0]
        if not self._acts(z0):  # nothing pressed where the flesh would go without contact
            return z0
        z0f = z0.ravel()

        def objective(z: np.ndarray) -> float:
            d = (z - z0f).reshape(3, q)
            return 0.5 * float(np.vdot(d, d @ H)) + self.energy(z.reshape(3, q))

        z, f = start.ravel().copy(), None
        for _ in range(PASSES):
            on = self.active(z.reshape(3, q))
            new = self._solver(H, on).solve(z0)
            if np.array_equal(self.active(new.reshape(3, q)), on):
                return new.reshape(3, q)
            f = objective(z) if f is None else f  # most steps end at the first pass: only now is it needed
            step, alpha = new - z, 1.0
            for _ in range(30):
                f_new = objective(z + alpha * step)
                if f_new <= f:
                    break
                alpha *= 0.5
            else:
                break  # no decrease at round-off: z is the minimiser to within it
            z, f = z + alpha * step, f_new
        return z.reshape(3, q)

    def _acts(self, z0: np.ndarray) -> bool:
        """Whether any row acts at z0 (3, q).  The free step z0 may lie far from the step's iterates, so the
        held rows are asked about it only when no row given acts there."""
        if (~self.one_sided).any():  # friction rows always act
            return True
        if self.held is None:
            return bool(self.active(z0).any())
        v = self.J @ z0.ravel()
        return bool((~self.one_sided | (v < self.b)).any()) or bool(self.active(z0).any())


def concatenate(parts: list[ContactRows]) -> ContactRows:
    """All rows of ``parts`` as one set; at most one part may hold rows back (the obstacles'), and its held
    rows go on being held in the set."""
    held = [p.held for p in parts if p.held is not None]
    if len(held) > 1:
        raise ValueError("only one part of a step's rows may hold rows back")
    return ContactRows(
        np.concatenate([p.J for p in parts]),
        np.concatenate([p.b for p in parts]),
        np.concatenate([p.w for p in parts]),
        np.concatenate([p.one_sided for p in parts]),
        None if not held else copy.copy(held[0]),
    )
