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
up, Blender's convention) at some frame of the clip, where that lowest point is on
the floor: within :data:`FLOOR_REACH` of the body diagonal of the floor's height
(the Ground setting's Height, world Z = 0 by default).  No speed test: in-place
locomotion cycles slide the stance foot backwards along the ground, at the
gait's speed.  A clip that lays a large share of the body on the ground (lying
down, a roll) is not feet: nothing is held then (:data:`MAX_SHARE`).

Why the floor (issue 37): a swimmer or a flyer has a lowest point too.  A dolphin
swimming in place keeps its lower flippers lowest and still, exactly as a stance
foot, and every kinematic test of the rig alone (contact time, speed, acceleration,
alternation, the trunk's lift) was measured to confuse it with a frog or a T-Rex;
its flippers were held and never moved.  Its lowest point is 7.5-9 % of its
diagonal below the floor, a walker's within 1-5 %.

Then, for the flesh calibration (issue 37), the whole foot: a thin bone whose render
vertices touch the ground at :data:`FOOT_SHARE` or more of them is a foot, and all its
flesh is held.  Holding
only the sole left the top of a paw free above it: measured on the galloping
husky, the free half of a planted paw swung 28 % of the body while its sole stayed.
And the leg above it (:func:`leg_tet_vertices`): the thin, unbranched chain of bones
from a foot up to the body.  A leg's flesh between a held foot and a jiggling body
can only stretch (the stag's lower legs changed their length by 2-6 times at the soft
end of Wobble); a leg carries the body, so it follows the rig, and the body jiggles
on it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from .constraint import stick_rows
from .leak import LEG_REACH, THIN

# Height above the lowest point, as a share of the body diagonal, that counts as on the ground.
HEIGHT = 0.01
# Above this share of the render vertices on the ground, the clip is not walking on its feet.
MAX_SHARE = 0.25
# A frame's lowest point is on the floor when it is within this share of the body diagonal of the floor's height.
FLOOR_REACH = 0.05
# A bone whose render vertices touch the ground at this share or more is a foot: its flesh is held whole.
FOOT_SHARE = 0.1
# A bone near the planted flesh is a leg only if it holds at most this share of the tet vertices: the frog's
# body (its "Head" bone, 34 %) sits within reach of its feet; legs hold 1-5 % each.
LEG_SHARE = 0.08


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


def planted_vertices(
    rest: np.ndarray,
    weights: np.ndarray,
    params: np.ndarray,
    height: float = HEIGHT,
    floor: float | None = 0.0,
) -> np.ndarray:
    """(k,) bool: render vertices the rig puts on the ground at some frame of the clip (see module doc).

    rest (k, 3), weights (k, b), params (f, 12 b) as :func:`rig_positions`; floor: the floor's world
    height (the positions' units), None for no floor test (any lowest point is on the ground).  All
    False when the ground takes more than :data:`MAX_SHARE` of the vertices.
    """
    pos = rig_positions(rest, weights, params)
    diagonal = body_diagonal(pos[0])
    on = grounded(pos, diagonal, height)
    if floor is not None:
        z = pos[..., 2].min(axis=1)
        on &= (np.abs(z - floor) <= FLOOR_REACH * diagonal)[:, None]
    touched = np.asarray(on.any(axis=0), dtype=bool)
    if touched.mean() > MAX_SHARE:
        return np.zeros(len(touched), dtype=bool)
    return touched


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


def leg_tet_vertices(
    tet_weights: np.ndarray,
    X: np.ndarray,
    depth: np.ndarray,
    parents: np.ndarray | None,
    render_weights: np.ndarray,
    rest: np.ndarray,
    planted: np.ndarray,
    bones: np.ndarray | None = None,
) -> np.ndarray:
    """Sorted tet vertices of the feet and legs standing on the planted render vertices (module doc).

    tet_weights: (n, b) volume weights of the tet vertices X (n, 3), depth (n,) their distance to the
    surface; parents: (b,) parent column (-1 at a root; None: no climb); render_weights (k, b), rest
    (k, 3) and planted (k,) bool: the render vertices; bones: (b,) bool, the columns with a bone (None:
    all; a column without one, such as unbound vertices gathered at the origin, is never a foot).  Legs
    are thin bones (flesh never deeper than :data:`THIN` of the body's deepest): a foot is a thin bone
    with :data:`FOOT_SHARE` of its render vertices planted; a leg bone owns flesh within
    :data:`LEG_REACH` of the diagonal of a foot's planted vertex, holds at most :data:`LEG_SHARE` of
    the tet vertices and has at most one child (an IK rig's leg is no ancestor of its foot), or is up a
    foot's or a leg's chain of thin, unbranched bones.  A thick bone on the ground (a belly, a blob's
    body) is never held whole, nor is anything near flesh that only touches the ground without a foot
    (a flyer's body resting its tip on the floor: the bee's abdomen was held as a "leg" of its own tip).
    """

    W = np.asarray(tet_weights)
    b = W.shape[1]
    dominant = W.argmax(axis=1)
    deepest = np.zeros(b)
    np.maximum.at(deepest, dominant, depth)
    thin = deepest < THIN * max(float(np.max(depth)), 1e-300)
    if bones is not None:
        thin &= np.asarray(bones, dtype=bool)
    bone = np.asarray(render_weights).argmax(axis=1)
    planted = np.asarray(planted, dtype=bool)
    count = np.bincount(bone, minlength=b)
    down = np.bincount(bone, weights=planted.astype(np.float64), minlength=b)
    feet = thin & (down >= FOOT_SHARE * np.maximum(count, 1)) & (count > 0)
    if not feet.any():
        return np.zeros(0, dtype=np.int64)
    legs = feet.copy()
    children = np.zeros(b, dtype=np.int64)
    if parents is not None:
        parents = np.asarray(parents, dtype=np.int64)
        # Children with flesh of their own: an IK pole or a control bone does not branch a leg.
        owns = np.bincount(dominant, minlength=b) > 0
        children = np.bincount(parents[(parents >= 0) & owns], minlength=b)
    reach = LEG_REACH * float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))
    soles = np.asarray(rest)[planted & feet[bone]]
    near, _ = cKDTree(soles).query(X, distance_upper_bound=reach)
    # IK rigs: the leg's own bones are no ancestors of the foot; a light, thin, unbranched bone next to a
    # foot's planted flesh is one (a hip or a body the legs branch from is not: the platformer's body was).
    light = np.bincount(dominant, minlength=b) <= LEG_SHARE * len(dominant)
    legs |= np.isin(np.arange(b), np.unique(dominant[np.isfinite(near)])) & thin & light & (children <= 1)
    if parents is not None:
        for start in np.flatnonzero(legs):  # a loop over bones, a few dozen
            up = parents[start]
            while up >= 0 and thin[up] and children[up] <= 1 and not legs[up]:
                legs[up] = True
                up = parents[up]
    return np.flatnonzero(legs[dominant])
