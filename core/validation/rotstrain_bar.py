"""Rotation-strain coordinates against full space: a clamped bar falling under gravity (issue 27).

Both sides minimise the same backward-Euler incremental potential with the
same elastic model, linear co-rotational elasticity (the RS energy is that
model on the RS gradient, see ``core/rotstrain/energy.py``):

- ``FullSpaceClampedBar``: every free vertex a degree of freedom, Newton with
  the per-tet PSD-projected co-rotational Hessian and a line search;
- ``RSSimulator``: r RS coordinates from the r lowest linear modes, the
  extended basis of r + r (r + 1) / 2 vectors.

``rs_against_full_space`` runs both from rest and reports the RS error, in
the mass norm, relative to the full-space displacement, per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..geometry.primitives import bar_tet_mesh
from ..geometry.tetmesh import TetMesh
from ..model.fem import lumped_mass
from ..model.materials import Material
from ..rotstrain.basis import ReducedFit, extended_basis, linear_modes
from ..rotstrain.coordinates import rs_vectors
from ..rotstrain.energy import reduced_forces, rs_stiffness
from ..rotstrain.poisson import PoissonReconstruction
from ..rotstrain.solver import TOLERANCE, RSSimulator
from ..rotstrain.transfer import RSMap
from ..subspace.eigensolve import factorize_spd
from .reference import corotational_energy_density, corotational_stiffness, corotational_stress


@dataclass(frozen=True)
class ClampedBar:
    """A bar along x clamped at x = 0: mesh, material, vertex masses (n,), clamped vertices (k,)."""

    mesh: TetMesh
    material: Material
    masses: np.ndarray
    fixed: np.ndarray


def clamped_bar(
    length: float = 2.0,
    width: float = 0.5,
    cells_per_unit: int = 4,
    youngs_modulus: float = 1e5,
    poisson_ratio: float = 0.3,
    density: float = 1000.0,
) -> ClampedBar:
    """The validation bar: by default 2 m x 0.5 m x 0.5 m, 81 vertices, 192 tets, soft rubber."""
    X, T = bar_tet_mesh(length, width, cells_per_unit)
    mesh = TetMesh.from_arrays(X, T)
    material = Material.uniform(mesh.t, youngs_modulus, poisson_ratio, density)
    return ClampedBar(mesh, material, lumped_mass(mesh, material.density), np.flatnonzero(X[:, 0] < 1e-9))


class FullSpaceClampedBar:
    """Full-space co-rotational backward Euler with clamped vertices and uniform gravity g (3,)."""

    def __init__(
        self, bar: ClampedBar, time_step: float, gravity: np.ndarray, tolerance: float = TOLERANCE, max_newton: int = 50
    ) -> None:
        self.bar = bar
        mesh = bar.mesh
        self.h = time_step
        self.m3 = np.repeat(bar.masses, 3)
        self.f = np.outer(bar.masses, gravity).ravel()
        free = np.ones(mesh.n, dtype=bool)
        free[bar.fixed] = False
        self.dofs = np.flatnonzero(np.repeat(free, 3))
        self.tol = tolerance * mesh.size()
        self.max_newton = max_newton
        i3 = 3 * mesh.T[:, :, None] + np.arange(3)
        self._rows = np.broadcast_to(i3.reshape(-1, 12)[:, :, None], (mesh.t, 12, 12)).ravel()
        self._cols = np.broadcast_to(i3.reshape(-1, 12)[:, None, :], (mesh.t, 12, 12)).ravel()

    def _F(self, u: np.ndarray) -> np.ndarray:
        mesh = self.bar.mesh
        return np.eye(3) + np.einsum("tai,taj->tij", u.reshape(-1, 3)[mesh.T], mesh.gradients)

    def energy(self, u: np.ndarray, y: np.ndarray) -> float:
        d = u - y
        mat = self.bar.material
        psi = corotational_energy_density(self._F(u), mat.mu, mat.lam)
        return 0.5 / self.h**2 * float(d @ (self.m3 * d)) + float(self.bar.mesh.volumes @ psi) - float(self.f @ u)

    def step(self, u: np.ndarray, u_prev: np.ndarray) -> tuple[np.ndarray, int]:
        """u (3n,) now and before -> u next (3n,) and Newton iterations."""
        mesh, mat, h = self.bar.mesh, self.bar.material, self.h
        y = 2.0 * u - u_prev
        v, e = u.copy(), self.energy(u, y)
        it = 0
        for it in range(1, self.max_newton + 1):
            F = self._F(v)
            P = corotational_stress(F, mat.mu, mat.lam)
            per_vertex = np.einsum("t,tij,taj->tai", mesh.volumes, P, mesh.gradients)
            g = self.m3 * (v - y) / h**2 - self.f
            np.add.at(g.reshape(-1, 3), mesh.T, per_vertex)
            Hf = corotational_stiffness(F, mat.mu, mat.lam).reshape(-1, 3, 3, 3, 3)
            blk = np.einsum("t,taj,tkjlm,tbm->takbl", mesh.volumes, mesh.gradients, Hf, mesh.gradients)
            Hm = sp.csr_matrix((blk.ravel(), (self._rows, self._cols)), shape=(3 * mesh.n,) * 2)
            Hm = (Hm + sp.diags(self.m3 / h**2)).tocsr()[self.dofs][:, self.dofs]
            d = np.zeros_like(v)
            d[self.dofs] = -factorize_spd(Hm, None).solve(g[self.dofs])
            slope = float(g @ d)
            alpha = 1.0
            while True:
                cand = v + alpha * d
                e_new = self.energy(cand, y)
                if e_new <= e + 1e-4 * alpha * slope or alpha < 1e-10:
                    break
                alpha *= 0.5
            v, e = cand, e_new
            if np.sqrt(np.sum(self.m3 * (alpha * d) ** 2) / self.m3.sum()) <= self.tol:
                break
        return v, it


def rs_simulator(
    bar: ClampedBar, modes: int, time_step: float, gravity: np.ndarray, method: str = "pade", tangent_mass: bool = False
):
    """The RS solver of ``modes`` RS coordinates on the bar, and its basis B (m, n, 3).

    tangent_mass: freeze the mass within each step (the seed's Fig. 3 ablation), to measure what keeping it buys.
    """
    U, _ = linear_modes(bar.mesh, bar.material, bar.masses, modes, bar.fixed)
    W, S = rs_vectors(bar.mesh, U)
    B = extended_basis(PoissonReconstruction(bar.mesh, bar.fixed), W, S, bar.masses)
    fit = ReducedFit.build(bar.mesh, B)
    K = rs_stiffness(bar.mesh, bar.material, S)
    f = reduced_forces(B, bar.masses, gravity)
    sim = RSSimulator(
        RSMap(W, S, fit, method), K, time_step, bar.masses.sum(), bar.mesh.size(), f, tangent_mass=tangent_mass
    )
    return sim, fit


@dataclass(frozen=True)
class Comparison:
    """Per step: full-space and RS displacements (s, n, 3), and the RS error relative to the full-space motion."""

    full: np.ndarray
    rs: np.ndarray
    error: np.ndarray

    @property
    def max_error(self) -> float:
        """The largest per-step error, ||u_rs - u_full||_M / max_t ||u_full||_M."""
        return float(self.error.max())


def full_space_trajectory(bar: ClampedBar, steps: int, time_step: float, gravity: np.ndarray) -> np.ndarray:
    """Full-space displacements (steps, n, 3) from rest."""
    ref = FullSpaceClampedBar(bar, time_step, gravity)
    u = up = np.zeros(3 * bar.mesh.n)
    out = []
    for _ in range(steps):
        u, up = ref.step(u, up)[0], u
        out.append(u.reshape(-1, 3))
    return np.array(out)


def rs_against_full_space(
    bar: ClampedBar,
    modes: int,
    steps: int,
    time_step: float,
    gravity: np.ndarray,
    full: np.ndarray | None = None,
    tangent_mass: bool = False,
) -> Comparison:
    """Run RS (``modes`` coordinates) and full space from rest under ``gravity``; compare step by step."""
    if full is None:
        full = full_space_trajectory(bar, steps, time_step, gravity)
    sim, fit = rs_simulator(bar, modes, time_step, gravity, tangent_mass=tangent_mass)
    s = sim.rest_state()
    rs = []
    for _ in range(steps):
        s, _ = sim.step(s)
        rs.append(fit.displacements(s.x))
    rs_arr = np.array(rs)

    def mass_norm(u: np.ndarray) -> np.ndarray:
        return np.sqrt(np.einsum("a,sai,sai->s", bar.masses, u, u))

    scale = mass_norm(full).max()
    return Comparison(full=full, rs=rs_arr, error=mass_norm(rs_arr - full) / scale)
