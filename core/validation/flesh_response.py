"""Does the flesh answer the rig at the Wobble? The figures of issue 37, from a baked clip.

A damped oscillator at frequency f carried by an acceleration a sags about a / (2 pi f)^2.  For a
region of render vertices (a torso, a belly, a head) and a clip that ends in a hold:

- :func:`response_ratio`: the region's peak offset over that estimate, with a its own peak rig
  acceleration (the mean over its vertices of |second difference| of their rig positions, per frame,
  at its largest), the offset the SAG_PERCENTILE of its vertices' offsets per frame, at its largest.
  1 is what the Wobble promises; the issue asks for [1/3, 3];
- :func:`decay_frequency`: the frequency the region rings at after the rig stops: the region's mean
  offset, projected on its main direction, timed at its zero crossings (linear interpolation);
- :func:`extent_change`: how much a one-bone region's own extent along its bone changes: the region's
  best rotation from rig-only to baked positions (Kabsch) is removed, then the 5-95 % spread of the
  positions along the (rotated) bone axis is compared with the rig's; the largest relative change over
  the frames.  A bone's flesh may bulge and swing, not stretch along it.

Pure numpy over arrays the caller measured (frames, vertices, 3), in any units.
"""

from __future__ import annotations

import numpy as np

# The region's offset per frame: this percentile over its vertices (a high one, so one vertex at a sharp
# corner does not decide it), as the flesh calibration reads a part's sag (core/subspace/flesh.py).
SAG_PERCENTILE = 95.0
# The spread of a region along its bone: between these percentiles of its vertices (robust to one piece).
SPREAD = (5.0, 95.0)


def accelerations(positions: np.ndarray, fps: float) -> np.ndarray:
    """(f, k, 3) second differences of positions (f, k, 3) times fps^2 (zero at the first and last frame)."""
    x = np.asarray(positions, dtype=np.float64)
    a = np.zeros_like(x)
    a[1:-1] = (x[2:] - 2.0 * x[1:-1] + x[:-2]) * fps * fps
    return a


def response_ratio(offsets: np.ndarray, rig: np.ndarray, fps: float, wobble_hz: float) -> tuple[float, float, float]:
    """(ratio, peak offset, a / (2 pi f)^2) of a region: offsets, rig (f, k, 3) over the region's vertices."""
    u = np.percentile(np.linalg.norm(offsets, axis=2), SAG_PERCENTILE, axis=1).max()
    a = np.linalg.norm(accelerations(rig, fps), axis=2).mean(axis=1).max()
    expect = a / (2.0 * np.pi * wobble_hz) ** 2
    return (float(u / expect) if expect > 0 else float("nan")), float(u), float(expect)


def decay_frequency(offsets: np.ndarray, fps: float) -> float:
    """Hz a region rings at: offsets (f, k, 3) from the frame the rig stops; NaN without 3 zero crossings.

    The region's mean offset (f, 3) is projected on its main direction (the largest singular vector);
    half-periods are the intervals between its sign changes, interpolated linearly; the first five count.
    """
    mean = np.asarray(offsets, dtype=np.float64).mean(axis=1)
    if not np.any(mean):
        return float("nan")
    _, _, vt = np.linalg.svd(mean - mean.mean(axis=0), full_matrices=False)
    x = mean @ vt[0]
    x = x - x[-1]
    cross = np.flatnonzero(np.sign(x[1:]) * np.sign(x[:-1]) < 0)
    if len(cross) < 3:
        return float("nan")
    t = cross + x[cross] / (x[cross] - x[cross + 1])
    return float(fps / (2.0 * np.mean(np.diff(t[:6]))))


def best_rotations(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """(f, 3, 3) rotations R minimising ||R P_f - Q_f|| for centred point sets P, Q (f, k, 3) (Kabsch)."""
    H = np.einsum("fki,fkj->fij", P, Q)
    U, _, Vt = np.linalg.svd(H)
    V = Vt.transpose(0, 2, 1)
    d = np.sign(np.linalg.det(V @ U.transpose(0, 2, 1)))
    D = np.zeros_like(H)
    D[:, 0, 0] = D[:, 1, 1] = 1.0
    D[:, 2, 2] = d
    return V @ D @ U.transpose(0, 2, 1)


def extent_change(baked: np.ndarray, rig: np.ndarray, axes: np.ndarray) -> float:
    """Largest relative change (0.1 = 10 %) of a region's spread along its bone over the frames.

    baked, rig: (f, k, 3) the region's positions with and without secondary motion; axes: (f, 3) its bone's
    direction per frame (rig pose).  The region's own rotation (rig to baked) is removed first, so a bone's
    flesh that swings rigidly has no change.
    """
    P = rig - rig.mean(axis=1, keepdims=True)
    Q = baked - baked.mean(axis=1, keepdims=True)
    R = best_rotations(P, Q)
    a = np.asarray(axes, dtype=np.float64)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    along_rig = np.einsum("fki,fi->fk", P, a)
    along_baked = np.einsum("fki,fi->fk", Q, np.einsum("fij,fj->fi", R, a))
    lo, hi = SPREAD
    spread_rig = np.percentile(along_rig, hi, axis=1) - np.percentile(along_rig, lo, axis=1)
    spread_baked = np.percentile(along_baked, hi, axis=1) - np.percentile(along_baked, lo, axis=1)
    return float(np.max(np.abs(spread_baked / np.maximum(spread_rig, 1e-300) - 1.0)))
