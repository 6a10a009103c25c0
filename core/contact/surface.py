"""The jiggle's side of contact: sample points on the simulated surface and the rows of one step.

Samples are boundary vertices of the tet mesh (all of them up to
MAX_SAMPLES, else spread by farthest-point sampling); each carries its
basis row Y_s, so its secondary displacement is u_s = Z Y_s, and, for an
LBS rig, its skinning row, so its rig position is cheap per step.

Scale-free settings.  The penalty stiffness per sample is STIFFNESS times
the inertia of the sample's share of the mass over one step, (M / k) / h^2:
a sample arriving at speed v stops within about v h / STIFFNESS, and the
character's own weight sinks about g h^2 / STIFFNESS (5 micrometres at 24
fps with two sub-steps), whatever the import scale or the material's
pascals.  Obstacles are searched within MARGIN of the character's size;
friction grips below STICK of the size per step.  A sample that crosses
onto another face of a collider within one step (a box's edge) is caught by
re-linearising at the step's solution: planes it violates by more than
RELINEARISE of the size join the step's rows and the step is solved again,
at most PASSES times.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..geometry.size import character_size
from ..model.rig import lbs_basis, rig_matrix
from ..subspace.reduced import ReducedModel
from .colliders import Ground, MeshCollider, obstacle_planes
from .ground import sample_vertices
from .held import HeldRows
from .pairs import BodyPairs
from .penalty import ContactRows, concatenate
from .sample_rows import stacked_rows

MAX_SAMPLES = 2000
STIFFNESS = 400.0
MARGIN = 0.05
STICK = 1e-5
RELINEARISE = 1e-3
# A rig sample less deep than this share of the size in an obstacle rests on its face (round-off).
ROUNDOFF = 1e-9
PASSES = 3
# A step's system gets the rows of the samples within REACH times the last step's motion of their plane, or
# within HOLD of the size; the others are held back (core/contact/held.py).
REACH = 2.0
HOLD = 1e-3


@dataclass(frozen=True)
class ContactSettings:
    """friction: Coulomb mu (0: frictionless); stiffness, margin, stick: see the module doc; self_contact:
    body parts of the character push each other out too (:mod:`core.contact.pairs`)."""

    friction: float = 0.5
    self_contact: bool = False
    stiffness: float = STIFFNESS
    margin: float = MARGIN
    stick: float = STICK


class SurfaceContact:
    """Sample points on a reduced model's surface and the contact rows of each step (module doc).

    model: the reduced model; h: the time step (s); samples: boundary vertex ids
    (k,) to use (default: chosen here).
    """

    def __init__(
        self,
        model: ReducedModel,
        h: float,
        settings: ContactSettings | None = None,
        samples: np.ndarray | None = None,
    ) -> None:
        self.settings = settings or ContactSettings()
        if samples is None:
            boundary = model.mesh().boundary_vertices()
            samples = boundary if len(boundary) <= MAX_SAMPLES else sample_vertices(model.X, boundary, MAX_SAMPLES)
        self.samples = np.asarray(samples, dtype=np.int64)
        self.h = float(h)
        self.size = character_size(model.X)
        self.Y = model.basis(model.weights[self.samples], model.X[self.samples])  # (k, q)
        self.Y_norm = np.linalg.norm(self.Y, axis=1)  # (k,): how far a unit change of z moves each sample, at most
        W = model.rig_weights
        self.lbs = None if W is None else lbs_basis(W[self.samples], model.X[self.samples])  # (k, 4b)
        mass = float(model.masses.sum()) / len(self.samples)
        self.k = self.settings.stiffness * mass / (self.h * self.h)
        self.pairs = BodyPairs(model, self.k) if self.settings.self_contact else None
        self._last_motion: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (Y, z, u(z)) of ``rows``

    def rebased(self, Y: np.ndarray, pairs_Y: np.ndarray | None = None) -> SurfaceContact:
        """This contact on another subspace of the same mesh (a pose-space blend): the samples' basis rows Y
        (k, q) and the body pairs' (v, q) replaced; samples, stiffness and the rig's rows stay."""
        new = copy.copy(self)
        new.Y = Y
        new.Y_norm = np.linalg.norm(Y, axis=1)
        if self.pairs is not None and pairs_Y is not None:
            new.pairs = copy.copy(self.pairs)
            new.pairs.Y = pairs_Y
        return new

    def step_rows(
        self,
        p: np.ndarray | None,
        x_rig: np.ndarray | None,
        z: np.ndarray,
        z_prev: np.ndarray,
        obstacles: list[Ground | MeshCollider] | None,
    ) -> ContactRows | None:
        """All of one step's rows (None: none): the obstacles' (``rows``) and the body parts' pairs.

        p or x_rig: the rig at the step's end (LBS parameters, or the tet vertices' positions (n, 3));
        z, z_prev: the state now and one step before (3, q).
        """
        found = [] if not obstacles else [self.rows(self.rig_positions(p, x_rig), z, z_prev, obstacles)]
        if self.pairs is not None:
            found.append(self.pairs.rows(self.pairs.rig_positions(p, x_rig), z, z_prev))
        parts = [f for f in found if f is not None]
        return None if not parts else parts[0] if len(parts) == 1 else concatenate(parts)

    def rig_positions(self, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> np.ndarray:
        """The samples' rig positions (k, 3) for LBS parameters p or the tet vertices' rig positions x_rig (n, 3)."""
        if x_rig is not None:
            return np.asarray(x_rig, dtype=np.float64)[self.samples]
        assert self.lbs is not None and p is not None
        return self.lbs @ rig_matrix(p)

    def _planes(
        self, x_rig: np.ndarray, u: np.ndarray, obstacles: list[Ground | MeshCollider], margin: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(samples (a,), normals (a, 3), targets b (a,)) of the normal rows of the obstacles linearised at
        x_rig + u, u (k, 3) the samples' secondary motion; None: no obstacle within ``margin`` (m)."""
        on_face = ROUNDOFF * self.size
        grounds = [o for o in obstacles if isinstance(o, Ground)]
        if len(grounds) == len(obstacles):
            return _ground_planes(grounds, x_rig, x_rig + u, margin, on_face)
        planes, rig_inside = obstacle_planes(obstacles, x_rig + u, margin, x_rig, on_face)
        if len(planes.index) == 0:
            return None
        b = planes.depth(x_rig)
        b[rig_inside] = np.minimum(b[rig_inside], 0.0)  # the rig wins where it is inside (module doc of penalty)
        return planes.index, planes.normal, b

    def violated(
        self, x_rig: np.ndarray, Z: np.ndarray, obstacles: list[Ground | MeshCollider], z: np.ndarray | None = None
    ) -> ContactRows | None:
        """Rows for the planes at a step's solution Z (3, q) that it violates by more than RELINEARISE of the
        size (a sample that crossed onto another face of a collider during the step); None: none.

        z: the step's start (3, q).  When ``rows`` was just asked at it, a ground is asked only about the
        samples that the step's motion |Z - z| could have taken that deep (the bound of
        :mod:`core.contact.held`), not about every sample; the rows found are the same.
        """
        u_now = self._motion_at(z)
        parts = []
        for o in obstacles:
            ids = None
            if isinstance(o, Ground) and u_now is not None and z is not None:
                ids = self._sinkable(o, x_rig, Z, u_now, float(np.linalg.norm(Z - z)))
            found = self._deep_rows(x_rig, Z, o, ids)
            if found is not None:
                parts.append(found)
        return None if not parts else parts[0] if len(parts) == 1 else concatenate(parts)

    def _deep_rows(
        self, x_rig: np.ndarray, Z: np.ndarray, obstacle: Ground | MeshCollider, ids: np.ndarray | None
    ) -> ContactRows | None:
        """``violated``'s rows for one obstacle, among the samples ``ids`` (default: all)."""
        if ids is None:
            found = self._planes(x_rig, self.Y @ Z.T, [obstacle], 0.0)
        else:
            found = None if len(ids) == 0 else self._planes(x_rig[ids], self.Y[ids] @ Z.T, [obstacle], 0.0)
        if found is None:
            return None
        i, n, b = found
        i = i if ids is None else ids[i]
        J = stacked_rows(self.Y, i, n)
        deep = b - J @ Z.ravel() > RELINEARISE * self.size
        if not deep.any():
            return None
        return ContactRows(J[deep], b[deep], np.full(int(deep.sum()), self.k), np.ones(int(deep.sum()), dtype=bool))

    def _sinkable(
        self, ground: Ground, x_rig: np.ndarray, Z: np.ndarray, u_now: np.ndarray, distance: float
    ) -> np.ndarray:
        """The samples (s,) whose row can be deeper than RELINEARISE of the size at Z (3, q), ahead of
        round-off: first those that a step moving z by ``distance`` (Frobenius) from where their secondary
        motion is u_now (k, 3) can have taken that deep (a loose bound), then those measured so at Z.  A
        row's target is at most the rig's depth, and at most ROUNDOFF of the size (the rig wins)."""
        n = np.asarray(ground.normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        b = np.minimum(ground.height - x_rig @ n, ROUNDOFF * self.size)
        deep = RELINEARISE * self.size * (1.0 - 1e-6) - 1e-9 * self.size  # round-off of both sides
        ids = np.flatnonzero(b - u_now @ n + distance * self.Y_norm * (1.0 + 1e-6) > deep)
        return ids[b[ids] - (self.Y[ids] @ Z.T) @ n > deep]

    def _motion_at(self, z: np.ndarray | None) -> np.ndarray | None:
        """The samples' secondary motion u (k, 3) at z (3, q) if ``rows`` last computed it there, else None."""
        last = self._last_motion
        if z is None or last is None or last[0] is not self.Y or not np.array_equal(last[1], z):
            return None
        return last[2]

    def rows(
        self, x_rig: np.ndarray, z: np.ndarray, z_prev: np.ndarray, obstacles: list[Ground | MeshCollider]
    ) -> ContactRows | None:
        """One step's rows (None: nothing near) for the samples' rig positions x_rig (k, 3) at the step's end.

        z, z_prev: the state now and one step before (3, q).  The obstacles are
        linearised at x_rig + u(z): where the flesh would be if it held still.
        Only the rows of samples pressed or near (within REACH times the last
        step's motion, or HOLD of the size) enter the step's system; the
        others are held back until an iterate might press them
        (:mod:`core.contact.held`).
        """
        u_now = self.Y @ z.T  # (k, 3)
        self._last_motion = (self.Y, np.array(z), u_now)  # for ``violated`` at the step's end
        found = self._planes(x_rig, u_now, obstacles, self.settings.margin * self.size)
        if found is None:
            return None
        i, n, b = found
        slack = np.einsum("ij,ij->i", n, u_now[i]) - b
        band = np.maximum(REACH * float(np.linalg.norm(z - z_prev)) * self.Y_norm[i], HOLD * self.size)
        enter, held = HeldRows.split(self.Y, self.Y_norm, i, n, b, self.k, z, slack, band)
        i, n, b = i[enter], n[enter], b[enter]
        normal = ContactRows(stacked_rows(self.Y, i, n), b, np.full(len(i), self.k), np.ones(len(i), dtype=bool), held)
        mu = self.settings.friction
        press = normal.forces(z)
        on = press > 0.0
        if mu <= 0.0 or not on.any():
            return normal
        i, n, press = i[on], n[on], press[on]
        T = _tangents(n).reshape(-1, 3)  # (2a, 3): two tangents per pressed sample
        i2 = np.repeat(i, 2)
        slide = np.einsum("ij,ij->i", T, u_now[i2] - self.Y[i2] @ z_prev.T).reshape(-1, 2)
        # The drag c/h with c = mu f_n / speed and speed = slide / h: mu f_n / slide (N/m), slide >= the grip's.
        w = np.repeat(mu * press / np.maximum(np.linalg.norm(slide, axis=1), self.settings.stick * self.size), 2)
        b_t = np.einsum("ij,ij->i", T, u_now[i2])
        friction = ContactRows(stacked_rows(self.Y, i2, T), b_t, w, np.zeros(len(i2), dtype=bool))
        return concatenate([normal, friction])


def _ground_planes(
    grounds: list[Ground], x_rig: np.ndarray, points: np.ndarray, margin: float, on_face: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``SurfaceContact._planes`` for grounds alone, the same arrays in fewer operations (a step's fixed
    cost): for each ground, the samples whose points (k, 3) lie within ``margin`` of it, its normal, and
    the targets b, the rig's depth x_rig (k, 3), 0 where the rig is deeper than ``on_face`` (the rig wins)."""
    index, normal, target = [], [], []
    for g in grounds:
        n = np.asarray(g.normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        near = np.flatnonzero(points @ n - g.height < margin)
        N = np.tile(n, (len(near), 1))
        b = float(g.height) - np.einsum("ij,ij->i", N, x_rig[near])
        b[b > on_face] = 0.0
        index.append(near)
        normal.append(N)
        target.append(b)
    if sum(len(i) for i in index) == 0:
        return None
    if len(grounds) == 1:
        return index[0], normal[0], target[0]
    return np.concatenate(index), np.concatenate(normal), np.concatenate(target)


def _tangents(n: np.ndarray) -> np.ndarray:
    """(a, 2, 3) orthonormal tangents of unit normals n (a, 3)."""
    axis = np.eye(3)[np.argmin(np.abs(n), axis=1)]
    t1 = np.cross(n, axis)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return np.stack([t1, np.cross(n, t1)], axis=1)
