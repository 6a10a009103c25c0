"""The character's parts: each bone's flesh, merged along the bone tree into pieces of a useful size (issue 37).

Wobble means the flesh.  A region carried by an acceleration a, at a frequency f,
sags about a / (2 pi f)^2; that is what an animator reads into "Wobble 3 Hz", for a
belly as for a tail.  Elasticity does not give that on its own: a thin tail swings
slowly and a belly held by its core vibrates fast, so a model calibrated on its
slowest motion left bellies and bodies 40-120 x stiffer than asked (measured,
``docs/where_it_moves.md``).  The parts here are the regions the flesh calibration
(:mod:`core.subspace.flesh`) gives the Wobble to, one by one.

A part is the flesh of one or more bones: the tet vertices whose largest volume
weight is one of its bones.  Bones start as parts of their own; a part lighter than
:data:`MIN_PART_SHARE` of the body's mass joins a neighbour along the bone tree (its
parent's part, a sibling's or a child's), preferring a neighbour of the same kind, thin
(a tail, an ear, a limb: its flesh never deeper than :data:`THIN` of the body's
deepest) or thick (a torso, a head), so that a light tail stays a part of its own
instead of vanishing into the torso.  Then parts merge, lightest first, until at most
:data:`MAX_PARTS` are left: each part adds one weight to the subspace, so the count
bounds the cost.  Everything is decided from weights, masses and depths, so the
parts of a rotated or rescaled character are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .leak import THIN

# A part lighter than this share of the body's mass joins a neighbour.
MIN_PART_SHARE = 0.03
# At most this many parts: each adds one weight (12 affine dofs) to the subspace.
MAX_PARTS = 12
# A bone needs at least this many tet vertices of its own to have flesh (IK poles and handles have none).
MIN_BONE_VERTICES = 4


@dataclass(frozen=True)
class Parts:
    """bone_part: (b,) the part of each weight column (-1: no flesh of its own); loads: (n, P) each
    part's share of every tet vertex (the sum of its bones' volume weights, rows summing to at most
    1); thin: (P,) the part is thin flesh (a tail, an ear, a limb); masses: (P,) kg; below: (P, P) bool,
    below[q, p]: part q is p or hangs from it along the bone tree (None: each part carries itself only)."""

    bone_part: np.ndarray
    loads: np.ndarray
    thin: np.ndarray
    masses: np.ndarray
    below: np.ndarray | None = None

    @property
    def carried(self) -> np.ndarray:
        """(n, P) what each part carries when the body accelerates: its own flesh and every part hanging from
        it (a torso carries the head on it, a tail's base its tip); a part sags under all of that."""
        return self.loads if self.below is None else self.loads @ np.asarray(self.below, dtype=np.float64)

    @property
    def count(self) -> int:
        return int(self.loads.shape[1])

    def members(self, part: int) -> np.ndarray:
        """(k,) the weight columns of ``part``."""
        return np.flatnonzero(self.bone_part == part)


def bone_neighbours(parents: np.ndarray) -> list[set[int]]:
    """(b,) sets: each bone's parent, children and siblings (bones sharing its parent)."""
    b = len(parents)
    out: list[set[int]] = [set() for _ in range(b)]
    children: list[list[int]] = [[] for _ in range(b)]
    for bone, p in enumerate(parents):  # a loop over bones, a few dozen
        if p >= 0:
            out[bone].add(int(p))
            out[int(p)].add(bone)
            children[int(p)].append(bone)
    for kids in children:
        for k in kids:
            out[k].update(c for c in kids if c != k)
    return out


def body_parts(
    tet_weights: np.ndarray,
    masses: np.ndarray,
    depth: np.ndarray,
    parents: np.ndarray | None = None,
    min_share: float = MIN_PART_SHARE,
    max_parts: int = MAX_PARTS,
    bones: np.ndarray | None = None,
) -> Parts:
    """The character's parts (module doc).

    tet_weights: (n, b) volume bone weights; masses: (n,) lumped masses; depth: (n,) distance to the
    surface (:func:`core.model.leak.surface_depth`); parents: (b,) parent weight column, -1 at a root
    (None: no bone tree, every bone a part of its own until the budget merges the lightest pairs of
    bones whose flesh touches, by the order of their columns); bones: (b,) bool, the columns that are bones
    (None: all).  A column without a bone (vertices bound to nothing: the bee has twelve, gathered at the
    origin) owns no flesh: it is no part of the body, and its weights load no part.
    """
    W = np.asarray(tet_weights, dtype=np.float64)
    b = W.shape[1]
    dominant = W.argmax(axis=1)
    count = np.bincount(dominant, minlength=b)
    real = np.ones(b, dtype=bool) if bones is None else np.asarray(bones, dtype=bool)
    owns = (count >= MIN_BONE_VERTICES) & real
    if not owns.any():
        owns = (count > 0) & real if (real & (count > 0)).any() else count > 0
    bone_mass = np.bincount(dominant, weights=masses, minlength=b)
    deepest = np.zeros(b)
    np.maximum.at(deepest, dominant, depth)
    top = max(float(depth.max()), 1e-300)
    parents = np.full(b, -1, dtype=np.int64) if parents is None else np.asarray(parents, dtype=np.int64)
    near = bone_neighbours(parents) if (parents >= 0).any() else [set(range(b)) - {i} for i in range(b)]
    # Bones without flesh pass their neighbours on: an IK pole between a leg and its foot still links them.
    for bone in np.flatnonzero(~owns):
        for a in near[bone]:
            near[a].update(near[bone] - {a})
    groups: dict[int, set[int]] = {int(i): {int(i)} for i in np.flatnonzero(owns)}
    total = float(bone_mass[owns].sum())

    def mass(g: set[int]) -> float:
        return float(bone_mass[list(g)].sum())

    def thin(g: set[int]) -> bool:
        return bool(deepest[list(g)].max() < THIN * top)

    def partners(key: int) -> list[int]:
        around = set().union(*(near[i] for i in groups[key])) - groups[key]
        return sorted({k for k, g in groups.items() if k != key and g & around})

    stuck: set[int] = set()
    while len(groups) > 1:
        over = len(groups) > max_parts
        light = [k for k in groups if (over or mass(groups[k]) < min_share * total) and k not in stuck]
        if not light:
            break
        key = min(light, key=lambda k: (mass(groups[k]), k))
        options = partners(key)
        same = [k for k in options if thin(groups[k]) == thin(groups[key])]
        pick = same or (options if over else [])
        if not pick:
            stuck.add(key)  # a light thin chain on a thick body stays a part of its own
            continue
        into = min(pick, key=lambda k: (mass(groups[k]), k))
        groups[into] |= groups.pop(key)
        stuck.discard(into)
    keys = sorted(groups, key=lambda k: min(groups[k]))
    bone_part = np.full(b, -1, dtype=np.int64)
    for p, k in enumerate(keys):
        bone_part[list(groups[k])] = p
    # A bone without flesh goes with the part of its nearest ancestor that has some (its weights still load it).
    for bone in np.flatnonzero((bone_part < 0) & real):
        a = parents[bone]
        while a >= 0 and bone_part[a] < 0:
            a = parents[a]
        if a >= 0:
            bone_part[bone] = bone_part[a]
    P = len(keys)
    onehot = np.zeros((b, P))
    onehot[bone_part >= 0, bone_part[bone_part >= 0]] = 1.0
    loads = W @ onehot
    return Parts(
        bone_part=bone_part,
        loads=loads,
        thin=np.array([thin(groups[k]) for k in keys], dtype=bool),
        masses=np.array([mass(groups[k]) for k in keys]),
        below=parts_below(parents, bone_part, P),
    )


def parts_below(parents: np.ndarray, bone_part: np.ndarray, count: int) -> np.ndarray:
    """(P, P) bool: below[q, p] when part q is p or has a bone below one of p's (parents (b,), bone_part (b,))."""
    below = np.eye(count, dtype=bool)
    for bone in range(len(parents)):  # bones x depth: a few hundred steps
        q = bone_part[bone]
        a = parents[bone]
        while q >= 0 and a >= 0:
            if bone_part[a] >= 0:
                below[q, bone_part[a]] = True
            a = parents[a]
    return below
