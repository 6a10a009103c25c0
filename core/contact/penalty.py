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

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

# Active-set passes of the global step (it settles in two or three; the line search makes it converge).
PASSES = 40


@dataclass(frozen=True)
class ContactRows:
    """The rows of one step (module doc).

    J: (a, 3q) row vectors; b: (a,) targets; w: (a,) weights (N/m: the
    stiffness for normal rows, the drag over h for friction rows); one_sided:
    (a,) True for normal rows.
    """

    J: np.ndarray
    b: np.ndarray
    w: np.ndarray
    one_sided: np.ndarray
    # J_a^T W J_a per active set, and its factor with I3 (x) H added, kept for the step: the local-global
    # and Newton iterations of one step mostly see the same active set.
    _products: dict[bytes, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    _factors: dict[bytes, tuple] = field(default_factory=dict, compare=False, repr=False)
    _last: list = field(default_factory=list, compare=False, repr=False)  # [(z, J z)]: the last product

    def __len__(self) -> int:
        return len(self.b)

    def values(self, z: np.ndarray) -> np.ndarray:
        """J z (a,) at z (3, q); the last one is kept (an iteration asks for it several times)."""
        flat = np.ascontiguousarray(z).ravel()
        if self._last and np.array_equal(self._last[0][0], flat):
            return self._last[0][1]
        out = self.J @ flat
        self._last[:] = [(flat.copy(), out)]
        return out

    def active(self, z: np.ndarray) -> np.ndarray:
        """(a,) rows that act at z (3, q): every friction row, and the normal rows that are pressed."""
        return ~self.one_sided | (self.values(z) < self.b)

    def _residuals(self, z: np.ndarray) -> np.ndarray:
        r = self.values(z) - self.b
        return np.where(self.one_sided, np.minimum(r, 0.0), r)

    def energy(self, z: np.ndarray) -> float:
        """The rows' energy (J) at z (3, q)."""
        r = self._residuals(z)
        return float(0.5 * (self.w * r) @ r)

    def gradient(self, z: np.ndarray) -> np.ndarray:
        """The energy's gradient (3, q) at z (3, q)."""
        return ((self.w * self._residuals(z)) @ self.J).reshape(z.shape)

    def hessian(self, z: np.ndarray) -> np.ndarray:
        """The energy's (generalised) Hessian (3q, 3q) at z: the active rows' J^T W J."""
        return self._product(self.active(z))

    def _product(self, on: np.ndarray) -> np.ndarray:
        key = on.tobytes()
        if key not in self._products:
            Ja = self.J[on]
            self._products[key] = (Ja.T * self.w[on]) @ Ja
        return self._products[key]

    def _factor(self, Hb: np.ndarray, on: np.ndarray) -> tuple:
        key = on.tobytes()
        if key not in self._factors:
            self._factors[key] = sla.cho_factor(Hb + self._product(on))
        return self._factors[key]

    def forces(self, z: np.ndarray) -> np.ndarray:
        """The normal rows' push k (b - J z)_+ (a_n,) at z (3, q) (N)."""
        n = self.one_sided
        return self.w[n] * np.maximum(self.b[n] - self.values(z)[n], 0.0)

    def minimise(self, H: np.ndarray, z0: np.ndarray, start: np.ndarray) -> np.ndarray:
        """argmin_z 1/2 (z - z0)^T (I3 (x) H) (z - z0) + energy(z), z0 and start (3, q); H (q, q) SPD.

        Semi-smooth Newton: solve with the active set at the iterate, stop
        when the solution's active set is the same (then it is the exact
        minimiser); otherwise backtrack along the step until the objective
        decreases (it is convex and C^1, so this converges).
        """
        q = H.shape[0]
        if not self.active(z0).any():  # nothing pressed where the flesh would go without contact
            return z0
        Hb = np.kron(np.eye(3), H)
        rhs0 = Hb @ z0.ravel()

        def objective(z: np.ndarray) -> float:
            d = z - z0.ravel()
            return 0.5 * float(d @ (Hb @ d)) + self.energy(z.reshape(3, q))

        z = start.ravel().copy()
        f = objective(z)
        for _ in range(PASSES):
            on = self.active(z.reshape(3, q))
            new = sla.cho_solve(self._factor(Hb, on), rhs0 + self.J[on].T @ (self.w[on] * self.b[on]))
            if np.array_equal(self.active(new.reshape(3, q)), on):
                return new.reshape(3, q)
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


def stacked_rows(Y: np.ndarray, index: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """J (a, 3q): rows d_r (x) Y[index_r] for sample basis rows Y (k, q), index (a,), directions (a, 3)."""
    return (directions[:, :, None] * Y[index][:, None, :]).reshape(len(index), -1)


def concatenate(parts: list[ContactRows]) -> ContactRows:
    """All rows of ``parts`` as one set."""
    return ContactRows(
        np.concatenate([p.J for p in parts]),
        np.concatenate([p.b for p in parts]),
        np.concatenate([p.w for p in parts]),
        np.concatenate([p.one_sided for p in parts]),
    )
