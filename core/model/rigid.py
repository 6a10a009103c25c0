"""Rigid parts: a loose piece of the render mesh bound to one bone follows it (issue 23, item 6a), where it
is hard (issue 37).

A robot made of separate rigid plates, a helmet, a buckle or an eye is modelled
as a loose piece (a connected component of the surface) whose every vertex is
bound to one bone at full weight.  The rig says it is rigid; giving it secondary
motion makes a plate wobble about its bone.  The physics skin already pins such
vertices (:data:`RIGID_WEIGHT`); the secondary motion
holds them with the same weight-space stick rows as planted feet
(:func:`core.model.planted.planted_rows`): every mode vanishes at the corners of
the tets holding them, so they follow their bone exactly.

Which pieces (:func:`held_pieces`, the Rigid Pieces setting).  A one-bone loose piece is
not always hard: a bee's wings, a dolphin's fins, the head of a game character made of
one-bone pieces and a pair of ears are loose pieces bound to one bone each, and holding
them froze them (0.00 %).  Measured on both kinds, the share of the mesh in such pieces
tells them apart: a robot of plates is 85 % one-bone pieces, the bee 42 %, the platformer
character 41 %, the other characters 0 %.  So "auto" holds them on a hard-surface model
(:data:`HARD_SURFACE` of the mesh or more) and lets them jiggle with the flesh otherwise;
"all" holds every one, "none" none, and "group" the vertices the animator puts in a
vertex group (a helmet on a soft head, a buckle), one click per piece in the panel.

Pieces are taken on the welded surface (:func:`core.geometry.surface.clean_surface`):
a flat-shaded low-poly mesh (the Fox, 576 triangles with 1728 split vertices)
has one loose piece per triangle before welding and one after, so its one-hot
tail is one piece with the body and keeps swinging.  A mesh of one piece is
never rigid: a one-bone blob is what jiggles.
"""

from __future__ import annotations

import numpy as np

from ..errors import SkinmodesError
from ..geometry.surface import clean_surface

# A vertex is bound to one bone alone when its heaviest normalised weight is at
# least this: below 1 by the rounding of 8- and 16-bit weights in glTF and FBX
# files.  The physics skin pins such vertices wherever they lie
# (core/physskin/assignment.py says why).
RIGID_WEIGHT = 0.999
# A mesh with at least this share of its vertices in one-bone loose pieces is hard-surface (module doc).
HARD_SURFACE = 0.75
RIGID_MODES = ("auto", "all", "none", "group")


def vertex_pieces(rest: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(k,) loose piece of each render vertex on the welded surface; -1 for a vertex on no face."""
    surf = clean_surface(np.asarray(rest, dtype=np.float64), np.asarray(faces, dtype=np.int64))
    vpart = np.full(len(surf.V), -1, dtype=np.int64)
    vpart[surf.F.ravel()] = np.repeat(surf.part, 3)
    vmap = np.asarray(surf.vertex_map)
    return np.where(vmap >= 0, vpart[np.maximum(vmap, 0)], -1)


def rigid_pieces(rest: np.ndarray, faces: np.ndarray, weights: np.ndarray, rigid: float = RIGID_WEIGHT) -> np.ndarray:
    """(k,) bool: render vertices of a loose piece whose every vertex is bound to one bone alone.

    rest (k, 3), faces (f, 3), weights (k, b) bone weights (rows normalised here).
    "Bound alone": the normalised weight of the vertex's heaviest bone is at least
    ``rigid``, and that bone is the same for the whole piece.  All False for a
    mesh of one piece, and for a surface the welding cannot read (it is reported
    where the mesh is tetrahedralised).
    """
    W = np.asarray(weights, dtype=np.float64)
    k = len(W)
    try:
        piece = vertex_pieces(rest, faces)
    except (SkinmodesError, ValueError, IndexError):
        return np.zeros(k, dtype=bool)
    n = int(piece.max()) + 1 if k else 0
    if n < 2:
        return np.zeros(k, dtype=bool)
    W = W / np.maximum(W.sum(axis=1, keepdims=True), 1e-12)
    bone = W.argmax(axis=1)
    alone = W.max(axis=1) >= rigid
    on = piece >= 0
    p = piece[on]
    # A piece is rigid when all its vertices are alone on a bone and its heaviest bones agree.
    all_alone = np.bincount(p, weights=~alone[on], minlength=n) == 0
    lo = np.full(n, np.iinfo(np.int64).max)
    hi = np.full(n, -1)
    np.minimum.at(lo, p, bone[on])
    np.maximum.at(hi, p, bone[on])
    ok = all_alone & (lo == hi)
    out = np.zeros(k, dtype=bool)
    out[on] = ok[p]
    return out


def held_pieces(
    rest: np.ndarray, faces: np.ndarray, weights: np.ndarray, mode: str, painted: np.ndarray | None = None
) -> np.ndarray:
    """(k,) bool: the render vertices that follow their bone exactly under the Rigid Pieces ``mode`` (module doc).

    rest (k, 3), faces (f, 3), weights (k, b) as :func:`rigid_pieces`; painted: (k,) the Rigid Group's
    weights (mode "group": the vertices at 0.5 or more are held; None or missing: none).
    """
    k = len(np.asarray(weights))
    if mode not in RIGID_MODES:
        raise SkinmodesError(f"unknown Rigid Pieces mode {mode!r}; use one of {', '.join(RIGID_MODES)}")
    if mode == "none":
        return np.zeros(k, dtype=bool)
    if mode == "group":
        if painted is None:
            return np.zeros(k, dtype=bool)
        return np.asarray(painted, dtype=np.float64) >= 0.5
    pieces = rigid_pieces(rest, faces, weights)
    if mode == "auto" and pieces.mean() < HARD_SURFACE:
        return np.zeros(k, dtype=bool)
    return pieces
