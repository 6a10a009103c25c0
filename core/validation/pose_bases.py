"""The displacement bases compared in the seed's claim (Xu & Barbič, seed 001; issue 29 item 4).

* :func:`mode_basis`: linear vibration modes plus modal derivatives of a shape taken as rest
  (the seed's eq. 10 and Barbič & James 2005), under the rig-complementarity constraint: the
  stiffness is the full-space reference's Hessian at the rig's shape with that shape's own rest
  state ("pose"), so at a training pose it is the seed's K(Phi(p_i)).
* :func:`warped_basis`: a basis carried to a pose by the rig's per-vertex rotations (the seed's
  "warped modes", its Fig. 4).
* :func:`pca_basis`: M-weighted PCA of full-space snapshots (the seed's pose-independent baseline).
* :func:`skinning_basis`: this project's skinning eigenmodes as a displacement basis.
"""

from __future__ import annotations

import weakref

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..linalg.polar import rotation
from ..subspace.reduced import ReducedModel
from .reduced_run import constraint_projector, mass_orthonormal
from .reference import FullSpaceReference, pose_stiffness

FD_STEP = 1e-4  # of the character's size: the modal derivatives' finite-difference step
_NULL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def posed_hessian(ref: FullSpaceReference, x: np.ndarray, project: bool = True) -> sp.csr_matrix:
    """The reference's elastic Hessian (3n x 3n) at positions x (n, 3), the rig shape x taken as rest.

    project=False keeps the exact (indefinite away from rest) Hessian, for finite differences.
    """
    pose = ref._pose_reference(x)
    if project:
        return ref._elastic_hessian(x, pose)
    F = ref.deformation_gradients(x)
    Hf = pose_stiffness(F, ref.mu, ref.lam, *pose, project=False)
    return _assemble(ref, Hf)


def _hessian_at(ref: FullSpaceReference, x: np.ndarray, rest: np.ndarray) -> sp.csr_matrix:
    """The exact elastic Hessian at x (n, 3) with rest state the rig shape ``rest`` (n, 3)."""
    F = ref.deformation_gradients(x)
    return _assemble(ref, pose_stiffness(F, ref.mu, ref.lam, *ref._pose_reference(rest), project=False))


def _assemble(ref: FullSpaceReference, Hf: np.ndarray) -> sp.csr_matrix:
    blk = np.einsum("t,taj,tkjlm,tbm->takbl", ref._V, ref._G, Hf.reshape(-1, 3, 3, 3, 3), ref._G)
    n3 = 3 * ref.mesh.n
    return sp.csr_matrix((blk.ravel(), (ref._rows, ref._cols)), shape=(n3, n3))


def null_basis(ref: FullSpaceReference) -> np.ndarray:
    """An M-orthonormal basis N (3n, 3n - p) of the reference's constraint space C^T u = 0, cached per reference."""
    if ref not in _NULL:
        n3 = len(ref.m3)
        _NULL[ref] = mass_orthonormal(constraint_projector(ref)(np.eye(n3)), ref.m3)
    return _NULL[ref]


