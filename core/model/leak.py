"""The momentum-leak field d in [0, 1] (Benchekroun et al. 2023, §8.1; Zhang et al. 2020).

The complementarity constraint is weighted per vertex by ``d``: where d = 1
the secondary motion carries no rig momentum (it moves with the rig), where
d = 0 momentum may leak from the rig into the flesh.  The default leaks at
the surface and holds the core: a short heat diffusion from the boundary into
the interior, renormalised to [0, 1], gives d = 0 on the skin rising to 1 a
few tets deep.  That is what produces follow-through and overlap.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.spatial import cKDTree

from ..errors import MeshError
from ..geometry.tetmesh import TetMesh
from .fem import corotational_weight_space_hessian, lumped_mass, scalar_laplacian
from .materials import Material


def diffuse_from_boundary(mesh: TetMesh, time: float | None = None) -> np.ndarray:
    """phi (n,): one implicit heat step from phi = 1 on the boundary, phi free inside.

    Solves (M + time L) phi = 0 on interior vertices with phi = 1 on boundary
    vertices.  ``time`` defaults to the squared mean edge length: the surface
    signal spreads about one tet ring per unit of diffusion length.  The
    system is SPD and dominated by M, so Jacobi-preconditioned CG converges
    in a few dozen iterations at any mesh size.
    """
    boundary = mesh.boundary_vertices()
    if time is None:
        edges = mesh.X[mesh.T[:, [0, 0, 0, 1, 1, 2]]] - mesh.X[mesh.T[:, [1, 2, 3, 2, 3, 3]]]
        time = float(np.mean(np.linalg.norm(edges, axis=2)) ** 2)
    Q = (sp.diags(lumped_mass(mesh, 1.0)) + time * scalar_laplacian(mesh)).tocsr()
    interior = np.setdiff1d(np.arange(mesh.n), boundary)
    phi = np.ones(mesh.n)
    if interior.size:
        Qii = Q[interior][:, interior]
        rhs = -(Q[interior][:, boundary] @ np.ones(boundary.size))
        pre = sp.diags(1.0 / Qii.diagonal())
        sol, info = spla.cg(Qii, rhs, rtol=1e-12, atol=0.0, M=pre, maxiter=10_000)
        if info != 0:  # pragma: no cover - SPD and well conditioned by construction
            sol = spla.spsolve(Qii.tocsc(), rhs)
        phi[interior] = sol
    return phi


def default_leak_field(mesh: TetMesh, time: float | None = None) -> np.ndarray:
    """d (n,) in [0, 1]: 0 on the surface (momentum leaks), rising to 1 inside."""
    phi = diffuse_from_boundary(mesh, time)
    lo, hi = phi.min(), phi.max()
    if hi - lo <= 1e-12:
        # Every vertex is on the surface (a one-tet-thick shell): leak everywhere.
        return np.zeros(mesh.n)
    return 1.0 - (phi - lo) / (hi - lo)


def validate_leak_field(d: np.ndarray, n: int) -> np.ndarray:
    """Check a user field (e.g. a painted vertex group): (n,) finite values in [0, 1]."""
    d = np.asarray(d, dtype=np.float64)
    if d.shape != (n,):
        raise MeshError(f"the momentum-leak field needs one value per vertex ({n}), got shape {d.shape}")
    if not np.isfinite(d).all():
        raise MeshError("the momentum-leak mask contains NaN values; repaint the vertex group")
    if (d < -1e-9).any() or (d > 1 + 1e-9).any():
        raise MeshError("the momentum-leak mask must lie in [0, 1]; clamp the vertex group weights")
    return np.clip(d, 0.0, 1.0)


# A bone's flesh is thin when its deepest point lies less than this share of the body's deepest
# point below the surface.  Measured on the fox: tail 0.43-0.70, head 0.91, torso 0.99; the demo
# creature's tail 0.19-0.69; CesiumMan's arms and legs 0.24-0.38 (core/validation/where_it_moves.py).
THIN = 0.8


# Flesh within this share of the body diagonal of a planted foot is its leg's (an IK rig's foot
# bone is not a child of the leg): the stag's and the robot's lower legs, not the fox's tail.
REACH = 0.05


def surface_depth(mesh: TetMesh) -> np.ndarray:
    """(n,) distance of each tet vertex to the nearest boundary vertex (0 on the surface)."""
    boundary = mesh.boundary_vertices()
    depth, _ = cKDTree(mesh.X[boundary]).query(mesh.X)
    return np.asarray(depth, dtype=np.float64)


def appendage_bones(
    tet_weights: np.ndarray,
    parents: np.ndarray,
    depth: np.ndarray,
    grounded: np.ndarray | None = None,
    X: np.ndarray | None = None,
    held: np.ndarray | None = None,
) -> np.ndarray:
    """(b,) bool: bones whose flesh is an appendage that may swing from its base (issue 31).

    tet_weights: (n, b) volume bone weights; parents: (b,) parent bone index, -1 at a root;
    depth: (n,) :func:`surface_depth`; grounded: (b,) bool, the bones that own the planted
    flesh (the largest weight of a planted render vertex), or None; X: (n, 3) tet vertices
    and held: the tet vertices held still, to find the legs of IK rigs (see below).
    A bone is an appendage when it is not a root and the chain from it down the bone tree
    is unbranched, thin flesh (:data:`THIN`: the vertices each bone dominates) that nothing
    holds on the ground: a tail, an ear, an arm, a fin; not a leg that ends on the ground,
    nor a spine that branches into limbs, nor a neck that carries a thick head.
    """
    b = tet_weights.shape[1]
    parents = np.asarray(parents, dtype=np.int64)
    dominant = tet_weights.argmax(axis=1)
    deepest = np.zeros(b)
    np.maximum.at(deepest, dominant, depth)
    thick = deepest > THIN * max(float(depth.max()), 1e-300)
    # A bone with several children is a trunk (hips carrying legs and a spine, a chest carrying
    # arms and a neck), whatever its thickness: appendages are single chains.
    children = np.bincount(parents[parents >= 0], minlength=b)
    blocked = thick | (children > 1)
    if grounded is not None and np.any(grounded):
        grounded = np.asarray(grounded, dtype=bool)
        blocked |= grounded
        feet = grounded & ~thick  # a thick planted body (a belly on the ground) holds nothing above it
        if X is not None and held is not None and feet.any():
            # An IK rig's foot bone hangs from the root, not from the leg: the leg is the flesh
            # next to the planted foot (its ancestors follow below).
            seeds = np.asarray(held)[feet[dominant[held]]]
            if len(seeds):
                reach = REACH * float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))
                near, _ = cKDTree(X[seeds]).query(X, distance_upper_bound=reach)
                blocked[np.unique(dominant[np.isfinite(near)])] = True
    for bone in np.flatnonzero(blocked):  # a thick or planted bone blocks its ancestors: a loop over bones
        p = parents[bone]
        while p >= 0 and not blocked[p]:
            blocked[p] = True
            p = parents[p]
    return ~blocked & (parents >= 0)


def appendage_chains(parents: np.ndarray, appendage: np.ndarray) -> np.ndarray:
    """(b,) the root bone of each appendage bone's chain (the first appendage bone up the tree), -1 elsewhere.

    parents: (b,) parent bone index, -1 at a root; appendage: (b,) bool from :func:`appendage_bones`.
    """
    parents = np.asarray(parents, dtype=np.int64)
    root = np.full(len(parents), -1, dtype=np.int64)
    for bone in np.flatnonzero(appendage):  # a loop over bones, a few dozen
        top = bone
        while parents[top] >= 0 and appendage[parents[top]]:
            top = parents[top]
        root[bone] = top
    return root


# Flesh within this share of the body diagonal of a planted render vertex is a leg's, for the chains
# the subspace adds (core/subspace/skinning_modes.py): the robot's lower legs lie 0.078 from their
# feet (an IK rig whose feet the volume leaves out), the stag's tail 0.37 from its hooves.
LEG_REACH = 0.15


def planted_chain_bones(tet_weights: np.ndarray, X: np.ndarray, planted: np.ndarray) -> np.ndarray:
    """(c,) the bones owning tet vertices within :data:`LEG_REACH` of the body diagonal of planted points.

    tet_weights: (n, b); X: (n, 3) tet vertices; planted: (p, 3) planted render vertices.  These are
    the legs that end on the ground, even an IK rig's whose foot lies outside the volume (the
    robot's): their chains are held, not missed by the modes.
    """
    reach = LEG_REACH * float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))
    near, _ = cKDTree(planted).query(X, distance_upper_bound=reach)
    return np.unique(tet_weights.argmax(axis=1)[np.isfinite(near)])


def automatic_mask(tet_weights: np.ndarray, appendage: np.ndarray) -> np.ndarray:
    """(n,) the automatic momentum-leak mask f in [0.5, 1]: 0.5 on the body, 1 in appendages.

    tet_weights: (n, b); appendage: (b,) bool from :func:`appendage_bones`.  Read through
    :func:`leak_from_mask`: 0.5 keeps the depth field (the skin swings, the core follows),
    1 frees the whole depth.  The weights blend it across each joint.

    Why a switch and not a slider: the constraint rows of a bone are m d w_b q(X), so
    scaling d by a constant over a bone's support leaves its rows' span, hence the modes,
    unchanged.  Only where d vanishes, or how it varies across a joint, moves anything.
    """
    a = np.clip(tet_weights @ appendage.astype(np.float64), 0.0, 1.0)
    return 0.5 + 0.5 * a


def leak_from_mask(depth_field: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """d (n,) from the depth field d0 (n,) (:func:`default_leak_field`) and a mask f (n,) in [0, 1].

    f = 0: d = 1, the flesh follows the rig; f = 0.5: d = d0, the skin swings and the core
    follows (the field of the paper's §8.1 default); f = 1: d = 0, the whole depth swings
    (rig momentum leaks through it, as into the paper's Fig. 5 eel).  Linear in between,
    so a painted mask can hold or free flesh over its full range.
    """
    f = np.clip(np.asarray(mask, dtype=np.float64), 0.0, 1.0)
    d0 = np.asarray(depth_field, dtype=np.float64)
    hold = 1.0 - 2.0 * f * (1.0 - d0)
    free = (2.0 - 2.0 * f) * d0
    return np.where(f <= 0.5, hold, free)


# A missed appendage bone's own swing (its weight moving, the rest of the body held) wobbles at most
# this many times the slowest mode's frequency, i.e. at the Wobble frequency.  A bone-jiggle spring
# has one frequency whatever its bone's size; elasticity gives a part of length L a frequency ~ 1/L,
# so the stag's tail (4 % of the diagonal) swung at 6.4 x the slowest mode, about 40 x stiffer, and
# moved 0.06 %.  Capped at 2 x it moved 0.41 %, at 1.5 x 0.85 %, at 1 x 1.60 % (docs/where_it_moves.md).
SWING_CAP = 1.0
# The joint a bone shares with its parent softens only in part (the weights blend there), so the
# factor is refined a few times against the softened energy.
SWING_ROUNDS = 10


def swing_softening(
    mesh: TetMesh, material: Material, masses: np.ndarray, weights: np.ndarray, slowest: float
) -> np.ndarray:
    """(t,) stiffness factor in (0, 1] that caps each appendage's swing frequency (:data:`SWING_CAP`).

    weights: (n, k) the appendage bones' volume weights; masses: (n,) lumped masses; slowest: the
    slowest constrained eigenvalue lambda_0 of H_w x = lambda M x (same units as the quotient below).
    Bone b's swing has the Rayleigh quotient q_b = w_b^T H_w w_b / w_b^T M w_b; where q_b exceeds
    SWING_CAP^2 lambda_0 its flesh is softened by s_b, each tet by prod_b s_b^wbar_b with wbar_b
    its mean weight there, refined :data:`SWING_ROUNDS` times.  Geometric across joints: a joint
    half in the appendage gets sqrt(s_b), so the joint at a short chain's base, where its swing
    bends, softens with it (a linear blend never went below one half there).
    Only stiffness changes: the mass, hence the rig's inertial push, is the body's.
    """
    k = weights.shape[1]
    norm = masses @ weights**2
    live = norm > 0
    wbar = weights[mesh.T].mean(axis=1)  # (t, k)
    s = np.ones(k)
    target = SWING_CAP**2 * max(float(slowest), 0.0)
    for _ in range(SWING_ROUNDS):  # a few rounds of k quotients each, not a loop over tets
        f = np.exp(wbar @ np.log(s))
        H = corotational_weight_space_hessian(mesh, material.mu * f, material.lam * f)
        q = np.einsum("nk,nk->k", weights, np.asarray(H @ weights)) / np.where(live, norm, 1.0)
        s = np.where(live & (q > target), s * target / np.maximum(q, 1e-300), s)
    return np.exp(wbar @ np.log(s))
