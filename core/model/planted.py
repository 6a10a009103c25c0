"""Planted feet: the flesh the rig puts on the ground is held still (issue 31).

Measured on real characters (``core/validation/where_it_moves.py``): with the
automatic leak field, a thin foot, paw or hoof is a one-cell shell, all surface,
so d = 0 through it and the constraint does not reach it.  Swinging it about
its ankle is then the cheapest motion the body has: the lowest eigenmodes are
the feet's, the wobble frequency is calibrated on them (the slowest motion),
and every other region (a tail) gets fewer modes that the calibration makes
several times stiffer.  The fox's 16 modes put one mode, 4x stiffer than the
slowest, on the tail; its paws moved 1.3-3 % of the body and its tail 0.02 %.

Holding the planted flesh still removes those modes from the subspace: the
weight-space stick rows ``e_v^T W = 0`` of :func:`core.model.constraint.stick_rows`,
stacked under the complementarity rows, make u_v = 0 for every mode, so a
planted vertex follows the rig exactly and the slowest remaining motion (a
tail, a belly, an arm) is the one calibrated to the wobble frequency.

Which vertices: those of the render mesh that the rig's own motion brings
within ``HEIGHT`` of the body diagonal of the lowest point of the mesh (world +Z
up, Blender's convention) at some frame of the clip.  No speed test: in-place
locomotion cycles slide the stance foot backwards along the ground, at the
gait's speed.  A clip that lays a large share of the body on the ground (lying
down, a roll) is not feet: nothing is held then (:data:`MAX_SHARE`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .constraint import stick_rows

# Height above the lowest point, as a share of the body diagonal, that counts as on the ground.
HEIGHT = 0.01
# Above this share of the render vertices on the ground, the clip is not walking on its feet.
MAX_SHARE = 0.25


def rig_positions(rest: np.ndarray, weights: np.ndarray, params: np.ndarray) -> np.ndarray:
    """Linear blend skinning of the render vertices at each frame: (f, k, 3).

    rest: (k, 3) rest positions; weights: (k, b) bone weights (rows normalised
    here, as Blender's Armature modifier does; rows of zeros stay at rest x 0);
    params: (f, 12 b) LBS parameters per frame, each bone's 3 x 4 matrix row-major.
    """
    W = np.asarray(weights, dtype=np.float64)
    W = W / np.maximum(W.sum(axis=1, keepdims=True), 1e-12)
    A = np.asarray(params, dtype=np.float64).reshape(len(params), W.shape[1], 3, 4)
    Xh = np.hstack([np.asarray(rest, dtype=np.float64), np.ones((len(rest), 1))])
    # Per frame (k x b) @ (b x 12) then one (3 x 4) x [X; 1] per vertex: no loop over vertices.
    M = np.einsum("kb,fbij->fkij", W, A, optimize=True)
    return np.einsum("fkij,kj->fki", M, Xh, optimize=True)


def body_diagonal(points: np.ndarray) -> float:
    """Bounding-box diagonal of points (k, 3): the size every share here is taken of."""
    return float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))


def grounded(positions: np.ndarray, diagonal: float, height: float = HEIGHT) -> np.ndarray:
    """(f, k) bool: vertex on the ground at a frame, within ``height * diagonal`` of that frame's lowest point.

    positions: (f, k, 3) world positions, +Z up.
    """
    z = np.asarray(positions)[..., 2]
    return (z - z.min(axis=1, keepdims=True)) <= height * diagonal


def planted_vertices(rest: np.ndarray, weights: np.ndarray, params: np.ndarray, height: float = HEIGHT) -> np.ndarray:
    """(k,) bool: render vertices the rig puts on the ground at some frame of the clip (see module doc).

    rest (k, 3), weights (k, b), params (f, 12 b) as :func:`rig_positions`.  All
    False when the ground takes more than :data:`MAX_SHARE` of the vertices.
    """
    pos = rig_positions(rest, weights, params)
    on = np.asarray(grounded(pos, body_diagonal(pos[0]), height).any(axis=0), dtype=bool)
    if on.mean() > MAX_SHARE:
        return np.zeros(len(on), dtype=bool)
    return on


def planted_tet_vertices(T: np.ndarray, embedding_tets: np.ndarray, planted: np.ndarray) -> np.ndarray:
    """Sorted tet vertices (c,) to hold: the corners of every tet holding a planted render vertex.

    T: (t, 4); embedding_tets: (k,) the tet each render vertex is embedded in;
    planted: (k,) bool.  Holding all four corners makes u = 0 exactly at the
    render vertex, whatever its barycentric weights.
    """
    return np.unique(np.asarray(T)[np.asarray(embedding_tets)[np.asarray(planted, dtype=bool)]])


def planted_rows(vertices: np.ndarray, masses: np.ndarray) -> sp.csr_matrix:
    """Weight-space rows (c x n) holding ``vertices`` still: the contact stick rows, mass-scaled."""
    return stick_rows(vertices, masses)
