"""The locomotion objective: displacement along a direction times alignment (seed 002, eq. 17).

    J = J_disp * J_align,  J_disp = (d . v - w |d_side|) / L,  J_align = min_t u(t) . v

with d = com(t1) - com(t0), v the unit target direction, L the body's extent
along v (so J is in body lengths and means the same at any modelling scale)
and u(t) the body's forward axis turned by its best-fit rotation.  d_side is
d's part across v in the ground plane (up removed); the seed has w = 0, which
lets a symmetric body drift sideways while it faces v (a blob crawled 33 deg
off course that way); w = 1 (our default) asks for the chosen direction.  Alignment is clipped at 0:
otherwise a character walking backwards while facing backwards would score
a positive product.  Larger is better (the optimiser minimises -J).  The jumping variant
scores the mean rise of the centre of mass instead.
"""

from __future__ import annotations

import numpy as np


def body_length(X: np.ndarray, direction: np.ndarray) -> float:
    """Extent (m) of rest positions X (n, 3) along a unit direction (3,)."""
    p = X @ direction
    return float(p.max() - p.min())


def displacement(
    com: np.ndarray, direction: np.ndarray, length: float, up: np.ndarray | None = None, side: float = 0.0
) -> float:
    """Distance travelled by the centre of mass com (steps+1, 3) along direction (3,), less ``side``
    times the sideways drift in the plane normal to the unit ``up`` (3,), in body lengths."""
    d = com[-1] - com[0]
    along = float(d @ direction)
    if up is None or side == 0.0:
        return along / length
    lateral = d - along * direction - float(d @ up) * up
    return (along - side * float(np.linalg.norm(lateral))) / length


def alignment(forward: np.ndarray, direction: np.ndarray) -> float:
    """min over time of forward (steps+1, 3) . direction, clipped to [0, 1]."""
    return float(np.clip((forward @ direction).min(), 0.0, 1.0))


def locomotion_objective(
    com: np.ndarray,
    forward: np.ndarray,
    direction: np.ndarray,
    length: float,
    up: np.ndarray | None = None,
    side: float = 0.0,
) -> float:
    """J (body lengths, scaled by alignment): larger is better.  up, side: see :func:`displacement`."""
    return displacement(com, direction, length, up, side) * alignment(forward, direction)


def jump_objective(com: np.ndarray, up: np.ndarray, length: float) -> float:
    """The seed's jumping variant: mean rise of the centre of mass com (steps+1, 3) along up (3,), in body lengths."""
    h = com @ up
    return float((h - h[0]).mean()) / length
