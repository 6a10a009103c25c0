"""The physics-skinning solve with fixed rotations (Song et al., §3, eqs. 2-12).

Energy, per tet e with rest volume V_e, Lamé (mu_e, lam_e), rotation R_e fixed
from the rig and deformation gradient F_e = (K x)_e:

    E(x) = sum_e V_e (mu_e ||F_e - R_e||^2 + lam_e / 2 (tr(R_e^T F_e) - 3)^2) - f . x,

with pinned vertices x_p = H_b [X_p; 1] following their bone (§3, Fig. 2).  With
R fixed the energy is quadratic in x (the seed's condensed mixed-FEM system with
[R] given, eq. 12).  Its Hessian is

    A(R) = K^T blockdiag(2 V mu I_9 + V lam vec(R) vec(R)^T) K.

The mu part does not depend on R, the lam part does (rank one per tet, through
vec(R)): only for ARAP (lam = 0) is the matrix constant.  Then it is factored once
and a frame is a right-hand side (sparse product, no loop over tets) plus a
back-substitution.  With lam > 0 each frame refactors A(R) (exact, slower).

The unknown is the displacement u = x - X; pinned entries are eliminated
(condensed solve A_ff u_f = -g0_f - A_fp u_p + f_f), so the rest pose and rigid
motions are reproduced to round-off.  Positions are (n, 3); flattened vectors
interleave per vertex (``3 a + i``) as in ``core.model.fem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..geometry.tetmesh import TetMesh
from ..model.fem import deformation_gradient_operator
from ..subspace.eigensolve import SPDSolver, factorize_spd

_VEC_I = np.eye(3).ravel()


def hessian(
    K: sp.csr_matrix, volumes: np.ndarray, mu: np.ndarray, lam: np.ndarray, R: np.ndarray | None
) -> sp.csr_matrix:
    """A (3n x 3n) = K^T blockdiag(2 V mu I_9 + V lam r r^T) K; R (t, 3, 3) needed when lam != 0."""
    A = K.T @ sp.diags(np.repeat(2.0 * volumes * mu, 9)) @ K
    if np.any(lam != 0.0):
        if R is None:
            raise ValueError("a material with a volume term (lam != 0) needs the tets' rotations R")
        r = R.reshape(-1, 9)  # (t, 9)
        G = sp.csr_matrix(K.multiply(np.sqrt(np.repeat(volumes * lam, 9))[:, None]))
        t = len(r)
        Rb = sp.csr_matrix(  # (t x 9t): row e is vec(R_e) on tet e's block
            (r.ravel(), (np.repeat(np.arange(t), 9), np.arange(9 * t))), shape=(t, 9 * t)
        )
        Gr = Rb @ G  # (t x 3n): sqrt(V lam) vec(R_e)^T K_e
        A = A + Gr.T @ Gr
    return sp.csr_matrix(A)


def rest_gradient(K: sp.csr_matrix, volumes: np.ndarray, mu: np.ndarray, lam: np.ndarray, R: np.ndarray) -> np.ndarray:
    """g0 (3n,): the energy gradient at x = X (where F = I), exactly zero when every R_e = I.

    g0 = K^T [2 V mu (vec I - vec R) + V lam (tr R - 3) vec R].
    """
    r = R.reshape(-1, 9)
    tr = np.einsum("tii->t", R)
    per = (2.0 * volumes * mu)[:, None] * (_VEC_I - r) + (volumes * lam * (tr - 3.0))[:, None] * r
    return K.T @ per.ravel()


@dataclass
class PhysicsSkin:
    """Fixed-rotation physics skinning on a tet mesh.

    mesh: TetMesh (n vertices, t tets); mu, lam: (t,); pins: (p,) vertex indices,
    pin_bone: (p,) their bones.  For ARAP (lam == 0) ``factor`` is built once.
    """

    mesh: TetMesh
    mu: np.ndarray
    lam: np.ndarray
    pins: np.ndarray
    pin_bone: np.ndarray
    K: sp.csr_matrix = field(repr=False)
    free: np.ndarray = field(repr=False)  # (3(n - p),) free dofs
    fixed: np.ndarray = field(repr=False)  # (3p,) pinned dofs
    A: sp.csr_matrix | None = field(repr=False)
    factor: SPDSolver | None = field(repr=False)
    A_fp: sp.csr_matrix | None = field(repr=False)  # free x pinned block of A when prefactored

    @classmethod
    def build(
        cls, mesh: TetMesh, mu: np.ndarray, lam: np.ndarray, pins: np.ndarray, pin_bone: np.ndarray
    ) -> PhysicsSkin:
        mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), (mesh.t,))
        lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (mesh.t,))
        pins = np.asarray(pins, dtype=np.int64)
        fixed = (3 * pins[:, None] + np.arange(3)).ravel()
        free = np.setdiff1d(np.arange(3 * mesh.n), fixed)
        K = deformation_gradient_operator(mesh)
        A = factor = A_fp = None
        if not np.any(lam != 0.0):
            A = hessian(K, mesh.volumes, mu, lam, None)
            factor = cls._factor(A, free, mesh)
            A_fp = sp.csr_matrix(A[free][:, fixed])
        return cls(mesh, mu, lam, pins, np.asarray(pin_bone, dtype=np.int64), K, free, fixed, A, factor, A_fp)

    @staticmethod
    def _factor(A: sp.csr_matrix, free: np.ndarray, mesh: TetMesh) -> SPDSolver:
        coords = np.repeat(mesh.X, 3, axis=0)[free]
        return factorize_spd(A[free][:, free], coords)

    @property
    def prefactored(self) -> bool:
        return self.factor is not None

    def pin_targets(self, transforms: np.ndarray) -> np.ndarray:
        """x_p = H_b [X_p; 1] (p, 3) for bone transforms (b, 3, 4)."""
        H = np.asarray(transforms, dtype=np.float64)[self.pin_bone, :3, :]  # (p, 3, 4)
        Xp = self.mesh.X[self.pins]
        return np.einsum("pij,pj->pi", H[:, :, :3], Xp) + H[:, :, 3]

    def positions(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """Deformed positions (n, 3) for bone transforms (b, 3, 4), tet rotations R (t, 3, 3)
        and an optional applied force (n, 3) in newtons."""
        factor, A_fp = self.factor, self.A_fp
        if factor is None:
            A = hessian(self.K, self.mesh.volumes, self.mu, self.lam, R)
            factor, A_fp = self._factor(A, self.free, self.mesh), A[self.free][:, self.fixed]
        u = np.zeros(3 * self.mesh.n)
        u[self.fixed] = (self.pin_targets(transforms) - self.mesh.X[self.pins]).ravel()
        rhs = -rest_gradient(self.K, self.mesh.volumes, self.mu, self.lam, R)
        if force is not None:
            rhs = rhs + np.asarray(force, dtype=np.float64).ravel()
        rhs = rhs[self.free] - A_fp @ u[self.fixed]
        u[self.free] = factor.solve(rhs)
        return self.mesh.X + u.reshape(-1, 3)

    def kkt_positions(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """The same pose from the full KKT system [A C^T; C 0][u; l] = [-g0 + f; u_p] (reference, slow)."""
        A = hessian(self.K, self.mesh.volumes, self.mu, self.lam, R)
        n3, p3 = 3 * self.mesh.n, len(self.fixed)
        C = sp.csr_matrix((np.ones(p3), (np.arange(p3), self.fixed)), shape=(p3, n3))
        M = sp.bmat([[A, C.T], [C, None]], format="csc")
        g = -rest_gradient(self.K, self.mesh.volumes, self.mu, self.lam, R)
        if force is not None:
            g = g + np.asarray(force, dtype=np.float64).ravel()
        up = (self.pin_targets(transforms) - self.mesh.X[self.pins]).ravel()
        sol = spla.spsolve(M, np.concatenate([g, up]))
        return self.mesh.X + sol[:n3].reshape(-1, 3)
