"""Material parameters: Lamé coefficients, per-tet fields and presets.

Units are SI: Young's modulus in Pa, density in kg/m^3.  The elastic energy
density used everywhere is linear co-rotational elasticity,

    psi(F) = mu ||F - R||_F^2 + lam/2 tr(R^T F - I)^2,     R = polar(F),

whose linearisation at rest is linear elasticity with Lamé coefficients
(mu, lam).  ARAP is the special case lam = 0 (Poisson ratio 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MaterialError

# Above this the (1 - 2 nu) denominator makes lam explode and the co-rotational
# line search stalls; nearly incompressible flesh is 0.45-0.49.
MAX_POISSON = 0.49


def lame_parameters(
    youngs_modulus: np.ndarray | float, poisson_ratio: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """(mu, lam) from Young's modulus E and Poisson ratio nu (scalars or (t,) arrays)."""
    E = np.asarray(youngs_modulus, dtype=np.float64)
    nu = np.asarray(poisson_ratio, dtype=np.float64)
    if not (np.isfinite(E).all() and (E > 0).all()):
        raise MaterialError("Young's modulus must be positive and finite everywhere; check the stiffness settings")
    if not (np.isfinite(nu).all() and (nu >= 0).all() and (nu <= MAX_POISSON + 1e-6).all()):
        raise MaterialError(f"Poisson ratio must lie in [0, {MAX_POISSON}]; lower it for a stable simulation")
    nu = np.minimum(nu, MAX_POISSON)  # Blender's float32 0.49 is 0.49000001
    mu = E / (2.0 * (1.0 + nu))
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    return mu, lam


@dataclass(frozen=True)
class Material:
    """Per-tet material fields. mu, lam, density: (t,) arrays."""

    mu: np.ndarray
    lam: np.ndarray
    density: np.ndarray

    @classmethod
    def uniform(cls, t: int, youngs_modulus: float, poisson_ratio: float, density: float) -> Material:
        return cls.from_fields(np.full(t, youngs_modulus), np.full(t, poisson_ratio), np.full(t, density))

    @classmethod
    def from_fields(cls, youngs_modulus: np.ndarray, poisson_ratio: np.ndarray, density: np.ndarray) -> Material:
        mu, lam = lame_parameters(youngs_modulus, poisson_ratio)
        rho = np.asarray(density, dtype=np.float64)
        if not (np.isfinite(rho).all() and (rho > 0).all()):
            raise MaterialError("density must be positive and finite everywhere; check the density settings")
        mu, lam, rho = np.broadcast_arrays(mu, lam, rho)
        return cls(mu=np.array(mu), lam=np.array(lam), density=np.array(rho))

    @property
    def is_arap(self) -> bool:
        """True when the Poisson ratio is zero everywhere (no volume term)."""
        return bool(np.all(self.lam == 0.0))


def vertex_field_to_tets(T: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Average a per-vertex field onto tets. T: (t, 4), values: (n,) -> (t,)."""
    return np.asarray(values, dtype=np.float64)[T].mean(axis=1)


def scaled_field(T: np.ndarray, base: float, mask: np.ndarray | None, low: float, high: float) -> np.ndarray:
    """A per-tet field ``base * lerp(low, high, mask)`` from a painted vertex mask in [0, 1].

    T: (t, 4), mask: (n,) or None -> (t,).  Used for painted stiffness and
    density: an animator paints 0..1, the mask scales the base value.
    """
    if mask is None:
        return np.full(len(T), float(base))
    m = np.clip(vertex_field_to_tets(T, mask), 0.0, 1.0)
    return base * (low + (high - low) * m)
