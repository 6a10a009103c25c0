"""The ground and colliders pushing the physics skin out: a one-sided penalty on its surface (issue 30, item 4).

Each free surface vertex s of the tet mesh near an obstacle gets the obstacle's
tangent plane there (:mod:`core.contact.colliders`: unit normal n_s out of the
obstacle, offset c_s) and the energy k_s / 2 (c_s - n_s . x_s)_+^2.  The planes
are taken at the start of each Gauss-Newton step of
:meth:`core.physskin.solve.PhysicsSkin.volume_solve` and held through its line
search, so within a step the penalty is one convex function and the step is a
minimisation: its gradient joins the step's right-hand side and its Gauss-Newton
Hessian k_s n_s n_s^T (on the pressed vertices) joins the conjugate gradients'
product.  Pinned vertices are not in the set: the rig wins where it pins.

Stiffness is scale-free: k_s is STIFFNESS times vertex s's own diagonal of the
Laplacian weighted by 2 mu (the soft pins' rule), so a vertex pressed by d
settles about d / STIFFNESS inside whatever the flesh's size and modulus.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..contact.colliders import Ground, MeshCollider, Planes, obstacle_planes

# A pressed vertex settles about 1 / STIFFNESS of the push inside (the flesh's own stiffness over the
# penalty's); 1e2 keeps the conjugate gradients, preconditioned without the penalty, near their
# usual count while the box test's penetration stays under 1 % of the limb's thickness.
STIFFNESS = 1e2
# Planes are looked up for vertices this share of the mesh's size from an obstacle: a step moves
# the flesh by less, so a vertex about to touch already has its plane.
MARGIN = 0.05


@dataclass(frozen=True, eq=False)  # holds arrays: never compared
class SkinContact:
    """The physics skin's contact at one frame.

    obstacles: the ground and colliders at that frame; vertices (s,): the free surface
    vertices the penalty acts on; slots (s,): their rows among the solve's free vertices;
    stiffness (s,) N/m; margin: metres.
    """

    obstacles: list[Ground | MeshCollider]
    vertices: np.ndarray
    slots: np.ndarray
    stiffness: np.ndarray
    margin: float

    @classmethod
    def build(cls, skin, obstacles: list[Ground | MeshCollider]) -> SkinContact:  # type: ignore[no-untyped-def]
        """For a :class:`core.physskin.solve.PhysicsSkin` and the obstacles at a frame."""
        mesh = skin.mesh
        surface = np.setdiff1d(mesh.boundary_vertices(), skin.pins if not skin.soft else np.zeros(0, np.int64))
        slots = np.searchsorted(skin.free_vertices, surface)
        k = STIFFNESS * skin.Ls.diagonal()[surface]
        return cls(list(obstacles), surface, slots, k, MARGIN * mesh.size())

    def planes(self, x: np.ndarray) -> Planes:
        """The obstacles' planes at positions x (n, 3); Planes.index counts among ``vertices``."""
        return obstacle_planes(self.obstacles, x[self.vertices], self.margin)[0]

    def _pressed(self, planes: Planes, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(depth (a,) capped below at 0, stiffness (a,)) of the planes' rows at x (n, 3)."""
        return np.maximum(planes.depth(x[self.vertices]), 0.0), self.stiffness[planes.index]

    def energy(self, planes: Planes, x: np.ndarray) -> float:
        """sum k/2 (c - n . x)_+^2 (J) at positions x (n, 3)."""
        depth, k = self._pressed(planes, x)
        return 0.5 * float(k @ (depth * depth))

    def gradient(self, planes: Planes, x: np.ndarray) -> np.ndarray:
        """The penalty's gradient (n, 3) at x (n, 3): -k (c - n . x)_+ n at each pressed vertex."""
        depth, k = self._pressed(planes, x)
        out = np.zeros_like(x)
        np.add.at(out, self.vertices[planes.index], -(k * depth)[:, None] * planes.normal)
        return out

    def product(self, planes: Planes, x: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
        """v (f, 3) on the free vertices -> sum over pressed rows k n n^T v: the penalty's Gauss-Newton
        Hessian at x (n, 3), or None when nothing is pressed."""
        depth, k = self._pressed(planes, x)
        on = depth > 0.0
        if not on.any():
            return None
        rows, n, w = self.slots[planes.index[on]], planes.normal[on], k[on]

        def apply(v: np.ndarray) -> np.ndarray:
            out = np.zeros_like(v)
            np.add.at(out, rows, (w * np.einsum("ai,ai->a", n, v[rows]))[:, None] * n)
            return out

        return apply
