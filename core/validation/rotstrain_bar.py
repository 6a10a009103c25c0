"""Rotation-strain coordinates against full space: a clamped bar under gravity, a free bar spinning (issue 27).

Both sides minimise the same backward-Euler incremental potential with the
same elastic model, linear co-rotational elasticity (the RS energy is that
model on the RS gradient, see ``core/rotstrain/energy.py``):

- ``FullSpaceClampedBar``: every free vertex a degree of freedom, Newton with
  the per-tet PSD-projected co-rotational Hessian and a line search;
- ``RSSimulator``: r RS coordinates from the r lowest linear modes, the
  extended basis of r + r (r + 1) / 2 vectors.

``rs_against_full_space`` runs both from rest and reports the RS error, in
the mass norm, relative to the full-space displacement, per step.

The free case, ``spinning_bar_against_full_space``: the same bar unclamped,
spun and drifting with no gravity, RS in a floating frame
(``core/rotstrain/frame.py``) against the same full-space solver with no
clamped vertex; each side's motion is split into a best rigid fit and the
deformation left in that frame, which are compared separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..geometry.primitives import bar_tet_mesh
from ..geometry.tetmesh import TetMesh
from ..linalg.polar import rotation
from ..linalg.spd import factorize_spd
from ..model.fem import lumped_mass
from ..model.materials import Material
from ..rotstrain.basis import ReducedFit, extended_basis, linear_modes
from ..rotstrain.coordinates import rotation_log, rs_vectors, vee
from ..rotstrain.energy import reduced_forces, rs_stiffness
from ..rotstrain.frame import FloatingRSSimulator
from ..rotstrain.poisson import PoissonReconstruction
from ..rotstrain.solver import TOLERANCE, RSSimulator
from ..rotstrain.transfer import RSMap
from .reference import corotational_energy_density, corotational_stiffness, corotational_stress


@dataclass(frozen=True)
class BarCase:
    """A bar along x: mesh, material, vertex masses (n,), clamped vertices (k,) (at x = 0; none for a free bar)."""

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
) -> BarCase:
    """The validation bar: by default 2 m x 0.5 m x 0.5 m, 81 vertices, 192 tets, soft rubber."""
    X, T = bar_tet_mesh(length, width, cells_per_unit)
    mesh = TetMesh.from_arrays(X, T)
    material = Material.uniform(mesh.t, youngs_modulus, poisson_ratio, density)
    return BarCase(mesh, material, lumped_mass(mesh, material.density), np.flatnonzero(X[:, 0] < 1e-9))


def free_bar(length: float = 2.0, width: float = 0.5, cells_per_unit: int = 4, youngs_modulus: float = 1e5) -> BarCase:
    """:func:`clamped_bar` with nothing clamped: a free object for the floating frame."""
    bar = clamped_bar(length, width, cells_per_unit, youngs_modulus)
    return BarCase(bar.mesh, bar.material, bar.masses, np.zeros(0, dtype=np.int64))


class FullSpaceClampedBar:
    """Full-space co-rotational backward Euler with clamped vertices (if any) and uniform gravity g (3,)."""

    def __init__(
        self, bar: BarCase, time_step: float, gravity: np.ndarray, tolerance: float = TOLERANCE, max_newton: int = 50
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
    bar: BarCase, modes: int, time_step: float, gravity: np.ndarray, method: str = "pade", tangent_mass: bool = False
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


def full_space_trajectory(
    bar: BarCase, steps: int, time_step: float, gravity: np.ndarray, velocity: np.ndarray | None = None
) -> np.ndarray:
    """Full-space displacements (steps, n, 3) from the rest shape with vertex velocities (n, 3) (zero if None)."""
    ref = FullSpaceClampedBar(bar, time_step, gravity)
    u = np.zeros(3 * bar.mesh.n)
    up = u if velocity is None else -time_step * velocity.ravel()
    out = []
    for _ in range(steps):
        u, up = ref.step(u, up)[0], u
        out.append(u.reshape(-1, 3))
    return np.array(out)


def rs_against_full_space(
    bar: BarCase,
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


def rigid_fit(p: np.ndarray, rest: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mass-weighted best rigid fit of positions p (n, 3) to the rest shape (n, 3).

    Returns the centre (3,), rotation R (3, 3) and what is left, the deformation in the fitted frame
    R^T (p - c) - (rest - rest centre), (n, 3).
    """
    w = masses / masses.sum()
    c, c0 = w @ p, w @ rest
    R = rotation(np.einsum("a,ai,aj->ij", masses, p - c, rest - c0)[None])[0]
    return c, R, (p - c) @ R - (rest - c0)


@dataclass(frozen=True)
class FreeComparison:
    """A spinning free bar, RS in a floating frame against full space, per step.

    deformation_error: mass-norm distance of the deformations left after each side's best rigid fit,
    relative to the largest full-space deformation; frame_error: distance of the fitted centres
    relative to the bar's size, and angle between the fitted rotations (rad).
    """

    deformation_error: np.ndarray
    center_error: np.ndarray
    angle_error: np.ndarray
    largest_deformation: float


def spinning_bar_against_full_space(
    bar: BarCase, modes: tuple[int, ...], steps: int, time_step: float, spin: np.ndarray, drift: np.ndarray
) -> list[FreeComparison]:
    """Spin the free bar about its centre at ``spin`` (rad/s, (3,)) while it drifts at ``drift`` (m/s).

    One full-space run, then one RS run in a floating frame per entry of ``modes``, each compared with it.
    """
    X, m = bar.mesh.X, bar.masses
    center = m @ X / m.sum()
    velocity = np.cross(spin, X - center) + drift
    full = full_space_trajectory(bar, steps, time_step, np.zeros(3), velocity) + X
    fits = [rigid_fit(p, X, m) for p in full]
    largest = max(float(np.sqrt(m @ np.sum(d**2, axis=1))) for _, _, d in fits)
    out = []
    for r in modes:
        U, _ = linear_modes(bar.mesh, bar.material, m, r, None)
        W, S = rs_vectors(bar.mesh, U)
        B = extended_basis(PoissonReconstruction(bar.mesh, None, m), W, S, m, free=True)
        rsmap = RSMap(W, S, ReducedFit.build(bar.mesh, B), "pade")
        sim = FloatingRSSimulator(rsmap, rs_stiffness(bar.mesh, bar.material, S), X, m, time_step)
        s0 = sim.rest_state()
        s = sim.state(s0.q, s0.R, s0.t, velocity)
        dev, dc, da = [], [], []
        for c2, R2, d2 in fits:
            s, _ = sim.step(s)
            c1, R1, d1 = rigid_fit(s.p, X, m)
            dev.append(np.sqrt(m @ np.sum((d1 - d2) ** 2, axis=1)) / largest)
            dc.append(np.linalg.norm(c1 - c2) / bar.mesh.size())
            da.append(float(np.linalg.norm(vee(rotation_log((R1.T @ R2)[None])[0]))))
        out.append(FreeComparison(np.array(dev), np.array(dc), np.array(da), largest))
    return out