def linear_modes(ref: FullSpaceReference, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k lowest constrained vibration modes (3n, k), M-orthonormal, and eigenvalues (k,) at shape x (n, 3).

    Dense, on the constraint space's basis N: these validation meshes are small, and the sparse
    shift-invert solver (``linalg.eigensolve``) stopped at residuals near 1e-3 on them, which
    would blur the modes the claim is about.
    """
    N = null_basis(ref)
    Kn = N.T @ (posed_hessian(ref, x) @ N)
    lam, Q = np.linalg.eigh(0.5 * (Kn + Kn.T))
    return N @ Q[:, :k], lam[:k]


def modal_derivatives(ref: FullSpaceReference, x: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """Constrained modal derivatives (3n, k(k+1)/2) of the modes Phi (3n, k) at shape x (n, 3).

    (N^T K N) y = -N^T (H : phi_i) phi_j, z_ij = N y (the seed's constrained form, with N the
    constraint space's basis); the third derivative by central differences of the exact Hessian
    along phi_i.
    """
    N = null_basis(ref)
    K = posed_hessian(ref, x)
    Kn = N.T @ (K @ N)
    chol = sla.cho_factor(0.5 * (Kn + Kn.T))
    eps = FD_STEP * float(np.ptp(x, axis=0).max())
    out = []
    for i in range(Phi.shape[1]):  # loop over modes, a handful
        a = np.abs(Phi[:, i]).max()
        d = (eps * Phi[:, i] / a).reshape(-1, 3)
        dK = (_hessian_at(ref, x + d, x) - _hessian_at(ref, x - d, x)) / (2.0 * eps / a)
        out.append(N @ sla.cho_solve(chol, -(N.T @ (dK @ Phi[:, i:]))))
    return np.hstack(out)


def mode_basis(ref: FullSpaceReference, x: np.ndarray, m: int) -> np.ndarray:
    """m columns (3n, m), M-orthonormal: m // 2 linear modes plus m - m // 2 modal-derivative directions.

    The derivatives of the lowest modes (enough for m - m // 2 of them), scaled by
    lambda_1^2 / (lambda_i lambda_j) (Barbič & James 2005: the low modes dominate), are made
    M-orthogonal to the linear modes and reduced by M-weighted PCA to their leading directions.
    """
    k_lin = m // 2
    Phi, lam = linear_modes(ref, x, k_lin)
    k_d = 1
    while k_d * (k_d + 1) // 2 < m - k_lin:
        k_d += 1
    Z = modal_derivatives(ref, x, Phi[:, :k_d])
    scale = [lam[0] ** 2 / (lam[i] * lam[j]) for i in range(k_d) for j in range(i, k_d)]
    Z = Z * np.array(scale)[None, :]
    Z -= Phi @ (Phi.T @ (ref.m3[:, None] * Z))
    return np.hstack([Phi, pca_directions(Z, ref.m3, m - k_lin)])


def pca_directions(S: np.ndarray, m3: np.ndarray, k: int) -> np.ndarray:
    """The k leading M-weighted principal directions (3n, k), M-orthonormal, of the columns of S (3n, s)."""
    root = np.sqrt(m3)[:, None]
    Uw, sigma, _ = np.linalg.svd(root * S, full_matrices=False)
    k = min(k, int(np.sum(sigma > 1e-12 * sigma[0])))
    return Uw[:, :k] / root


def pca_basis(snapshots: np.ndarray, ref: FullSpaceReference, m: int) -> np.ndarray:
    """The seed's PCA baseline: m leading directions (3n, m) of full-space snapshots (s, n, 3)."""
    return pca_directions(snapshots.reshape(len(snapshots), -1).T, ref.m3, m)


def vertex_rotations(weights: np.ndarray, transforms: np.ndarray) -> np.ndarray:
    """Per-vertex rotations (n, 3, 3): the polar factor of the blended linear part sum_b w_vb A_b."""
    L = np.einsum("nb,bij->nij", weights, np.asarray(transforms)[:, :3, :3])
    return rotation(L)


def warped_basis(U_rest: np.ndarray, R: np.ndarray, ref: FullSpaceReference) -> np.ndarray:
    """A rest basis (3n, m) carried to a pose by per-vertex rotations R (n, 3, 3): (3n, m).

    Rotating breaks the complementarity constraint, so the result is projected back onto it and
    made M-orthonormal symmetrically, W (W^T M W)^(-1/2): the nearest M-orthonormal basis, whose
    columns keep their identity from pose to pose (a carried q keeps its meaning).
    """
    n, m = len(R), U_rest.shape[1]
    W = constraint_projector(ref)(np.einsum("nij,njk->nik", R, U_rest.reshape(n, 3, m)).reshape(3 * n, m))
    w, V = np.linalg.eigh(W.T @ (ref.m3[:, None] * W))
    return W @ (V / np.sqrt(w)) @ V.T


def skinning_basis(model: ReducedModel, ref: FullSpaceReference) -> np.ndarray:
    """This project's skinning eigenmodes as displacements: B = Y (x) I_3 (3n, 12 m), M-orthonormalised."""
    B = np.kron(model.basis(), np.eye(3))
    return mass_orthonormal(constraint_projector(ref)(B), ref.m3)
