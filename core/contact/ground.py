"""Ground contact at sample vertices with Coulomb friction, for anything whose positions are ``x = Y Z``.

Reusable beyond locomotion: anything with a scalar basis Y (n x q), reduced
coordinates Z (q x 3) and a step quadratic 1/2 tr(Z^T Q Z) - tr(Z^T F) can
hand its sample rows Y[samples] (k x q), Q and a plane to
:class:`GroundContact` (the contact issue can use it with a collider's planes).

Why not the seed's model (App. E: every sample in contact keeps a zero normal
velocity and a damped tangential one, ``u = 0`` sticks).  In a subspace of q
columns per coordinate, equality constraints at q or more samples in general
position fix *every* coordinate: the whole body freezes, not just its feet,
and only a release can move it.  A densely sampled underside (needed so that
the vertices between samples do not sink) is exactly that case; it is why the
earlier bench found no gait with 60 underside samples.  So, derived afresh:

* Normal: a stiff one-sided penalty k/2 (h - n . x_s)_+^2 per sample, k set
  so the body's weight spread over the samples sinks ``depth`` (a share of
  the radius).  It is convex and never over-constrains, and a sample lifts off
  as soon as nothing presses it down.  With the rotations fixed, the normal
  coordinate's global step minimises a piecewise quadratic, solved exactly by
  a finite active-set (semi-smooth Newton) loop; every q x q factor is cached
  per active set.
* Tangent: Coulomb friction mu |f_n|, implicit as a drag c_s |v_t|^2 / 2 with
  c_s = mu f_n / max(|v_t|, v_stick) from the previous step's normal force and
  sliding speed (lagged one step, the usual regularised Coulomb): a lightly
  loaded or lifted sample slides, a pressed one grips.  This is what a crawler
  pushes against; it is fixed within a step, so local-global stays monotone.

The ground frame R = [t1 t2 n] decouples the three columns of Z R: the two
tangential ones share one q x q system per step, the normal one carries the
penalty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

# Active-set passes for the normal column's piecewise quadratic (it settles in two or three).
NEWTON_PASSES = 30


@dataclass(frozen=True)
class GroundPlane:
    """normal: (3,) unit, pointing out of the ground; height: n . x on the plane (m); friction: Coulomb mu."""

    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    height: float = 0.0
    friction: float = 0.8


def sample_vertices(X: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    """k vertex ids (k,) spread over ``candidates`` by farthest-point sampling, deterministic.

    X: (n, 3); candidates: (c,) vertex ids (the boundary).  Starts from the
    candidate farthest from the centroid; each pick updates all distances at
    once (k small picks, no loop over vertices).
    """
    P = X[candidates]
    k = min(int(k), len(candidates))
    first = int(np.argmax(((P - P.mean(axis=0)) ** 2).sum(axis=1)))
    picks = [first]
    dist = ((P - P[first]) ** 2).sum(axis=1)
    for _ in range(k - 1):
        nxt = int(np.argmax(dist))
        picks.append(nxt)
        dist = np.minimum(dist, ((P - P[nxt]) ** 2).sum(axis=1))
    return np.asarray(candidates)[np.array(picks, dtype=np.int64)]


def lowest_band(X: np.ndarray, candidates: np.ndarray, up: np.ndarray, band: float) -> np.ndarray:
    """The candidates (c',) whose height along the unit ``up`` (3,) lies in the lowest ``band`` share of their range.

    For a crawler, contact samples where the ground can be: the samples'
    spacing under the body then sets how far the vertices between them dip.
    """
    h = X[candidates] @ np.asarray(up, dtype=np.float64)
    return np.asarray(candidates)[h <= h.min() + band * np.ptp(h)]


def tangent_basis(normal: np.ndarray) -> np.ndarray:
    """(2, 3) orthonormal tangents of a unit normal (3,)."""
    n = np.asarray(normal, dtype=np.float64)
    a = np.eye(3)[int(np.argmin(np.abs(n)))]
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1)
    return np.stack([t1, np.cross(n, t1)])


def ground_frame(normal: np.ndarray) -> np.ndarray:
    """R (3, 3) with columns t1, t2, n: world coordinates times R are (tangent, tangent, height)."""
    n = np.asarray(normal, dtype=np.float64)
    return np.column_stack([*tangent_basis(n), n / np.linalg.norm(n)])


class GroundContact:
    """The plane's contact at k samples for a step quadratic Q (q, q); see the module doc.

    Y_samples: (k, q); dt: the step (s); stiffness: the normal penalty k (N/m per
    sample); stick_speed: the sliding speed (m/s) below which friction grips.
    """

    def __init__(
        self, plane: GroundPlane, Y_samples: np.ndarray, Q: np.ndarray, dt: float, stiffness: float, stick_speed: float
    ) -> None:
        self.plane, self.G, self.Q, self.dt = plane, Y_samples, Q, dt
        self.k, self.stick_speed = float(stiffness), float(stick_speed)
        self.R = ground_frame(np.asarray(plane.normal, dtype=np.float64))
        self._factors: dict[bytes, tuple] = {}  # normal-column factors per active set, reused across steps

    def heights(self, Z: np.ndarray) -> np.ndarray:
        """n . x (k,) of the samples for Z (q, 3)."""
        return self.G @ (Z @ self.R[:, 2])

    def normal_forces(self, Z: np.ndarray) -> np.ndarray:
        """The penalty's push f_n >= 0 (k,) on each sample (N)."""
        return self.k * np.maximum(self.plane.height - self.heights(Z), 0.0)

    def drag(self, Z_now: np.ndarray, Z_prev: np.ndarray, forces: np.ndarray | None) -> np.ndarray:
        """Friction's drag coefficients c (k,) (N s/m) for the next step, from the last step's forces and slide."""
        if forces is None:
            return np.zeros(len(self.G))
        v = (self.G @ ((Z_now - Z_prev) @ self.R[:, :2])) / self.dt  # (k, 2) tangential velocities
        speed = np.maximum(np.linalg.norm(v, axis=1), self.stick_speed)
        return self.plane.friction * forces / speed

    def step(self, Z_now: np.ndarray, c: np.ndarray) -> ContactStep:
        """The contact of one step from Z_now (q, 3) with friction drag c (k,) fixed for it."""
        return ContactStep(self, Z_now, c)

    def normal_factor(self, active: np.ndarray) -> tuple:
        key = active.tobytes()
        if key not in self._factors:
            Ga = self.G[active]
            self._factors[key] = sla.cho_factor(self.Q + self.k * (Ga.T @ Ga))
            if len(self._factors) > 4096:  # a long rollout visits many sets; keep memory bounded
                self._factors.pop(next(iter(self._factors)))
        return self._factors[key]


class ContactStep:
    """One step's global solve with contact: minimises 1/2 tr(Z^T Q Z) - tr(Z^T F) + contact energy."""

    def __init__(self, contact: GroundContact, Z_now: np.ndarray, c: np.ndarray) -> None:
        self.contact, self.c = contact, c
        G, h = contact.G, contact.dt
        self.Zg_now = Z_now @ contact.R
        D = G.T @ (c[:, None] * G) / h  # (q, q): the drag's Hessian on each tangential column
        self.D = D
        self.tangent = sla.cho_factor(contact.Q + D)
        self.tangent_rhs = D @ self.Zg_now[:, :2]
        self.active = contact.heights(Z_now) < contact.plane.height

    def solve(self, F: np.ndarray) -> np.ndarray:
        """Z (q, 3) for the linear term F (q, 3)."""
        ct = self.contact
        Fg = F @ ct.R
        tangential = sla.cho_solve(self.tangent, Fg[:, :2] + self.tangent_rhs)
        f = Fg[:, 2]
        active, z = self.active, np.zeros_like(f)  # the loop runs at least once
        for _ in range(NEWTON_PASSES):  # semi-smooth Newton: solve on the set, re-read the set, until it holds
            z = sla.cho_solve(ct.normal_factor(active), f + ct.k * ct.plane.height * ct.G[active].sum(axis=0))
            now = ct.G @ z < ct.plane.height
            if np.array_equal(now, active):
                break
            active = now
        self.active = active
        return np.column_stack([tangential, z]) @ ct.R.T

    def energy(self, Z: np.ndarray) -> float:
        """The penalty's and the drag's energy (J) at Z (q, 3)."""
        ct = self.contact
        Zg = Z @ ct.R
        pen = np.maximum(ct.plane.height - ct.G @ Zg[:, 2], 0.0)
        slide = ct.G @ (Zg[:, :2] - self.Zg_now[:, :2])
        return float(0.5 * ct.k * pen @ pen + 0.5 * (self.c / ct.dt) @ (slide**2).sum(axis=1))
