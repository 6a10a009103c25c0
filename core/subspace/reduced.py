"""The reduced model: every precomputed product Algorithm 2 needs (Benchekroun et al. 2023, §8.2).

The LBS subspace B(W) (3n x 12m) is never formed.  Every vector operator of
the method (L, M, K) acts identically on x, y and z, so each product with B
factors through the *scalar skinning basis*

    Y = W (.) [Xn | 1]         (n x 4m),  column 4q + k = W[:, q] * Xn1[:, k],

where Xn are normalised rest positions.  With the secondary displacement
written as a matrix ``u = Y Z`` (Z: 4m x 3, ``Z[4q + k, i] = T_q[i, k]``, the
affine matrix of mode q), the paper's products become

    B^T L B  -> A_L   = Y^T Ls Y        (4m x 4m)   Ls: mu-weighted cotangent Laplacian
    B^T M B  -> A_M   = Y^T Mw Y        (4m x 4m)
    G9 K B   -> C_W   = Gc D Y          (3r x 4m)   D: scalar gradient, Gc: cluster averaging
    B^T L J  -> A_LR  = Y^T Ls Y_rig    (4m x 4b)   Y_rig = Omega (.) [X | 1]
    B^T M J  -> A_MR  = Y^T Mw Y_rig    (4m x 4b)
    G9 K J   -> C_R   = Gc D Y_rig      (3r x 4b)

and the rig parameters p (12b,) as a matrix P (4b x 3) with x_rig = Y_rig P.
Each costs O(n m) or O(nnz m) to build, with n x 4m dense temporaries only.

Clusters average deformation gradients with weights mu_e V_e (not V_e alone,
eq. 27): ``sum_e mu_e V_e ||F_e - R_c||^2`` then *is* the ARAP energy with one
rotation per cluster, its local step is exact, the local-global iteration is
monotone, and the rest shape is an exact equilibrium even when stiffness
varies inside a cluster.  For homogeneous clusters the two weightings agree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ..geometry.tetmesh import TetMesh
from ..model.constraint import normalization
from ..model.fem import corotational_weight_space_hessian, lumped_mass, scalar_gradient_operator, scalar_laplacian
from ..model.fibers import Fibers
from ..model.leak import default_leak_field, swing_softening, validate_leak_field
from ..model.materials import Material
from ..model.planted import planted_rows
from ..model.rig import LBSRig, Rig, lbs_basis
from .clusters import cluster_matrix, skinning_clusters
from .skinning_modes import ritz, skinning_eigenmodes

# Softenings tried, each aiming higher, until the slowest mode is the body's again (see build_reduced_model).
SLOWEST_ROUNDS = 4


def cluster_gradient_operator(mesh: TetMesh, labels: np.ndarray, tet_weights: np.ndarray) -> sp.csr_matrix:
    """Gc D (3r x n): weighted cluster average of the per-tet scalar gradient.

    ``(Gc D x)[3c + j, i]`` is the averaged deformation gradient entry F_c[i, j]
    for positions x (n, 3), i.e. rows 3c..3c+2 hold F_c^T.
    """
    G = cluster_matrix(labels, tet_weights)
    G3 = sp.kron(G, sp.identity(3), format="csr")
    return sp.csr_matrix(G3 @ scalar_gradient_operator(mesh))


@dataclass
class ReducedModel:
    """Everything the reduced simulator needs, independent of the mesh size at run time.

    Shapes (n vertices, t tets, m modes, r clusters, b bones, 4m = q):
    X (n,3), T (t,4), masses (n,), mu/lam (t,), weights (n,m), eigenvalues (m,),
    labels (t,), centre (3,), A_L/A_M (q,q), C_W (3r,q), cluster_mu/cluster_lam (r,),
    and for LBS rigs rig_weights (n,b), A_LR/A_MR (q,4b), C_R (3r,4b).
    """

    X: np.ndarray
    T: np.ndarray
    masses: np.ndarray
    mu: np.ndarray
    lam: np.ndarray
    leak: np.ndarray
    weights: np.ndarray
    eigenvalues: np.ndarray
    labels: np.ndarray
    centre: np.ndarray
    scale: float
    A_L: np.ndarray
    A_M: np.ndarray
    C_W: np.ndarray
    cluster_mu: np.ndarray
    cluster_lam: np.ndarray
    rig_weights: np.ndarray | None = None
    A_LR: np.ndarray | None = None
    A_MR: np.ndarray | None = None
    C_R: np.ndarray | None = None
    # The flesh calibration's (core/subspace/flesh_model.py), None for the seed's model: the parts' common
    # quasi-static sag (m per m/s^2 at stiffness scale 1), which the Wobble setting is calibrated on; each
    # part's sag over it (P,); the calibration rounds' largest deviations.
    reference_sag: float | None = None
    part_sags: np.ndarray | None = None
    calibration: np.ndarray | None = None
    # Fibers along the bones (core/model/fibers.py), None without: the clusters' rows C_W, C_R, cluster_mu and
    # cluster_lam then hold the fiber clusters after the r0 = labels.max() + 1 plain ones, fiber (r,) marks
    # them, A_F (q, q) is their quadratic part and fiber_axes (t, 3), fiber_strength (t,) the tets' fibers.
    fiber: np.ndarray | None = None
    A_F: np.ndarray | None = None
    fiber_axes: np.ndarray | None = None
    fiber_strength: np.ndarray | None = None
    fiber_bone: np.ndarray | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def m(self) -> int:
        return int(self.weights.shape[1])

    @property
    def r(self) -> int:
        """Clusters, the fiber clusters included."""
        return int(self.cluster_mu.shape[0])

    def fibers(self) -> Fibers | None:
        """The tets' fibers the model's fiber clusters were built from, or None."""
        if self.fiber_axes is None or self.fiber_strength is None or self.fiber_bone is None:
            return None
        return Fibers(axes=self.fiber_axes, strength=self.fiber_strength, bone=self.fiber_bone)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def reference_frequency(self) -> float | None:
        """omega_ref (rad/s) at stiffness scale 1: the frequency the Wobble setting is mapped to, when the
        model's flesh was calibrated (a part carried by an acceleration a then sags a / omega^2); None for
        the seed's model, whose Wobble is its slowest mode's."""
        if self.reference_sag is None or not self.reference_sag > 0.0:
            return None
        return float(1.0 / np.sqrt(self.reference_sag))

    @property
    def bones(self) -> int:
        return 0 if self.rig_weights is None else int(self.rig_weights.shape[1])

    def basis(self, weights: np.ndarray | None = None, rest: np.ndarray | None = None) -> np.ndarray:
        """Y for the tet vertices, or for embedded points given their weights (k,m) and rest (k,3)."""
        if weights is None or rest is None:
            return lbs_basis(self.weights, (self.X - self.centre) / self.scale)
        return lbs_basis(weights, (rest - self.centre) / self.scale)

    def mesh(self) -> TetMesh:
        return TetMesh.from_arrays(self.X, self.T)


def fiber_gradient_operator(
    mesh: TetMesh, labels: np.ndarray, mu: np.ndarray, fibers: Fibers
) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray, np.ndarray]:
    """The fiber clusters' operators (core/model/fibers.py): (G (3r' x n), L_F (n x n), weights (r',), keys (r',)).

    Each plain cluster's tets with a fiber along one bone form a fiber cluster (keys: (r',) plain cluster
    times bones plus bone).  With w_e = mu_e s_e V_e and the fiber-scaled gradient F_e D_e, rows 3c + j of G x are the
    w-weighted mean of (F_e D_e)[i, j] over the cluster's tets for positions x (n, 3), as
    :func:`cluster_gradient_operator`'s are of F_e; L_F is the quadratic form sum_e w_e ||F_e D_e||^2
    (a Laplacian scaled anisotropically by D_e^2) and weights (r',) the clusters' sums of w.
    """
    t = mesh.t
    w = mu * fibers.strength * mesh.volumes
    D = fibers.scales()  # (t, 3, 3)
    # B[3e + j, 3e + l] = D_e[l, j]: row j of (grad x) D_e is sum_l D_e[l, j] (grad x)_l.
    r_idx = np.broadcast_to((3 * np.arange(t))[:, None, None] + np.arange(3)[None, :, None], (t, 3, 3))
    c_idx = np.broadcast_to((3 * np.arange(t))[:, None, None] + np.arange(3)[None, None, :], (t, 3, 3))
    B = sp.csr_matrix((D.transpose(0, 2, 1).ravel(), (r_idx.ravel(), c_idx.ravel())), shape=(3 * t, 3 * t))
    grad = sp.csr_matrix(B @ scalar_gradient_operator(mesh))
    L_F = sp.csr_matrix(grad.T @ sp.diags(np.repeat(w, 3)) @ grad)
    on = w > 0
    # One fiber cluster per plain cluster and bone: a cluster's single rotation must not straddle a joint,
    # or the fibers there would lock it (measured: an arm's swing from 2.6 % to 0.1 %).
    pair = labels[on].astype(np.int64) * (int(fibers.bone.max()) + 1) + fibers.bone[on]
    kept, fl = np.unique(pair, return_inverse=True)
    totals = np.bincount(fl, weights=w[on], minlength=len(kept))
    G = sp.csr_matrix((w[on] / totals[fl], (fl, np.flatnonzero(on))), shape=(len(kept), t))
    return sp.csr_matrix(sp.kron(G, sp.identity(3)) @ grad), L_F, totals, kept


def cluster_rows_operator(mesh: TetMesh, labels: np.ndarray, mu: np.ndarray, fibers: Fibers | None) -> sp.csr_matrix:
    """(3r x n): the plain clusters' gradient rows (:func:`cluster_gradient_operator`), then the fiber
    clusters' (:func:`fiber_gradient_operator`) when there are fibers: what C_W and C_R are of x."""
    CD = cluster_gradient_operator(mesh, labels, mu * mesh.volumes)
    if fibers is None or not np.any(fibers.strength > 0):
        return CD
    return sp.csr_matrix(sp.vstack([CD, fiber_gradient_operator(mesh, labels, mu, fibers)[0]]))


def without_fibers(model: ReducedModel) -> ReducedModel:
    """The model with its fiber clusters left out (the plain clusters' rows only): for the pose-space blends,
    whose per-pose products are the plain clusters' (:mod:`core.posespace.model`)."""
    if model.fiber is None:
        return model
    plain = ~np.asarray(model.fiber, dtype=bool)
    rows = np.repeat(plain, 3)
    return replace(
        model,
        C_W=model.C_W[rows],
        C_R=None if model.C_R is None else model.C_R[rows],
        cluster_mu=model.cluster_mu[plain],
        cluster_lam=model.cluster_lam[plain],
        fiber=None,
        A_F=None,
        fiber_axes=None,
        fiber_strength=None,
        fiber_bone=None,
    )


def reduce_products(
    mesh: TetMesh,
    material: Material,
    masses: np.ndarray,
    weights: np.ndarray,
    labels: np.ndarray,
    rig_weights: np.ndarray | None,
    fibers: Fibers | None = None,
) -> dict[str, np.ndarray]:
    """The precomputed products of Algorithm 2 in scalar-factored form (see module doc), with the fiber
    clusters' rows after the plain ones when ``fibers`` are given (:func:`fiber_gradient_operator`)."""
    centre, scale = normalization(mesh.X)
    Y = lbs_basis(weights, (mesh.X - centre) / scale)
    Ls = scalar_laplacian(mesh, material.mu)
    LY = Ls @ Y
    MY = masses[:, None] * Y
    stiffness = material.mu * mesh.volumes
    CD = cluster_gradient_operator(mesh, labels, stiffness)
    out = {
        "centre": centre,
        "scale": np.float64(scale),
        "A_L": Y.T @ LY,
        "A_M": Y.T @ MY,
        "C_W": np.asarray(CD @ Y),
        "cluster_mu": np.bincount(labels, weights=stiffness),
        "cluster_lam": np.bincount(labels, weights=material.lam * mesh.volumes),
    }
    if fibers is not None and np.any(fibers.strength > 0):
        G, L_F, totals, _ = fiber_gradient_operator(mesh, labels, material.mu, fibers)
        r = len(out["cluster_mu"])
        CD = sp.csr_matrix(sp.vstack([CD, G]))
        out["C_W"] = np.asarray(CD @ Y)
        out["cluster_mu"] = np.concatenate([out["cluster_mu"], totals])
        out["cluster_lam"] = np.concatenate([out["cluster_lam"], np.zeros(len(totals))])
        out["fiber"] = np.concatenate([np.zeros(r, dtype=bool), np.ones(len(totals), dtype=bool)])
        out["A_F"] = Y.T @ (L_F @ Y)
        out["fiber_axes"] = np.asarray(fibers.axes)
        out["fiber_strength"] = np.asarray(fibers.strength)
        out["fiber_bone"] = np.asarray(fibers.bone)
    if rig_weights is not None:
        YR = lbs_basis(rig_weights, mesh.X)
        out.update(A_LR=LY.T @ YR, A_MR=MY.T @ YR, C_R=np.asarray(CD @ YR))
    return out


def build_reduced_model(
    mesh: TetMesh,
    material: Material,
    rig: Rig | None,
    m: int,
    r: int,
    leak: np.ndarray | None = None,
    seed: int = 0,
    backend: str = "superlu",
    held: np.ndarray | None = None,
    extra_weights: np.ndarray | None = None,
    extra_groups: np.ndarray | None = None,
) -> ReducedModel:
    """Modes, clusters and products for a tet mesh, material and rig (Algorithm 1 + §8.2).

    leak: user momentum-leak field d (n,) in [0, 1]; None computes the default
    surface-to-interior diffusion.  held: tet vertex indices (c,) every mode
    vanishes at (planted feet, :mod:`core.model.planted`); None or empty: none.
    extra_weights: (n, k) appendage bones' weights and extra_groups (k,) their chains: a chain the
    modes miss joins them (:func:`core.subspace.skinning_modes.augment_weights`; the model then has
    up to m + k weights) and swings no faster than the slowest mode (:func:`swing_softening`).
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    masses = lumped_mass(mesh, material.density)
    d = default_leak_field(mesh) if leak is None else validate_leak_field(leak, mesh.n)
    timings["leak"] = time.perf_counter() - t0
    rows = None if held is None or len(held) == 0 else planted_rows(np.asarray(held, dtype=np.int64), masses)
    modes = skinning_eigenmodes(
        mesh,
        material,
        masses,
        rig,
        d,
        m,
        backend=backend,
        extra_rows=rows,
        extra_weights=extra_weights,
        extra_groups=extra_groups,
    )
    weights, eigenvalues = modes.weights, modes.eigenvalues
    if extra_weights is not None and modes.extra_used is not None and modes.extra_used.any():
        # A missed appendage swings no faster than SWING_CAP x the slowest mode: its flesh is softened
        # and the subspace (modes + its bones' weights) re-diagonalised for the softened energy.
        t0 = time.perf_counter()
        used = np.asarray(extra_weights)[:, modes.extra_used]
        slowest = target = float(modes.eigenvalues[0])
        for _ in range(SLOWEST_ROUNDS):  # a few softenings, each a handful of sparse products
            soft = swing_softening(mesh, material, masses, used, target)
            Hw = corotational_weight_space_hessian(mesh, material.mu * soft, material.lam * soft)
            weights, eigenvalues = ritz(modes.weights, Hw, masses)
            # Wobble calibrates the slowest motion: it must stay the body's, not become a softened
            # swing (the robot's legs at the cap made the body 15 x stiffer); aim higher if it did.
            if eigenvalues[0] >= (1.0 - 1e-3) * slowest:
                break
            target *= slowest / eigenvalues[0]
        material = replace(material, mu=material.mu * soft, lam=material.lam * soft)
        timings["softening"] = time.perf_counter() - t0
    timings["modes"] = modes.seconds
    t0 = time.perf_counter()
    labels = skinning_clusters(weights, eigenvalues, mesh.T, mesh.volumes, r, seed=seed)
    timings["clusters"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = assemble_model(mesh, material, masses, d, rig, weights, eigenvalues, labels)
    timings["products"] = time.perf_counter() - t0
    model.timings = timings
    return model


def assemble_model(
    mesh: TetMesh,
    material: Material,
    masses: np.ndarray,
    leak: np.ndarray,
    rig: Rig | None,
    weights: np.ndarray,
    eigenvalues: np.ndarray,
    labels: np.ndarray,
    fibers: Fibers | None = None,
) -> ReducedModel:
    """A reduced model from given modes W (n, m) and cluster labels (t,), with fiber clusters (fibers).

    Used by :func:`build_reduced_model`, and to put a rotated copy of a
    problem or a peer's basis on exactly the same subspace.
    """
    rig_w = rig.weights if isinstance(rig, LBSRig) else None
    products = reduce_products(mesh, material, masses, weights, labels, rig_w, fibers)
    return ReducedModel(
        X=mesh.X,
        T=mesh.T,
        masses=masses,
        mu=material.mu,
        lam=material.lam,
        leak=leak,
        weights=weights,
        eigenvalues=eigenvalues,
        labels=labels,
        centre=products["centre"],
        scale=float(products["scale"]),
        A_L=products["A_L"],
        A_M=products["A_M"],
        C_W=products["C_W"],
        cluster_mu=products["cluster_mu"],
        cluster_lam=products["cluster_lam"],
        rig_weights=rig_w,
        A_LR=products.get("A_LR"),
        A_MR=products.get("A_MR"),
        C_R=products.get("C_R"),
        fiber=products.get("fiber"),
        A_F=products.get("A_F"),
        fiber_axes=products.get("fiber_axes"),
        fiber_strength=products.get("fiber_strength"),
        fiber_bone=products.get("fiber_bone"),
    )
