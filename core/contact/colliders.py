"""What the surface can touch at one step: a ground plane and closed triangle meshes, queried at sample points.

A query returns, for every sample point near an obstacle, the obstacle's
tangent plane there: a unit normal n (pointing out of the obstacle) and the
plane's offset c = n . x_surface, so that the sample is outside while
n . x >= c.  The solver then holds n . x >= c during the step (a one-sided
penalty, :mod:`core.contact.penalty`): the plane is the obstacle linearised at
the sample, exact for the ground and for a flat face.

Meshes are given in world coordinates per step (an animated collider, or a
rigid one moved by its matrix: either way the vertices at that time), so a
rigid, a scaled or a deforming collider are the same thing here.  Inside or
outside comes from the generalised winding number (robust to small holes);
the closest point from Ericson's region test over the nearest triangles.  No
Python loop runs over points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry.surface import closest_points_on_triangles
from ..geometry.winding import winding_numbers

# Meshes of at most this many triangles are searched whole for each point; larger ones among the
# NEAREST triangles by centroid (exact near the surface, which is where contact happens).
WHOLE_SEARCH = 64
NEAREST = 32


@dataclass(frozen=True)
class Planes:
    """Contact planes for some sample points: the obstacles linearised at them.

    index: (a,) which sample; normal: (a, 3) unit, out of the obstacle;
    offset: (a,) c with the sample outside while normal . x >= c.
    """

    index: np.ndarray
    normal: np.ndarray
    offset: np.ndarray

    @staticmethod
    def none() -> Planes:
        return Planes(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0))

    def depth(self, points: np.ndarray) -> np.ndarray:
        """How far (a,) each sample of ``points`` (k, 3) lies inside its plane (negative: outside)."""
        return self.offset - np.einsum("ij,ij->i", self.normal, points[self.index])


@dataclass(frozen=True)
class Ground:
    """An infinite plane: normal (3,) (normalised here) and height = normal . x on it."""

    height: float = 0.0
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)

    def planes(self, points: np.ndarray, margin: float) -> Planes:
        """The plane for every point (k, 3) closer to it than ``margin`` (m), or below it."""
        n = np.asarray(self.normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        near = np.flatnonzero(points @ n - self.height < margin)
        return Planes(near, np.tile(n, (len(near), 1)), np.full(len(near), float(self.height)))


@dataclass(frozen=True)
class MeshCollider:
    """A closed triangle mesh at one step: V (v, 3) world positions, F (f, 3) triangles (any orientation)."""

    V: np.ndarray
    F: np.ndarray

    def planes(self, points: np.ndarray, margin: float) -> Planes:
        """Tangent planes (see the module doc) for the points (k, 3) inside or within ``margin`` (m) of the mesh.

        A collider with no extent (scaled to zero) or no triangles touches nothing.
        """
        V, F = np.asarray(self.V, dtype=np.float64), np.asarray(self.F, dtype=np.int64)
        if len(F) == 0 or len(points) == 0 or not np.isfinite(V).all() or np.ptp(V, axis=0).max() <= 0.0:
            return Planes.none()
        lo, hi = V.min(axis=0) - margin, V.max(axis=0) + margin
        box = np.flatnonzero(((points >= lo) & (points <= hi)).all(axis=1))  # cheap cull first
        if len(box) == 0:
            return Planes.none()
        P = points[box]
        closest, face_normal = _closest(V, F, P)
        inside = np.abs(winding_numbers(V, F, P)) > 0.5
        gap = P - closest
        dist = np.linalg.norm(gap, axis=1)
        keep = inside | (dist < margin)
        # Out of the obstacle: from the closest point towards an outside sample, away from it for an
        # inside one; a sample on the surface (no direction) takes the face's normal, turned outwards.
        with np.errstate(invalid="ignore", divide="ignore"):
            n = np.where(inside[:, None], -gap, gap) / dist[:, None]
        flat = ~(dist > 1e-12 * max(1.0, float(np.ptp(V, axis=0).max())))
        n[flat] = face_normal[flat] * _outward_sign(V, F)
        keep &= np.isfinite(n).all(axis=1)
        return Planes(box[keep], n[keep], np.einsum("ij,ij->i", n[keep], closest[keep]))


def _closest(V: np.ndarray, F: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(closest points (k, 3), their faces' unit normals (k, 3)) on the mesh for points P (k, 3)."""
    if len(F) <= WHOLE_SEARCH:
        cand = np.broadcast_to(np.arange(len(F)), (len(P), len(F)))
    else:
        from scipy.spatial import cKDTree

        _, cand = cKDTree(V[F].mean(axis=1)).query(P, k=NEAREST)
    k = cand.shape[1]
    flat = np.ascontiguousarray(cand).ravel()
    Pr = np.repeat(P, k, axis=0)
    bary = closest_points_on_triangles(Pr, V[F[flat, 0]], V[F[flat, 1]], V[F[flat, 2]])
    pts = np.einsum("ij,ijk->ik", bary, V[F[flat]])
    best = np.argmin(((pts - Pr) ** 2).sum(axis=1).reshape(len(P), k), axis=1)
    sel = np.arange(len(P)) * k + best
    tri = V[F[flat[sel]]]
    fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    with np.errstate(invalid="ignore", divide="ignore"):
        fn = fn / np.linalg.norm(fn, axis=1, keepdims=True)
    return pts[sel], fn


def _outward_sign(V: np.ndarray, F: np.ndarray) -> float:
    """+1 when the faces wind outwards (positive enclosed volume), else -1."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return 1.0 if np.einsum("ij,ij->i", np.cross(a, b), c).sum() >= 0.0 else -1.0


def obstacle_planes(
    obstacles: list[Ground | MeshCollider],
    points: np.ndarray,
    margin: float,
    inside: np.ndarray | None = None,
    tolerance: float = 0.0,
) -> tuple[Planes, np.ndarray]:
    """(all obstacles' planes for the points (k, 3), concatenated, and (a,) which of them hold a point of
    ``inside`` (k, 3) inside their obstacle).  A sample near two obstacles has two planes.

    ``inside`` (default: ``points``) are other positions of the same samples: the simulator asks whether
    the rig itself puts a sample inside (the rig wins there, :mod:`core.contact.penalty`); deeper than
    ``tolerance`` (m) counts, so that a rig resting exactly on a face (round-off) is outside.
    """
    found, held = [], []
    for o in obstacles:
        planes = o.planes(points, margin)
        found.append(planes)
        at = points if inside is None else inside
        own = o.planes(at[planes.index], 0.0)
        flags = np.zeros(len(planes.index), dtype=bool)
        flags[own.index[own.depth(at[planes.index]) > tolerance]] = True
        held.append(flags)
    if not found:
        return Planes.none(), np.zeros(0, dtype=bool)
    planes = Planes(
        np.concatenate([p.index for p in found]),
        np.concatenate([p.normal for p in found]).reshape(-1, 3),
        np.concatenate([p.offset for p in found]),
    )
    return planes, np.concatenate(held)
