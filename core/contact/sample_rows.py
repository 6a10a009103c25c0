"""Contact rows of the reduced coordinates: one sample's direction times its basis row.

A contact at sample r pushing along d_r (3,) acts on the reduced coordinates z (3, q) through
d_r . (z Y_r) = (d_r (x) Y_r) . vec(z): one row of J per sample.  The ground, the colliders, the
skin-on-skin pairs and the held rows all build their rows this way; it stands apart from
:mod:`.penalty` (which solves with the rows) so that what holds rows back (:mod:`.held`) and what
solves with them do not import each other.
"""

from __future__ import annotations

import numpy as np


def stacked_rows(Y: np.ndarray, index: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """J (a, 3q): rows d_r (x) Y[index_r] for sample basis rows Y (k, q), index (a,), directions (a, 3)."""
    return (directions[:, :, None] * Y[index][:, None, :]).reshape(len(index), 3 * Y.shape[1])
