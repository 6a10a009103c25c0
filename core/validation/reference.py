"""Full-space complementary dynamics (Zhang et al. 2020; Benchekroun et al. 2023, §3): the reference.

Every step minimises the same backward-Euler incremental potential as the
reduced solver, over all 3n vertex displacements instead of a subspace, with
every tet its own rotation and the complementarity constraint ``Jc^T u = 0``
(Jc = D M J) imposed by Lagrange multipliers: Newton's method on the KKT
system of eq. 4,

    [ H   Jc ] [du]   [-g]
    [ Jc^T 0 ] [mu] = [ 0],

with H the elastic Hessian projected to positive semi-definite per tet (so
the direction is always a descent direction) plus the inertia term, and a
backtracking line search.  The KKT system is solved through the Schur
complement on the p constraint columns.  Cost grows with the mesh; it is
for validation and benchmarks on small meshes.

The elastic energy has the same two rest states as the reduced solver:
"rest" is Psi(x); "pose" gives every tet the rig pose's stretch S and trace
as its rest state (:func:`pose_energy_density`), the per-tet form of the
reduced solver's "pose" energy (with one tet per cluster they coincide), so
the reduced solver can be checked against it either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..dynamics.simulator import REST_STATES
from ..errors import SimulationError
from ..geometry.size import character_size
from ..geometry.tetmesh import TetMesh
from ..linalg.polar import rotation
from ..linalg.spd import factorize_spd
from ..model.constraint import complementarity_matrix, constraint_basis
from ..model.materials import Material
from ..model.rig import Rig

# Twist matrices of Kim & Eberle (Dynamic Deformables, 2020): the rotation
# gradient dR/dF has eigenvectors U T_k V^T / sqrt(2) with eigenvalues
# 2 / (s_i + s_j) for the singular-value pairs (0,1), (1,2), (0,2).
_TWISTS = np.array(
    [
        [[0, -1, 0], [1, 0, 0], [0, 0, 0]],
        [[0, 0, 0], [0, 0, 1], [0, -1, 0]],
        [[0, 0, 1], [0, 0, 0], [-1, 0, 0]],
    ],
    dtype=np.float64,
) / np.sqrt(2.0)
_PAIRS = np.array([[0, 1], [1, 2], [0, 2]])


def corotational_energy_density(
    F: np.ndarray, mu: np.ndarray, lam: np.ndarray, s_ref: np.ndarray | float = 3.0
) -> np.ndarray:
    """psi(F) = mu ||F - R||^2 + lam/2 (tr(R^T F) - s_ref)^2 per tet: F (t,3,3) -> (t,).

    s_ref (t,) or scalar: the reference trace, 3 at the rest shape, the rig
    pose's own trace for the "pose" rest state.
    """
    R = rotation(F)
    s = np.einsum("tij,tij->t", R, F)
    return mu * np.einsum("tij,tij->t", F - R, F - R) + 0.5 * lam * (s - s_ref) ** 2


def corotational_stress(F: np.ndarray, mu: np.ndarray, lam: np.ndarray, s_ref: np.ndarray | float = 3.0) -> np.ndarray:
    """First Piola-Kirchhoff stress d psi / d F: (t,3,3)."""
    R = rotation(F)
    s = np.einsum("tij,tij->t", R, F)
    return 2.0 * mu[:, None, None] * (F - R) + (lam * (s - s_ref))[:, None, None] * R


def corotational_stiffness(
    F: np.ndarray, mu: np.ndarray, lam: np.ndarray, project: bool = True, s_ref: np.ndarray | float = 3.0
) -> np.ndarray:
    """d^2 psi / d F^2 as (t, 9, 9) in row-major vec(F), optionally projected to PSD.

    Hessian = 2 mu I + lam vec(R) vec(R)^T + (lam (tr S - 3) - 2 mu) dR/dF, with
    dR/dF from the analytic twist eigensystem of the (det-corrected) SVD.
    """
    t = len(F)
    U, sig, Vt = np.linalg.svd(F)
    flip = np.linalg.det(U @ Vt) < 0
    U[flip, :, 2] *= -1.0
    sig[flip, 2] *= -1.0
    R = U @ Vt
    s = sig.sum(axis=1)
    H = np.broadcast_to(2.0 * mu[:, None, None] * np.eye(9), (t, 9, 9)).copy()
    r = R.reshape(t, 9)
    H += lam[:, None, None] * r[:, :, None] * r[:, None, :]
    coeff = lam * (s - s_ref) - 2.0 * mu
    denom = sig[:, _PAIRS[:, 0]] + sig[:, _PAIRS[:, 1]]  # (t, 3)
    safe = np.where(np.abs(denom) > 1e-12, denom, 1e-12)
    tw = np.einsum("tij,kjl,tlm->tkim", U, _TWISTS, Vt).reshape(t, 3, 9)
    H += np.einsum("t,tk,tki,tkj->tij", coeff, 2.0 / safe, tw, tw)
    if project:
        w, Q = np.linalg.eigh(0.5 * (H + np.swapaxes(H, 1, 2)))
        H = np.einsum("tik,tk,tjk->tij", Q, np.maximum(w, 0.0), Q)
    return H


def pose_energy_density(F: np.ndarray, mu: np.ndarray, lam: np.ndarray, S: np.ndarray, s_ref: np.ndarray) -> np.ndarray:
    """psi(F) = mu ||F - R S||^2 + lam/2 (tr(polar(F)^T F) - s_ref)^2 with R = polar(F S): (t,).

    The "pose" rest state: every tet's rest shape is its rig-deformed
    stretch S (t, 3, 3) and rest trace s_ref (t,); zero, with zero gradient,
    at F = R0 S for any rotation R0.
    """
    G = F @ S
    a = np.einsum("tij,tij->t", rotation(G), G)
    sv = np.einsum("tij,tij->t", rotation(F), F)
    return (
        mu * (np.einsum("tij,tij->t", F, F) - 2.0 * a + np.einsum("tij,tij->t", S, S)) + 0.5 * lam * (sv - s_ref) ** 2
    )


def pose_stress(F: np.ndarray, mu: np.ndarray, lam: np.ndarray, S: np.ndarray, s_ref: np.ndarray) -> np.ndarray:
    """d psi / d F of :func:`pose_energy_density`: (t, 3, 3)."""
    Rg = rotation(F @ S)
    Rv = rotation(F)
    sv = np.einsum("tij,tij->t", Rv, F)
    return 2.0 * mu[:, None, None] * (F - Rg @ S) + (lam * (sv - s_ref))[:, None, None] * Rv


def pose_stiffness(
    F: np.ndarray, mu: np.ndarray, lam: np.ndarray, S: np.ndarray, s_ref: np.ndarray, project: bool = True
) -> np.ndarray:
    """d^2 psi / d F^2 of :func:`pose_energy_density` as (t, 9, 9) in row-major vec(F), optionally PSD.

    With G = F S and vec(M S) = T vec(M), T = I (x) S^T: the ARAP part is
    2 mu (I - T dR/dG T), dR/dG from the twist eigensystem of G; the volume
    part is the co-rotational one with mu = 0.
    """
    t = len(F)
    G = F @ S
    zero, one = np.zeros(t), np.ones(t)
    dRdG = 0.5 * (2.0 * np.eye(9) - corotational_stiffness(G, one, zero, project=False))
    T = np.einsum("ab,tkj->tajbk", np.eye(3), S).reshape(t, 9, 9)  # T[(a,j),(b,k)] = delta_ab S[k, j]
    H = 2.0 * mu[:, None, None] * (np.eye(9) - T @ dRdG @ T)
    H += corotational_stiffness(F, zero, lam, project=False, s_ref=s_ref)
    if project:
        w, Q = np.linalg.eigh(0.5 * (H + np.swapaxes(H, 1, 2)))
        H = np.einsum("tik,tk,tjk->tij", Q, np.maximum(w, 0.0), Q)
    return H


@dataclass(frozen=True)
class ReferenceReport:
    """Newton iterations, final step norm (m) and incremental potential (J)."""

    iterations: int
    step_norm: float
    energy: float


class FullSpaceReference:
    """Complementary dynamics on the full tet mesh with a Newton/KKT solver.

    u: (n, 3) secondary displacement; the rig is given per step as positions
    x_rig (n, 3) with a fixed Jacobian J for the constraint.
    """

    def __init__(
        self,
        mesh: TetMesh,
        material: Material,
        rig: Rig,
        masses: np.ndarray,
        leak: np.ndarray,
        time_step: float,
        damping: float = 0.0,
        arap: bool | None = None,
        max_newton: int = 30,
        tolerance: float = 1e-9,
        rest_state: str = "pose",
    ) -> None:
        if rest_state not in REST_STATES:
            raise SimulationError(f"unknown rest state {rest_state!r}; use 'pose' or 'rest'")
        self.pose = rest_state == "pose"
        self.mesh = mesh
        self.mu = material.mu
        self.lam = np.zeros_like(material.lam) if arap or (arap is None and material.is_arap) else material.lam
        self.masses = masses
        self.h = time_step
        self.c = damping
        self.max_newton = max_newton
        self.tol = tolerance * character_size(mesh.X)
        self.m3 = np.repeat(masses, 3)
        Jc = complementarity_matrix(rig.jacobian(mesh.X), masses, leak)
        # An independent set of constraint directions spanning Jc's columns
        # (redundant columns would make the Schur complement singular).
        self.C = self.m3[:, None] * constraint_basis(sp.csr_matrix(Jc.T), self.m3)
        G = mesh.gradients
        V = mesh.volumes
        self._G, self._V = G, V
        # Sparse pattern of the 12x12 tet blocks, built once.
        i3 = 3 * mesh.T[:, :, None] + np.arange(3)  # (t, 4, 3)
        self._rows = np.broadcast_to(i3.reshape(-1, 12)[:, :, None], (mesh.t, 12, 12)).ravel()
        self._cols = np.broadcast_to(i3.reshape(-1, 12)[:, None, :], (mesh.t, 12, 12)).ravel()

    def deformation_gradients(self, x: np.ndarray) -> np.ndarray:
        """F (t, 3, 3) of positions x (n, 3): F[i, j] = sum_a x_a,i G_a,j."""
        return np.einsum("tai,taj->tij", x[self.mesh.T], self._G)

    def _pose_reference(self, x_rig: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(S (t, 3, 3), s_ref (t,)): each tet's stretch and trace at the rig pose, or None for "rest"."""
        if not self.pose:
            return None
        F = self.deformation_gradients(x_rig)
        R0 = rotation(F)
        S = np.swapaxes(R0, 1, 2) @ F
        return 0.5 * (S + np.swapaxes(S, 1, 2)), np.einsum("tij,tij->t", R0, F)

    def _elastic(self, x: np.ndarray, ref: tuple[np.ndarray, np.ndarray] | None) -> float:
        F = self.deformation_gradients(x)
        if ref is None:
            return float(self._V @ corotational_energy_density(F, self.mu, self.lam))
        return float(self._V @ pose_energy_density(F, self.mu, self.lam, *ref))

    def _elastic_gradient(self, x: np.ndarray, ref: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
        F = self.deformation_gradients(x)
        P = corotational_stress(F, self.mu, self.lam) if ref is None else pose_stress(F, self.mu, self.lam, *ref)
        per_vertex = np.einsum("t,tij,taj->tai", self._V, P, self._G)  # (t, 4, 3)
        g = np.zeros((self.mesh.n, 3))
        np.add.at(g, self.mesh.T, per_vertex)
        return g

    def _elastic_hessian(self, x: np.ndarray, ref: tuple[np.ndarray, np.ndarray] | None) -> sp.csr_matrix:
        F = self.deformation_gradients(x)
        Hf = corotational_stiffness(F, self.mu, self.lam) if ref is None else pose_stiffness(F, self.mu, self.lam, *ref)
        blk = np.einsum("t,taj,tkjlm,tbm->takbl", self._V, self._G, Hf.reshape(-1, 3, 3, 3, 3), self._G)
        n3 = 3 * self.mesh.n
        return sp.csr_matrix((blk.ravel(), (self._rows, self._cols)), shape=(n3, n3))

    def step(
        self, u: np.ndarray, u_prev: np.ndarray, x_rig: np.ndarray, x_rig_now: np.ndarray, x_rig_before: np.ndarray
    ) -> tuple[np.ndarray, ReferenceReport]:
        """One backward-Euler step: returns the new u (n, 3).

        u, u_prev: secondary displacement now and one step before; x_rig: the
        rig positions at the new time; x_rig_now, x_rig_before: at the current
        and previous times (they set the rig's velocity).
        """
        h2 = self.h * self.h
        y = 2.0 * (x_rig_now + u) - (x_rig_before + u_prev)
        m3 = self.m3
        ref = self._pose_reference(x_rig)

        def energy(v: np.ndarray) -> float:
            x = x_rig + v
            d = (x - y).ravel()
            e = 0.5 / h2 * float(d @ (m3 * d)) + self._elastic(x, ref)
            if self.c:
                dv = (v - u).ravel()
                e += 0.5 * self.c / self.h * float(dv @ (m3 * dv))
            return e

        v = u.copy()
        e = energy(v)
        it = 0
        step_norm = np.inf
        for it in range(1, self.max_newton + 1):
            x = x_rig + v
            g = ((x - y).ravel() * m3) / h2 + self._elastic_gradient(x, ref).ravel()
            if self.c:
                g += self.c / self.h * m3 * (v - u).ravel()
            H = self._elastic_hessian(x, ref) + sp.diags(m3 * (1.0 / h2 + self.c / self.h))
            solver = factorize_spd(H, np.repeat(self.mesh.X, 3, axis=0))
            Z = solver.solve(self.C)
            S = self.C.T @ Z
            du = solver.solve(-g)
            du -= Z @ sla.solve(0.5 * (S + S.T), self.C.T @ du, assume_a="pos")
            slope = float(g @ du)
            alpha = 1.0
            while True:
                cand = v + alpha * du.reshape(-1, 3)
                e_new = energy(cand)
                if e_new <= e + 1e-4 * alpha * slope or alpha < 1e-10:
                    break
                alpha *= 0.5
            v, e = cand, e_new
            step_norm = float(np.sqrt(np.sum(m3 * (alpha * du) ** 2) / m3.sum()))
            if step_norm <= self.tol:
                break
        if not np.isfinite(v).all():
            raise SimulationError("the full-space reference diverged; lower the time step")
        return v, ReferenceReport(iterations=it, step_norm=step_norm, energy=e)
