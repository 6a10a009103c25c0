"""Skin-on-skin contact in a training pose, and the stick constraint it puts on the modes
(Xu & Barbič, §5: contact-aware bases).

Where a pose presses two parts of the skin together (an elbow crease, a belly on
the thighs, a tail curled onto the body), the secondary motion must not push one
into the other.  The seed makes that pose's basis satisfy bilateral constraints
at the contact: *stick* (S_k u = 0, the contact vertices do not move) or *slide*
(N_k^T S_k u = 0, they move only tangentially).  A skinning basis moves vertex v
by Σ_q w_q(v) T_q [X_v; 1] with each T_q a free affine map, so u_v = 0 for every
T_q exactly when every weight vanishes there: stick is the weight-space row
e_v^T W = 0, one per contact vertex, stacked under the complementarity rows
(:func:`core.model.constraint.stick_rows`).  A slide row couples the 12 entries
of each T_q through the normal, which scalar weight rows cannot express; it
would need a constraint on the reduced coordinates inside the solver, so only
stick is built.

Detection: surface vertices closer than ``distance`` in the posed shape whose
rest positions are at least ``separation`` times farther apart: two sheets of
skin the pose brought together, not neighbours along the same sheet.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..geometry.tetmesh import boundary_faces

# Rest distance over posed distance above which two touching surface vertices count as
# two sheets pressed together, not one sheet's neighbours: a crease's two sides start
# several edges apart, a sheet's own vertices are at most a couple of edges apart.
SEPARATION = 3.0


def surface_edge_length(X: np.ndarray, T: np.ndarray) -> float:
    """Mean edge length of the tet mesh's boundary triangles (X (n, 3), T (t, 4)): the contact scale."""
    F = boundary_faces(T)
    e = np.concatenate([X[F[:, 1]] - X[F[:, 0]], X[F[:, 2]] - X[F[:, 1]], X[F[:, 0]] - X[F[:, 2]]])
    return float(np.linalg.norm(e, axis=1).mean())


def contact_vertices(
    X: np.ndarray, posed: np.ndarray, T: np.ndarray, distance: float, separation: float = SEPARATION
) -> np.ndarray:
    """Sorted surface vertex indices (c,) in skin-on-skin contact in the posed shape.

    X, posed: rest and posed tet vertex positions (n, 3); T (t, 4).  A pair of surface
    vertices is in contact when posed closer than ``distance`` and rest farther apart than
    ``separation * distance``; both vertices of every such pair are returned.
    """
    surface = np.unique(boundary_faces(T))
    tree = cKDTree(np.asarray(posed, dtype=np.float64)[surface])
    pairs = tree.query_pairs(distance, output_type="ndarray")
    if len(pairs) == 0:
        return np.zeros(0, dtype=np.int64)
    a, b = surface[pairs[:, 0]], surface[pairs[:, 1]]
    apart = np.linalg.norm(X[a] - X[b], axis=1) > separation * distance
    return np.unique(np.concatenate([a[apart], b[apart]]))
