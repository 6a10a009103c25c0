"""Where the subspace can move: each region's own modes, their lowest frequency and their share (issue 37, item 1).

The diagnosis behind "bodies 40-120x stiffer than the Wobble asked": a region (a torso, a belly, a tail)
responds at the Wobble only if the reduced model has modes that move it, at about that frequency.  From
the reduced stiffness K at the bake's scales (the Hessian of the elastic energy at rest,
:func:`core.subspace.rest_stiffness.rest_hessian`, times the Wobble's stiffness scale, the fibers at theirs)
and the reduced mass M = A_M (x) I3, the model's natural modes solve K v = w^2 M v.  A mode's motion on
the tet vertices is u = Y Z (Z = v as 4m x 3, row-major); its kinetic energy splits over the vertices as
m_i |u_i|^2.  Per region:

- ``share``: the region's part of all the modes' energy, sum_j e_j(region) / (number of modes): the
  share of the subspace that moves it (compare with its share of the mass);
- ``lowest_hz``: the lowest frequency among the region's own modes, those with at least
  :data:`OWN_SHARE` of their energy in it (NaN where none is its own);
- ``mass``: the region's share of the mass.

A region whose lowest own mode is far above the Wobble, or that holds a small share of the modes for its
mass, cannot sag a / (2 pi f)^2: the Wobble was spent on other parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..subspace.rest_stiffness import mode_energies, rest_modes

# A mode is a region's own when at least this share of its kinetic energy is in the region.
OWN_SHARE = 0.5


@dataclass(frozen=True)
class RegionSpectrum:
    """One region's figures (module doc): lowest own frequency (Hz, NaN: none), its share of the modes'
    energy and of the mass (0..1), and how many modes are its own."""

    lowest_hz: float
    share: float
    mass: float
    own: int


def natural_modes(K: np.ndarray, A_M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies (k,) in Hz, ascending; modes (12m, k)) of K v = w^2 (A_M (x) I3) v
    (:func:`core.subspace.rest_stiffness.rest_modes`, which the flesh calibration's floor solves too).

    K: (12m, 12m) reduced stiffness, row-major vec(Z) (index 3a + i); A_M: (4m, 4m) reduced mass.  Modes
    with w^2 <= 0 (none in a model whose every mode is bound) are left out.
    """
    w2, V = rest_modes(K, A_M)
    keep = w2 > 0.0
    return np.sqrt(w2[keep]) / (2.0 * np.pi), V[:, keep]


def mode_energy(Y: np.ndarray, masses: np.ndarray, V: np.ndarray) -> np.ndarray:
    """(n, k) each mode's kinetic energy per vertex (:func:`core.subspace.rest_stiffness.mode_energies`),
    each column summing to 1.

    Y: (n, 4m) the subspace's basis on the vertices; masses: (n,); V: (12m, k) modes (row-major vec(Z)).
    """
    e = mode_energies(Y, masses, V)
    return e / np.maximum(e.sum(axis=0, keepdims=True), 1e-300)


def region_spectrum(hz: np.ndarray, energy: np.ndarray, masses: np.ndarray, region: np.ndarray) -> RegionSpectrum:
    """A region's :class:`RegionSpectrum` from the modes' frequencies (k,), their energy per vertex (n, k)
    (:func:`mode_energy`), the vertex masses (n,) and the region's vertices (n,) bool."""
    share = energy[np.asarray(region, dtype=bool)].sum(axis=0)  # (k,)
    own = share >= OWN_SHARE
    lowest = float(hz[own].min()) if own.any() else float("nan")
    mass = float(masses[region].sum() / max(float(masses.sum()), 1e-300))
    return RegionSpectrum(lowest_hz=lowest, share=float(share.mean()), mass=mass, own=int(own.sum()))
