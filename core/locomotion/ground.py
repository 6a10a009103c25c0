"""Ground contact at sample vertices, as linear equality constraints on reduced coordinates.

Reusable beyond locomotion: anything whose positions are ``x = Y Z`` (Y: n x q
scalar basis, Z: q x 3) can hand sample rows Y[samples] (k x q) and a plane to
:func:`contact_constraints`, and minimise its step's quadratic on the
constrained set with :class:`ConstrainedQuadratic` (the contact issue can use
the same pieces with a collider's planes).

Model (seed 002, App. E, made an exact constrained minimisation).  A sample in
contact keeps its normal coordinate on the plane (``n . x = height``: no
penetration, and a penetration is pushed out in one step) and its tangential
velocity damped (``t . x_new = t . x_now + u t . (x_now - x_prev)``, the
seed's damping friction: u = 0 sticks, u = 1 slides freely).  The paper fixes
f_c by least squares inside each iteration, which changes the feasible set as
the iteration goes; here the constraint set is fixed for the whole step (its
right-hand side projected once onto what the subspace can reach), so every
global step is the exact minimiser on one affine set and the local-global
energy cannot rise.  Contacts are chosen by an active set: a sample joins when
its predicted position is below the plane, and leaves when its normal
multiplier says the ground would pull (first pass only, so the set cannot cycle).

Vector layout: z = Z.T.ravel() (3q,), z[i q + u] = Z[u, i]; a row for sample s
and direction d is kron(d, Y_samples[s]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

# Singular values of a constraint matrix below this share of its largest are dependent rows.
RANK_TOL = 1e-10


@dataclass(frozen=True)
class GroundPlane:
    """normal: (3,) unit, pointing out of the ground; height: n . x on the plane (m); friction u in [0, 1]."""

    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    height: float = 0.0
    friction: float = 0.0


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


def contact_constraints(
    plane: GroundPlane, Y_samples: np.ndarray, active: np.ndarray, Z_now: np.ndarray, Z_prev: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows C (3a, 3q) and targets b (3a,) for the a active samples: normal rows first, then two tangents each.

    Y_samples: (k, q); active: (k,) bool; Z_now, Z_prev: (q, 3) this and the previous step.
    """
    n = np.asarray(plane.normal, dtype=np.float64)
    Ys = Y_samples[active]  # (a, q)
    dirs = np.vstack([n[None, :], tangent_basis(n)])  # (3, 3)
    # rows[d, s] = kron(dirs[d], Ys[s]) in the z = Z.T.ravel() layout
    C = (dirs[:, None, :, None] * Ys[None, :, None, :]).reshape(3 * len(Ys), -1)
    x_now, x_prev = Ys @ Z_now, Ys @ Z_prev  # (a, 3)
    tn = dirs[1:]
    b_normal = np.full(len(Ys), plane.height)
    b_tangent = (x_now @ tn.T + plane.friction * (x_now - x_prev) @ tn.T).T  # (2, a)
    return C, np.concatenate([b_normal, b_tangent.ravel()])


class ConstrainedQuadratic:
    """Minimiser of 1/2 tr(Z^T Q Z) - tr(Z^T F) over Z (q, 3) with C z = b, for many F.

    Q: (q, q) SPD; C: (c, 3q) rows in the z = Z.T.ravel() layout (may be
    dependent); b: (c,).  Dependent or inconsistent rows: b is replaced once by
    its least-squares projection onto what C can reach, so the feasible set is
    one fixed affine set and each solve is its exact minimiser.  z = z_p + N w
    with N the null space of C; the reduced matrix N^T (I_3 (x) Q) N is
    factored once.
    """

    def __init__(self, Q: np.ndarray, C: np.ndarray | None = None, b: np.ndarray | None = None) -> None:
        self.q = Q.shape[0]
        self.Q = Q
        if C is None or len(C) == 0:
            self.N = None
            self.factor = sla.cho_factor(Q)
            return
        U, sv, Vt = np.linalg.svd(C, full_matrices=True)
        rank = int((sv > RANK_TOL * sv[0]).sum())
        self.z_p = Vt[:rank].T @ ((U[:, :rank].T @ b) / sv[:rank])
        self.N = Vt[rank:].T  # (3q, 3q - rank)
        q = self.q
        QN = np.concatenate([Q @ self.N[i * q : (i + 1) * q] for i in range(3)])  # (I3 (x) Q) N, three blocks
        self.QN = QN
        self.Qz_p = np.concatenate([Q @ self.z_p[i * q : (i + 1) * q] for i in range(3)])
        self.factor = sla.cho_factor(self.N.T @ QN) if self.N.shape[1] else None

    def solve(self, F: np.ndarray) -> np.ndarray:
        """Z (q, 3) for the linear term F (q, 3)."""
        if self.N is None:
            return sla.cho_solve(self.factor, F)
        z = self.z_p.copy()
        if self.factor is not None:
            z += self.N @ sla.cho_solve(self.factor, self.N.T @ (F.T.ravel() - self.Qz_p))
        return z.reshape(3, self.q).T


def multipliers(C: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """lambda (c,) with C^T lambda closest to the energy gradient (3q,) at a constrained minimum.

    A normal multiplier > 0 means the body presses on the ground (raising the
    sample would raise the energy); < 0 means the ground would have to pull.
    """
    return np.linalg.lstsq(C.T, gradient, rcond=None)[0]
