"""The elastic energy in RS coordinates (seed 003, eq. 6 and §6): quadratic, with a constant reduced stiffness.

Which model.  The seed's comparisons are against "corotated/StVK" full-space
FEM (Fig. 10, where the two are indistinguishable; Fig. 13 and Table 1 name
StVK), and in RS space it replaces Green's strain by the infinitesimal strain
eps (§6, which avoids locking), so its W~ is

    W~(eps) = mu ||eps||^2 + lam/2 tr(eps)^2.

That is *exactly* linear co-rotational elasticity (``model/materials.py``,
psi(F) = mu ||F - R||^2 + lam/2 tr(R^T F - I)^2) evaluated on the RS gradient
F = exp(omega)(eps + I), whenever eps + I is positive definite: then
R = exp(omega) and R^T F - I = eps.  So the full-space model this solver is
validated against is co-rotational, the house material, not StVK.

With eps = sum_i x~_i S_i the energy is (1/2) x~^T K~ x~ for a constant r x r
K~: all the nonlinearity of large deformation has moved into the mass.
"""

from __future__ import annotations

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..model.materials import Material


def rs_stiffness(mesh: TetMesh, material: Material, S: np.ndarray) -> np.ndarray:
    """K~ (r, r) = sum_e V_e (2 mu S_i : S_j + lam tr S_i tr S_j) for RS strain vectors S (r, t, 3, 3)."""
    mu_v = material.mu * mesh.volumes
    lam_v = material.lam * mesh.volumes
    tr = np.einsum("rtii->rt", S)
    K = 2.0 * np.einsum("t,itab,jtab->ij", mu_v, S, S) + np.einsum("t,it,jt->ij", lam_v, tr, tr)
    return 0.5 * (K + K.T)


def rs_energy_density(eps: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """W~(eps) = mu ||eps||^2 + lam/2 tr(eps)^2 per tet: eps (t, 3, 3) -> (t,)."""
    tr = np.einsum("tii->t", eps)
    return mu * np.einsum("tij,tij->t", eps, eps) + 0.5 * lam * tr**2


def reduced_forces(B: np.ndarray, masses: np.ndarray, acceleration: np.ndarray) -> np.ndarray:
    """B^T M g (m,): the reduced force of a uniform acceleration field g (3,) (gravity) on basis B (m, n, 3)."""
    return np.einsum("mai,a,i->m", B, masses, acceleration)
