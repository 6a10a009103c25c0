"""One-sided contact between body parts of the same character: skin that presses on skin, and lets go.

Pairs are found per step among the tet mesh's boundary vertices, where the
flesh would be if it held still (the rig's positions plus the secondary
motion now): two vertices closer than RADIUS of the character's size (plus
SPEED times the last step's fastest secondary motion), of
different body parts (the bone that weighs most on each), whose outward
normals face each other (cosine below FACING) and that lie apart on the rest
shape (farther than APART times the radius: the skin around a joint is
neighbours, not contact).  Each pair (s, t) holds

    n . (x_s - x_t) >= 0,     n = (n_t - n_s) / |n_t - n_s|

(s stays on the outside of t's surface) with the one-sided penalty of
:mod:`core.contact.penalty`, a row n (x) (Y_s - Y_t): the skin may separate
and slide (no friction between parts), never press into itself.  The rig
wins as for colliders: where the bones themselves close the gap, the
secondary motion may not close it further but is not pushed apart either.
Only vertex against vertex is held; the skin between vertices may graze.
This is the one-sided alternative to the training poses' stick contact
(:mod:`core.posespace`), which stays an option.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..geometry.size import character_size
from ..geometry.tetmesh import boundary_faces
from ..model.rig import lbs_basis, rig_matrix
from ..subspace.reduced import ReducedModel
from .penalty import ContactRows
from .sample_rows import stacked_rows

RADIUS = 0.05
FACING = 0.6
APART = 2.0
SPEED = 3.0


class BodyPairs:
    """The boundary of a reduced model with its parts, and the pair rows of each step (module doc).

    stiffness: the penalty per pair (N/m), the surface samples' (:class:`SurfaceContact`).
    """

    def __init__(self, model: ReducedModel, stiffness: float) -> None:
        F = boundary_faces(model.T)
        self.vertices = np.unique(F)
        self.F = np.searchsorted(self.vertices, F)  # faces over the boundary's own numbering
        X = model.X[self.vertices]
        self.Y = model.basis(model.weights[self.vertices], X)
        W = model.rig_weights
        self.lbs = None if W is None else lbs_basis(W[self.vertices], X)
        self.parts = np.zeros(len(X), dtype=np.int64) if W is None else np.argmax(W[self.vertices], axis=1)
        self.rest = X
        self.radius = RADIUS * character_size(model.X)
        self.k = float(stiffness)

    def rig_positions(self, p: np.ndarray | None = None, x_rig: np.ndarray | None = None) -> np.ndarray:
        """The boundary's rig positions (nb, 3) for LBS parameters p or the tet vertices' x_rig (n, 3)."""
        if x_rig is not None:
            return np.asarray(x_rig, dtype=np.float64)[self.vertices]
        assert self.lbs is not None and p is not None
        return self.lbs @ rig_matrix(p)

    def normals(self, x: np.ndarray) -> np.ndarray:
        """Area-weighted outward vertex normals (nb, 3) of the boundary at positions x (nb, 3)."""
        a, b, c = x[self.F[:, 0]], x[self.F[:, 1]], x[self.F[:, 2]]
        fn = np.cross(b - a, c - a)
        n = np.zeros_like(x)
        for j in range(3):
            np.add.at(n, self.F[:, j], fn)
        return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)

    def pairs(self, x: np.ndarray, radius: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s (a,), t (a,), n (a, 3)): the facing pairs of different parts at positions x (nb, 3), closer than
        ``radius`` (m; default the base RADIUS of the size)."""
        found = cKDTree(x).query_pairs(self.radius if radius is None else radius, output_type="ndarray")
        if len(found) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3))
        s, t = found[:, 0], found[:, 1]
        normal = self.normals(x)
        keep = (self.parts[s] != self.parts[t]) & (np.einsum("ij,ij->i", normal[s], normal[t]) < FACING)
        keep &= np.linalg.norm(self.rest[s] - self.rest[t], axis=1) > APART * self.radius
        s, t = s[keep], t[keep]
        n = normal[t] - normal[s]
        return s, t, n / np.linalg.norm(n, axis=1, keepdims=True)

    def rows(self, x_rig: np.ndarray, z: np.ndarray, z_prev: np.ndarray) -> ContactRows | None:
        """The step's pair rows for the boundary's rig positions x_rig (nb, 3) and the state now and one step
        before, z and z_prev (3, q).  The search reaches SPEED times the fastest secondary motion of the
        last step beyond the base radius: a whipping tip does not skip over the skin it hits."""
        fastest = float(np.sqrt((((z - z_prev) @ self.Y.T) ** 2).sum(axis=0).max()))
        x = x_rig + self.Y @ z.T
        s, t, n = self.pairs(x, self.radius + SPEED * fastest)
        # Pairs across the skin, not along it: within the base radius of each other's normal line, and the
        # rig not far behind the other's surface (that is the far side of a limb, not contact).
        d = x[s] - x[t]
        along = np.einsum("ij,ij->i", n, d)
        rig_gap = np.einsum("ij,ij->i", n, x_rig[s] - x_rig[t])
        keep = (np.linalg.norm(d - along[:, None] * n, axis=1) <= self.radius) & (rig_gap >= -self.radius)
        s, t, n, rig_gap = s[keep], t[keep], n[keep], rig_gap[keep]
        if len(s) == 0:
            return None
        J = stacked_rows(self.Y, s, n) - stacked_rows(self.Y, t, n)
        b = np.minimum(-rig_gap, 0.0)  # the rig wins where it closes the gap itself
        return ContactRows(J, b, np.full(len(s), self.k), np.ones(len(s), dtype=bool))
