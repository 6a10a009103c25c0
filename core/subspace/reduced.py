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
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def m(self) -> int:
        return int(self.weights.shape[1])

    @property
    def r(self) -> int:
        return int(self.cluster_mu.shape[0])

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

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


def reduce_products(
    mesh: TetMesh,
    material: Material,
    masses: np.ndarray,
    weights: np.ndarray,
    labels: np.ndarray,
    rig_weights: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """The precomputed products of Algorithm 2 in scalar-factored form (see module doc)."""
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
) -> ReducedModel:
    """A reduced model from given modes W (n, m) and cluster labels (t,).

    Used by :func:`build_reduced_model`, and to put a rotated copy of a
    problem or a peer's basis on exactly the same subspace.
    """
    rig_w = rig.weights if isinstance(rig, LBSRig) else None
    products = reduce_products(mesh, material, masses, weights, labels, rig_w)
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
    )
