"""Fibers along the bones: a bone's flesh may bulge and swing but not stretch along it (issue 37).

Calibrated to the Wobble, every part of a character sags a / (2 pi f)^2 under its rig's
acceleration a; at the soft end of Wobble (1 Hz) that is a third of a galloping body's
size, and flesh that soft stretched with it: limbs, ears and tail segments changed their
length along their bones by 30-180 % (measured, ``docs/where_it_moves.md``).  Muscle and
tendon run along the bones, stiff along their length, soft across it; the model gets the
same: each tet whose flesh belongs to one bone carries a fiber along that bone, and the
solver adds, per cluster c, the as-rigid-as-possible energy of the fiber-scaled gradient

    sum_e kappa_f mu_e s_e V_e || F_e D_e - R'_c S'_c ||^2,   D_e = delta I + a_e a_e^T,

with its own rotation R'_c and the rig's own fiber-scaled stretch S'_c as its rest (the
"pose" rest state, so the animated pose costs nothing).  Minimised over R', a stretch of
the fiber a_e by epsilon costs (1 + delta)^2 epsilon^2 and a rotation or a shear of the
fiber nothing more than delta^2 times the flesh's own: it is the fiber's stretch energy
(|F a| - |F_rig a|)^2, regularised by the small isotropic delta so that its rotation is
always defined.  kappa_f does not follow the Wobble (:data:`FIBER_HZ`): the flesh softens
with the slider, its bones do not.

a_e is the rest-pose direction of the tet's heaviest bone (head to tail); s_e in [0, 1] is
how much the tet belongs to that bone alone, 1 inside a one-bone region and 0 where two
bones share it half and half (a joint, which bends freely).  A bone without a segment (the
column of unbound vertices) has no fiber.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The fibers are as stiff along their bone as the flesh would be at this Wobble frequency, whatever the
# Wobble: at the default 3 Hz they are 13 x the flesh's axial stiffness, at 1 Hz 120 x.
FIBER_HZ = 10.0
# ... but never more than this many times the flesh's own stiffness scale (core/pipeline/drives.fiber_scale): a
# contrast the solver converges on in a few iterations (at 1 Hz the fibers then sit at 5.5 Hz, not 10).
FIBER_CONTRAST = 30.0
# The fiber energy's isotropic share delta (D = delta I + a a^T): small, it only keeps the fiber's own
# rotation defined (a rank-one gradient has none).
FIBER_DELTA = 0.03


@dataclass(frozen=True)
class Fibers:
    """axes: (t, 3) unit rest-pose fiber direction per tet (zero where none); strength: (t,) s_e in [0, 1];
    bone: (t,) the weight column the fiber runs along (its clusters never span two bones, so a joint between
    two segments bends with the segments' own rotations)."""

    axes: np.ndarray
    strength: np.ndarray
    bone: np.ndarray

    def scales(self) -> np.ndarray:
        """(t, 3, 3) D_e = delta I + a_e a_e^T of every tet (module doc)."""
        a = np.asarray(self.axes)
        return FIBER_DELTA * np.eye(3)[None] + a[:, :, None] * a[:, None, :]


def tet_fibers(T: np.ndarray, tet_weights: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> Fibers:
    """The fibers of a tet mesh (module doc).

    T: (t, 4); tet_weights: (n, b) volume bone weights; heads, tails: (b, 3) rest-pose bone ends in the
    tets' frame (NaN rows for a column without a bone).  s_e = ((w1 - w2) / (w1 + w2))^2 of the tet's two
    heaviest mean weights: 1 for flesh of one bone, 0 at a joint shared half and half.
    """
    mean = np.asarray(tet_weights)[np.asarray(T)].mean(axis=1)  # (t, b)
    order = np.argsort(-mean, axis=1, kind="stable")
    w1 = np.take_along_axis(mean, order[:, :1], axis=1)[:, 0]
    w2 = np.take_along_axis(mean, order[:, 1:2], axis=1)[:, 0] if mean.shape[1] > 1 else np.zeros(len(mean))
    axis = np.asarray(tails, dtype=np.float64) - np.asarray(heads, dtype=np.float64)
    length = np.linalg.norm(axis, axis=1)
    valid = np.isfinite(length) & (length > 0)
    unit = np.where(valid[:, None], np.nan_to_num(axis) / np.where(valid, length, 1.0)[:, None], 0.0)
    bone = order[:, 0]
    share = np.clip(2.0 * (w1 - w2) / np.maximum(w1 + w2, 1e-300), 0.0, 1.0)
    return Fibers(axes=unit[bone], strength=np.where(valid[bone], share, 0.0), bone=bone)
