"""Positions from per-tet displacement gradients: the Poisson reconstruction of seed 003, eq. 3.

    u = argmin_u  sum_e V_e || grad_e u - F~_e ||^2

The normal equations are the scalar cotangent Laplacian (one per coordinate,
the same matrix for x, y and z), factored once.  A displacement gradient
field fixes u only up to a translation, so one of two constraints is needed:
Dirichlet vertices held at zero (a fixed object), or a zero mass-weighted
mean (a free object, whose translation is the floating frame's job).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SimulationError
from ..geometry.tetmesh import TetMesh
from ..linalg.spd import factorize_spd
from ..model.fem import scalar_gradient_operator, scalar_laplacian


def gradient_rhs_operator(mesh: TetMesh) -> sp.csr_matrix:
    """D^T V (n x 3t): maps per-tet gradients to the Poisson right-hand side.

    ``(D^T V f)[a] = sum_e V_e f_e . G_e,a`` for f (3t,) with f[3e + j] the j-th component in tet e.
    """
    D = scalar_gradient_operator(mesh)
    return sp.csr_matrix(D.T @ sp.diags(np.repeat(mesh.volumes, 3)))


class PoissonReconstruction:
    """Prefactored least-squares fit of positions to per-tet displacement gradients.

    fixed: vertex indices (k,) held at zero, or None for a free object, whose
    result then has zero mass-weighted mean (``masses`` (n,) required).
    """

    def __init__(self, mesh: TetMesh, fixed: np.ndarray | None = None, masses: np.ndarray | None = None) -> None:
        self.mesh = mesh
        self.rhs_op = gradient_rhs_operator(mesh)
        L = scalar_laplacian(mesh)
        if fixed is None:
            if masses is None:
                raise SimulationError("a free object's reconstruction needs the vertex masses")
            # Pin one vertex to make the Laplacian definite; the mean is removed after the solve,
            # which gives the same answer as the mean constraint since the solution is unique up to a constant.
            pinned = np.array([0])
        else:
            pinned = np.unique(np.asarray(fixed, dtype=np.int64))
            if pinned.size == 0:
                raise SimulationError("no fixed vertices given; pass fixed=None for a free object")
        self.mean_free = fixed is None
        self.weights = None if masses is None else np.asarray(masses, dtype=np.float64) / float(np.sum(masses))
        free = np.ones(mesh.n, dtype=bool)
        free[pinned] = False
        self.free = np.flatnonzero(free)
        Lf = sp.csc_matrix(L[self.free][:, self.free])
        self._solver = factorize_spd(Lf, mesh.X[self.free])

    def rhs(self, Fd: np.ndarray) -> np.ndarray:
        """Right-hand sides (k, n, 3) of displacement gradients Fd (k, t, 3, 3)."""
        k, t = Fd.shape[:2]
        # column (m, i) holds component i of field m; rows 3e + j the gradient direction j in tet e
        f = np.swapaxes(Fd, 2, 3).reshape(k, 3 * t, 3).transpose(1, 0, 2).reshape(3 * t, 3 * k)
        return np.asarray(self.rhs_op @ f).reshape(self.mesh.n, k, 3).transpose(1, 0, 2)

    def solve_rhs(self, b: np.ndarray) -> np.ndarray:
        """Solve the normal equations for right-hand sides b (k, n, 3) -> u (k, n, 3)."""
        k, n = b.shape[:2]
        bf = b[:, self.free].transpose(1, 0, 2).reshape(len(self.free), 3 * k)
        u = np.zeros((n, 3 * k))
        u[self.free] = self._solver.solve(bf)
        u = u.reshape(n, k, 3).transpose(1, 0, 2)
        if self.mean_free:
            assert self.weights is not None
            u -= np.einsum("a,kai->ki", self.weights, u)[:, None, :]
        return u

    def reconstruct(self, Fd: np.ndarray) -> np.ndarray:
        """Displacements u (k, n, 3) best fitting displacement gradients Fd (k, t, 3, 3)."""
        return self.solve_rhs(self.rhs(Fd))
