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
from .pairs import BodyPairs
from .penalty import ContactRows, concatenate, stacked_rows

MAX_SAMPLES = 2000
STIFFNESS = 400.0
MARGIN = 0.05
STICK = 1e-5
RELINEARISE = 1e-3
# A rig sample less deep than this share of the size in an obstacle rests on its face (round-off).
ROUNDOFF = 1e-9
PASSES = 3


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
        W = model.rig_weights
        self.lbs = None if W is None else lbs_basis(W[self.samples], model.X[self.samples])  # (k, 4b)
        mass = float(model.masses.sum()) / len(self.samples)
        self.k = self.settings.stiffness * mass / (self.h * self.h)
        self.pairs = BodyPairs(model, self.k) if self.settings.self_contact else None

    def rebased(self, Y: np.ndarray, pairs_Y: np.ndarray | None = None) -> SurfaceContact:
        """This contact on another subspace of the same mesh (a pose-space blend): the samples' basis rows Y
        (k, q) and the body pairs' (v, q) replaced; samples, stiffness and the rig's rows stay."""
        new = copy.copy(self)
        new.Y = Y
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

    def normal_rows(
        self, x_rig: np.ndarray, at: np.ndarray, obstacles: list[Ground | MeshCollider], margin: float
    ) -> tuple[ContactRows, np.ndarray, np.ndarray] | None:
        """(the one-sided rows, their samples (a,), normals (a, 3)) of the obstacles linearised at
        x_rig + u(at), at (3, q); None: no obstacle within ``margin`` (m)."""
        on_face = ROUNDOFF * self.size
        planes, rig_inside = obstacle_planes(obstacles, x_rig + self.Y @ at.T, margin, x_rig, on_face)
        if len(planes.index) == 0:
            return None
        i, n = planes.index, planes.normal
        b = planes.depth(x_rig)
        b[rig_inside] = np.minimum(b[rig_inside], 0.0)  # the rig wins where it is inside (module doc of penalty)
        rows = ContactRows(stacked_rows(self.Y, i, n), b, np.full(len(i), self.k), np.ones(len(i), dtype=bool))
        return rows, i, n

    def violated(self, x_rig: np.ndarray, Z: np.ndarray, obstacles: list[Ground | MeshCollider]) -> ContactRows | None:
        """Rows for the planes at a step's solution Z (3, q) that it violates by more than RELINEARISE of the
        size (a sample that crossed onto another face of a collider during the step); None: none."""
        found = self.normal_rows(x_rig, Z, obstacles, 0.0)
        if found is None:
            return None
        rows = found[0]
        deep = rows.b - rows.J @ Z.ravel() > RELINEARISE * self.size
        if not deep.any():
            return None
        return ContactRows(rows.J[deep], rows.b[deep], rows.w[deep], rows.one_sided[deep])

    def rows(
        self, x_rig: np.ndarray, z: np.ndarray, z_prev: np.ndarray, obstacles: list[Ground | MeshCollider]
    ) -> ContactRows | None:
        """One step's rows (None: nothing near) for the samples' rig positions x_rig (k, 3) at the step's end.

        z, z_prev: the state now and one step before (3, q).  The obstacles are
        linearised at x_rig + u(z): where the flesh would be if it held still.
        """
        found = self.normal_rows(x_rig, z, obstacles, self.settings.margin * self.size)
        if found is None:
            return None
        normal, i, n = found
        mu = self.settings.friction
        press = normal.forces(z)
        on = press > 0.0
        if mu <= 0.0 or not on.any():
            return normal
        u_now = self.Y @ z.T  # (k, 3)
        i, n, press = i[on], n[on], press[on]
        T = _tangents(n).reshape(-1, 3)  # (2a, 3): two tangents per pressed sample
        i2 = np.repeat(i, 2)
        slide = np.einsum("ij,ij->i", T, (u_now - self.Y @ z_prev.T)[i2]).reshape(-1, 2)
        # The drag c/h with c = mu f_n / speed and speed = slide / h: mu f_n / slide (N/m), slide >= the grip's.
        w = np.repeat(mu * press / np.maximum(np.linalg.norm(slide, axis=1), self.settings.stick * self.size), 2)
        b_t = np.einsum("ij,ij->i", T, u_now[i2])
        friction = ContactRows(stacked_rows(self.Y, i2, T), b_t, w, np.zeros(len(i2), dtype=bool))
        return concatenate([normal, friction])


def _tangents(n: np.ndarray) -> np.ndarray:
    """(a, 2, 3) orthonormal tangents of unit normals n (a, 3)."""
    axis = np.eye(3)[np.argmin(np.abs(n), axis=1)]
    t1 = np.cross(n, axis)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return np.stack([t1, np.cross(n, t1)], axis=1)
