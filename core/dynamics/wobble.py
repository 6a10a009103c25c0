"""Scale-free controls: a wobble frequency (Hz) and a damping ratio instead of pascals.

A character imported 165 units tall is not 165 m of fat: in physical units
its jiggle would be slow and huge, and the same material on the same
character at another modelling scale would move differently.  The
animator's controls here are the frequency of the slowest secondary motion
and how quickly it dies out.  Both are measured on the reduced model itself:

* the linearised reduced system at the rest shape, ``K v = omega^2 M v``
  (12m x 12m), gives the slowest angular frequency omega_0 of the model as
  built (material E, rho as given);
* every elastic term is linear in the stiffness, so a stiffness scale
  ``kappa = (2 pi f / omega_0)^2`` makes the slowest frequency f;
* mass-proportional damping c (1/s) gives a mode of angular frequency omega
  the damping ratio c / (2 omega), so ``c = 2 zeta (2 pi f)``.

The modes themselves do not depend on the stiffness's magnitude (the weight
space eigenproblem scales as a whole), so changing f needs no new modes.
With x -> s x every frequency of a homogeneous model scales by 1/s; kappa
compensates, so the motion relative to the character's size is the same at
any scale.
"""

from __future__ import annotations

import numpy as np

from ..errors import SimulationError
from ..subspace.reduced import ReducedModel
from ..subspace.rest_stiffness import rest_hessian

# Modes whose squared frequency is below this share of the largest are
# (numerically) free; they cannot define the character's wobble.
FREE_MODE_RATIO = 1e-9


def natural_frequencies(model: ReducedModel, arap: bool, count: int = 1) -> np.ndarray:
    """The ``count`` slowest angular frequencies (rad/s) of the model at rest, stiffness as built.

    Free (zero-energy) directions, if any, are skipped.
    """
    K = rest_hessian(model, arap)
    M = np.kron(model.A_M, np.eye(3))
    # K v = w2 M v as a standard problem through M = L L^T.  numpy's LAPACK
    # calls release the GIL (scipy.linalg.eigh holds it for the whole call),
    # so a worker thread computing this never freezes Blender's interface.
    L = np.linalg.cholesky(0.5 * (M + M.T))
    Li = np.linalg.inv(L)
    w2 = np.linalg.eigvalsh(Li @ K @ Li.T)
    w2 = w2[w2 > FREE_MODE_RATIO * max(float(w2.max()), 0.0)]
    if len(w2) == 0:
        raise SimulationError("the modes have no elastic stiffness; recompute the modes with more tets")
    return np.sqrt(np.sort(w2)[:count])


def stiffness_scale(omega0: float, wobble_hz: float) -> float:
    """kappa that moves the slowest angular frequency omega0 (rad/s) to ``wobble_hz``."""
    check_wobble(wobble_hz)
    return float((2.0 * np.pi * wobble_hz / omega0) ** 2)


def check_wobble(wobble_hz: float) -> None:
    """Refuse, in one line, a Wobble that is not a positive number (both of this module's uses of it)."""
    if not (np.isfinite(wobble_hz) and wobble_hz > 0):
        raise SimulationError(f"wobble frequency {wobble_hz:g} Hz must be positive; try 2-6 Hz")


def scaled_frequency(omega0: float, kappa: float, times: float = 1.0) -> float:
    """``times`` the slowest angular frequency (rad/s) at stiffness scale kappa: times omega0 sqrt(kappa).

    The inverse of :func:`stiffness_scale`: every elastic term is linear in the
    stiffness, so kappa moves omega0 (rad/s, as built) to omega0 sqrt(kappa).
    ``times`` multiplies omega0 before the root's factor (2 zeta for the
    damping c = 2 zeta omega), the order the bakes have always used.
    """
    return times * omega0 * float(np.sqrt(kappa))


def damping_coefficient(wobble_hz: float, damping_ratio: float) -> float:
    """Mass-proportional damping c (1/s) giving the slowest mode the damping ratio zeta."""
    if not (np.isfinite(damping_ratio) and damping_ratio >= 0):
        raise SimulationError(f"damping ratio {damping_ratio:g} must be zero or positive; try 0.1-0.5")
    return float(2.0 * damping_ratio * 2.0 * np.pi * wobble_hz)


def implicit_euler_controls(
    omega0: float, wobble_hz: float, damping_ratio: float, time_step: float
) -> tuple[float, float, float]:
    """(kappa, c (1/s), zeta reached) giving the slowest mode ``wobble_hz`` and ``damping_ratio`` *as stepped*.

    ``stiffness_scale`` and ``damping_coefficient`` set the continuous
    model's slowest mode; backward Euler then damps it more and slows it
    (measured on the fox and the robot at 3 Hz, zeta 0.2, h = 1/48: 2.81 Hz
    and zeta 0.37).  Here the mode's one-step map is matched instead: with
    stiffness k = kappa omega0^2 and damping c, backward Euler's step
    (x' - 2x + x_)/h^2 + c (x' - x)/h + k x' = 0 has the characteristic roots
    z of z^2 D - z (2/h^2 + c/h) + 1/h^2 = 0 with D = 1/h^2 + c/h + k.  The
    requested motion x ~ exp(lam t), lam = omega (-zeta +- i sqrt(1 - zeta^2)),
    omega = 2 pi f, has the roots z = exp(lam h) (real for zeta >= 1); their
    product P and sum S give D = 1/(h^2 P), c = h (S D - 2/h^2), k = D - 1/h^2 - c/h.

    Backward Euler cannot damp less than it does with c = 0: where c would be
    negative (zeta below about omega h / 2), c = 0 and k is chosen so that
    |lam| = omega; the third value is the damping ratio that then results,
    for the caller to report.  Exact for the slowest mode only: the damping is
    mass-proportional, and every mode has its own numerical damping.
    """
    check_wobble(wobble_hz)
    if not (np.isfinite(damping_ratio) and damping_ratio >= 0):
        raise SimulationError(f"damping ratio {damping_ratio:g} must be zero or positive; try 0.1-0.5")
    h = float(time_step)
    w = 2.0 * np.pi * wobble_hz
    z = damping_ratio
    if z < 1.0:
        root = np.exp(complex(-z * w, w * np.sqrt(1.0 - z * z)) * h)
        P, S = abs(root) ** 2, 2.0 * root.real
    else:
        r1, r2 = np.exp(-w * (z + np.sqrt(z * z - 1.0)) * h), np.exp(-w * (z - np.sqrt(z * z - 1.0)) * h)
        P, S = r1 * r2, r1 + r2
    D = 1.0 / (h * h * P)
    c = h * (S * D - 2.0 / (h * h))
    if c >= 0.0:
        k = D - 1.0 / (h * h) - c / h
        return float(k / omega0**2), float(c), float(z)

    # c = 0: roots (1 +- i sqrt(k) h) / (1 + k h^2); |lam|(k) increases with k, so bisect |lam| = omega.
    def modulus(k: float) -> float:
        return float(np.hypot(0.5 * np.log1p(k * h * h), np.arctan(np.sqrt(k) * h)) / h)

    lo, hi = 0.0, w * w
    while modulus(hi) < w:
        hi *= 4.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if modulus(mid) < w else (lo, mid)
    k = 0.5 * (lo + hi)
    reached = 0.5 * np.log1p(k * h * h) / h / w
    return float(k / omega0**2), 0.0, float(reached)
