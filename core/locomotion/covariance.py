"""Precomputed covariance tensors for clustered rotations (seed 002, §3.2.2 and App. F, derived afresh).

Notation (module shapes): t tets, q = 4s reduced columns, m actuation modes,
C clusters, w_e a per-tet weight (gamma_e V_e for actuation, mu_e V_e passive).
Positions are x = Y Z (Z: q x 3), so the deformation gradient of tet e is

    F_e[i, j] = sum_u DY[e, j, u] Z[u, i]           DY = grad Y per tet (t, 3, q)

and the actuation target d = X + sum_v a_v Phi_v has, with abar = [a; 1] and
Phibar = [Phi | X] (n, 3, m+1), the gradient

    Y_e[k, j] = sum_v DPhi[e, j, k, v] abar_v       DPhi (t, 3, 3, m+1).

The best-fit rotation of cluster c maximises sum_e w_e <Omega, F_e Y_e^T>, so
Omega_c = polar(H_c) with H_c = sum_{e in c} w_e F_e Y_e^T (eq. 12; the
appendix's eq. 68 writes the transpose F^T Y, an erratum).  In index form

    H_c[i, k] = sum_u sum_v Z[u, i] K[c, u, k, v] abar_v,
    K[c, u, k, v] = sum_{e in c} w_e sum_j DY[e, j, u] DPhi[e, j, k, v]   (C, q, 3, m+1).

Because Y acts identically on x, y and z, K is 9 times smaller than the
paper's tensor over r = 3q coordinates.  The same K gives the global step's
actuation force (``step.py``): the linear term of the energy is
sum_c <Omega_c, H_c>, linear in Z with coefficient sum_c K[c] abar Omega_c^T.
The passive ARAP term is the case Y_e = I: P[c, u, j] = sum_{e in c} w_e DY[e, j, u].
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..geometry.tetmesh import TetMesh
from ..model.fem import scalar_gradient_operator

# Tets per chunk when forming per-tet outer products: bounds the temporaries to tens of MB.
CHUNK_ENTRIES = 4_000_000


def basis_gradients(mesh: TetMesh, Y: np.ndarray) -> np.ndarray:
    """DY (t, 3, q): DY[e, j, u] = d Y[:, u] / d x_j in tet e.  Y: (n, q)."""
    return np.asarray(scalar_gradient_operator(mesh) @ Y).reshape(mesh.t, 3, Y.shape[1])


def target_gradients(mesh: TetMesh, displacements: np.ndarray) -> np.ndarray:
    """DPhi (t, 3, 3, m+1): DPhi[e, j, k, v] = d Phibar_v[:, k] / d x_j, with Phibar = [Phi | X].

    displacements: (n, 3, m) actuation modes.  The last slice (v = m) is the
    rest shape's gradient, the identity in every tet.
    """
    Phibar = np.concatenate([displacements, mesh.X[:, :, None]], axis=2)  # (n, 3, m+1)
    m1 = Phibar.shape[2]
    return np.asarray(scalar_gradient_operator(mesh) @ Phibar.reshape(mesh.n, 3 * m1)).reshape(mesh.t, 3, 3, m1)


def indicator(labels: np.ndarray) -> sp.csr_matrix:
    """S (C, t): S[c, e] = 1 where tet e is in cluster c.  labels: (t,) dense in [0, C)."""
    t = len(labels)
    return sp.csr_matrix((np.ones(t), (labels, np.arange(t))), shape=(int(labels.max()) + 1, t))


def covariance_tensor(DY: np.ndarray, DPhi: np.ndarray, labels: np.ndarray, w: np.ndarray) -> np.ndarray:
    """K (C, q, 3, m+1) of the module doc.  DY (t, 3, q), DPhi (t, 3, 3, m+1), labels (t,), w (t,)."""
    t, _, q = DY.shape
    m1 = DPhi.shape[3]
    S = indicator(labels)
    K = np.zeros((S.shape[0], q * 3 * m1))
    step = max(1, CHUNK_ENTRIES // (q * 3 * m1))
    for s in range(0, t, step):  # chunks of tets bound memory; each chunk is whole-array work
        sl = slice(s, s + step)
        outer = np.einsum("eju,ejkv->eukv", w[sl, None, None] * DY[sl], DPhi[sl]).reshape(-1, q * 3 * m1)
        K += S[:, sl] @ outer
    return K.reshape(-1, q, 3, m1)


def passive_tensor(DY: np.ndarray, labels: np.ndarray, w: np.ndarray) -> np.ndarray:
    """P (C, q, 3): P[c, u, j] = sum_{e in c} w_e DY[e, j, u].  The ARAP covariance is Z^T P[c]."""
    t, _, q = DY.shape
    weighted = (w[:, None, None] * DY).transpose(0, 2, 1).reshape(t, q * 3)
    return np.asarray(indicator(labels) @ weighted).reshape(-1, q, 3)


def target_gram(DPhi: np.ndarray, w: np.ndarray) -> np.ndarray:
    """G (m+1, m+1): G[v, v'] = sum_e w_e <DPhi_e,v, DPhi_e,v'>_F, so sum_e w_e ||Y_e||^2 = abar^T G abar."""
    flat = DPhi.reshape(len(DPhi), 9, -1)
    return np.einsum("e,ekv,ekw->vw", w, flat, flat)


def contract(K: np.ndarray, Z: np.ndarray, abar: np.ndarray) -> np.ndarray:
    """Cluster covariances H (C, 3, 3): H[c, i, k] = sum_{u,v} Z[u, i] K[c, u, k, v] abar[v].

    K: (C, q, 3, m+1); Z: (q, 3); abar: (m+1,).  O(C q m), independent of the mesh.
    """
    return np.einsum("ui,cuk->cik", Z, K @ abar)
