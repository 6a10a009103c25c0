"""The two subspaces of seed 003 (§5.1): linear modes for the RS vectors, and the extended Euclidean basis B.

u(x~) = P F~(x~) with P the Poisson reconstruction; the seed's basis B holds
its first and second derivatives at the rest shape,

    B_i  = P dF~/dx~_i (0)       = P (W_i + S_i)                    (the modes themselves)
    B_ij = P d2F~/dx~_i dx~_j (0) = P (W_i S_j + W_j S_i + (W_i W_j + W_j W_i) / 2),   i <= j

(exp(w)(e + I) = I + w + e + w e + w^2 / 2 + ...), so |B| = r + r (r + 1) / 2
before dependent columns are dropped.  Positions are then fitted in span(B)
(eq. 5): x(x~) = Phi F~(x~), Phi = (B^T grad^T V grad B)^-1 B^T grad^T V.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import SubspaceError
from ..geometry.tetmesh import TetMesh
from ..linalg.eigensolve import constrained_eigenmodes
from ..model.fem import corotational_rest_hessian
from ..model.materials import Material
from .coordinates import displacement_gradients
from .poisson import PoissonReconstruction

# Columns of B whose mass-Gram eigenvalue is below this share of the largest are dependent and dropped.
DEPENDENT_COLUMN_TOL = 1e-10


def rigid_modes(X: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Translations and infinitesimal rotations about the centre of mass, M-orthonormal: (6, n, 3)."""
    c = masses @ X / masses.sum()
    r = X - c
    n = len(X)
    R = np.zeros((6, n, 3))
    for k in range(3):
        R[k, :, k] = 1.0
        R[3 + k] = np.cross(np.eye(3)[k], r)
    return mass_orthonormalize(R, masses)


def mass_orthonormalize(V: np.ndarray, masses: np.ndarray, tol: float = DEPENDENT_COLUMN_TOL) -> np.ndarray:
    """An M-orthonormal basis (m', n, 3) of the span of fields V (m, n, 3), dependent ones dropped."""
    Gm = np.einsum("kai,a,lai->kl", V, masses, V)
    w, Q = sla.eigh(0.5 * (Gm + Gm.T))
    keep = w > tol * w.max()
    Q = Q[:, keep] / np.sqrt(w[keep])
    return np.einsum("kl,kai->lai", Q, V)


def project_out(V: np.ndarray, Y: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """V (m, n, 3) minus its M-projection on M-orthonormal fields Y (c, n, 3)."""
    return V - np.einsum("mc,cai->mai", np.einsum("mai,a,cai->mc", V, masses, Y), Y)


def linear_modes(
    mesh: TetMesh, material: Material, masses: np.ndarray, k: int, fixed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The k lowest linear vibration modes of the co-rotational rest Hessian: (k, n, 3) M-orthonormal, (k,) eigenvalues.

    fixed: Dirichlet vertices (k,) held at zero; None for a free object, whose
    six rigid motions are excluded (the floating frame carries them).
    """
    H = corotational_rest_hessian(mesh, material.mu, material.lam)
    m3 = np.repeat(masses, 3)
    coords = np.repeat(mesh.X, 3, axis=0)
    if fixed is None:
        dofs = np.arange(3 * mesh.n)
        Y = rigid_modes(mesh.X, masses).reshape(6, -1).T
    else:
        keep = np.ones(mesh.n, dtype=bool)
        keep[np.asarray(fixed)] = False
        dofs = np.flatnonzero(np.repeat(keep, 3))
        Y = np.zeros((len(dofs), 0))
    res = constrained_eigenmodes(H[dofs][:, dofs], m3[dofs], Y, k, coords=coords[dofs])
    U = np.zeros((k, 3 * mesh.n))
    U[:, dofs] = res.vectors.T
    return U.reshape(k, mesh.n, 3), res.eigenvalues


def second_order_gradients(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """d2 F~ / dx~_i dx~_j at rest for i <= j: W, S (r, t, 3, 3) -> (r (r + 1) / 2, t, 3, 3)."""
    i, j = np.triu_indices(len(W))
    WS = W[i] @ S[j] + W[j] @ S[i]
    WW = W[i] @ W[j]
    return WS + 0.5 * (WW + W[j] @ W[i])


def extended_basis(
    poisson: PoissonReconstruction, W: np.ndarray, S: np.ndarray, masses: np.ndarray, free: bool = False
) -> np.ndarray:
    """The extended basis B (m, n, 3), M-orthonormal, from first and second derivatives of u(x~) at rest.

    free: also remove rigid motions, which the floating frame carries (it
    keeps the frame's rotation and B from describing the same motion).
    """
    fields = np.concatenate([W + S, second_order_gradients(W, S)])
    B = poisson.reconstruct(fields)
    if free:
        B = project_out(B, rigid_modes(poisson.mesh.X, masses), masses)
    B = mass_orthonormalize(B, masses)
    if len(B) == 0:
        raise SubspaceError("the extended basis is empty; use at least one mode")
    return B


@dataclass(frozen=True)
class ReducedFit:
    """The Poisson fit restricted to span(B) (eq. 5): x = Phi vec(F~).

    B: (m, n, 3) basis; phi: (m, 9 t) acting on row-major per-tet displacement gradients.
    """

    B: np.ndarray
    phi: np.ndarray

    @classmethod
    def build(cls, mesh: TetMesh, B: np.ndarray) -> ReducedFit:
        gB = displacement_gradients(mesh, B).reshape(len(B), -1)  # (m, 9t)
        Vg = gB * np.repeat(mesh.volumes, 9)
        A = Vg @ gB.T
        return cls(B=B, phi=sla.solve(0.5 * (A + A.T), Vg, assume_a="pos"))

    def fit(self, Fd: np.ndarray) -> np.ndarray:
        """Reduced coordinates x (m,) of displacement gradients Fd (t, 3, 3)."""
        return self.phi @ Fd.ravel()

    def displacements(self, x: np.ndarray) -> np.ndarray:
        """u = B x: (m,) -> (n, 3)."""
        return (x @ self.B.reshape(len(self.B), -1)).reshape(self.B.shape[1:])  # one BLAS call, not einsum's loop
