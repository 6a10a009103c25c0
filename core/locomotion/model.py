"""Everything a locomotion rollout needs, precomputed once: sizes q, m, C and k only at run time.

The contact samples k are the one size that follows the mesh: a creature samples every boundary
vertex (so none sinks between samples), which costs O(k q) per iteration, small beside the rest
up to tens of thousands of vertices (bench: 2.2 ms per step at 700 vertices, 4.1 at 10k).

Shapes: n vertices, t tets, s skinning modes (q = 4s), m actuation modes,
Cp passive and Ca actuation clusters, k contact samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contact.ground import lowest_band, sample_vertices
from ..geometry.tetmesh import TetMesh
from ..model.constraint import normalization
from ..model.fem import lumped_mass, scalar_laplacian
from ..model.materials import Material
from ..subspace.clusters import skinning_clusters
from .actuation_modes import ActuationModes, vibration_modes
from .covariance import basis_gradients, covariance_tensor, passive_tensor, target_gradients, target_gram
from .subspace import SimulationSubspace, simulation_subspace


@dataclass(frozen=True)
class LocomotionModel:
    """Reduced products (module doc for shapes).

    A_M, A_mu, A_gamma (q, q): Y^T M Y and Y^T Ls Y with Ls the mu- and gamma-weighted Laplacians;
    mass_Y (q,): Y^T m; orient (q, 3): Y^T M (X - com0), whose product with Z gives the
    mass-weighted covariance the body's orientation is read from; P (Cp, q, 3), K (Ca, q, 3, m+1),
    G_target (m+1, m+1) (``covariance.py``); passive_constant: sum_e mu_e V_e * 3 / 2;
    rest Z0 (q, 3); samples (k,) vertex ids and Y_samples (k, q); radius: RMS radius (m).
    """

    A_M: np.ndarray
    A_mu: np.ndarray
    A_gamma: np.ndarray
    mass_Y: np.ndarray
    orient: np.ndarray
    P: np.ndarray
    K: np.ndarray
    G_target: np.ndarray
    passive_constant: float
    rest: np.ndarray
    samples: np.ndarray
    Y_samples: np.ndarray
    mass: float
    radius: float
    subspace: SimulationSubspace
    modes: ActuationModes
    passive_labels: np.ndarray
    actuation_labels: np.ndarray

    @property
    def q(self) -> int:
        return self.A_M.shape[0]

    @property
    def m(self) -> int:
        return self.K.shape[3] - 1

    def positions(self, Z: np.ndarray) -> np.ndarray:
        """Full vertex positions (n, 3) of reduced coordinates Z (q, 3): for output, never on the hot path."""
        return self.subspace.basis @ Z

    def centre_of_mass(self, Z: np.ndarray) -> np.ndarray:
        """(3,) from Z (q, 3) in O(q)."""
        return self.mass_Y @ Z / self.mass


def build_locomotion_model(
    mesh: TetMesh,
    material: Material,
    s: int = 5,
    m: int = 6,
    passive_clusters: int = 5,
    actuation_clusters: int = 1,
    samples: int = 30,
    actuation_stiffness: float = 1.0,
    seed: int = 0,
    sample_band: tuple[tuple[float, float, float], float] | None = None,
) -> LocomotionModel:
    """Precompute the locomotion model of a tet mesh.

    s skinning modes (simulation), m actuation modes, cluster counts, k contact
    samples on the boundary; actuation_stiffness: gamma / mu per tet (the
    actuation energy's weight relative to the passive ARAP energy);
    sample_band: (up, share) puts the samples on the boundary's lowest share
    of heights along up (a crawler's underside); None spreads them over the
    whole boundary (the seed's choice, for characters that roll or jump).
    """
    masses = lumped_mass(mesh, material.density)
    sub = simulation_subspace(mesh, material, masses, s)
    modes = vibration_modes(mesh, material, masses, m)
    Y = sub.basis
    mu_v = material.mu * mesh.volumes
    gamma_v = actuation_stiffness * mu_v
    passive = skinning_clusters(sub.weights, sub.eigenvalues, mesh.T, mesh.volumes, passive_clusters, seed)
    active = skinning_clusters(sub.weights, sub.eigenvalues, mesh.T, mesh.volumes, actuation_clusters, seed)
    DY = basis_gradients(mesh, Y)
    DPhi = target_gradients(mesh, modes.displacements)
    MY = masses[:, None] * Y
    com0 = masses @ mesh.X / masses.sum()
    candidates = mesh.boundary_vertices()
    if sample_band is not None:
        candidates = lowest_band(mesh.X, candidates, np.asarray(sample_band[0]), sample_band[1])
    ids = sample_vertices(mesh.X, candidates, samples)
    _, radius = normalization(mesh.X)
    return LocomotionModel(
        A_M=Y.T @ MY,
        A_mu=Y.T @ (scalar_laplacian(mesh, material.mu) @ Y),
        A_gamma=actuation_stiffness * (Y.T @ (scalar_laplacian(mesh, material.mu) @ Y)),
        mass_Y=MY.sum(axis=0),
        orient=MY.T @ (mesh.X - com0),
        P=passive_tensor(DY, passive, mu_v),
        K=covariance_tensor(DY, DPhi, active, gamma_v),
        G_target=target_gram(DPhi, gamma_v),
        passive_constant=1.5 * float(mu_v.sum()),
        rest=sub.rest,
        samples=ids,
        Y_samples=Y[ids],
        mass=float(masses.sum()),
        radius=radius,
        subspace=sub,
        modes=modes,
        passive_labels=passive,
        actuation_labels=active,
    )
