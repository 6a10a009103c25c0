"""The character's size: the one length that scale-free tolerances and reported offsets are taken of."""

from __future__ import annotations

import numpy as np


def character_size(X: np.ndarray) -> float:
    """Twice the largest distance of a vertex from the centroid, X (n, 3): invariant under rotations."""
    X = np.asarray(X, dtype=np.float64)
    return 2.0 * float(np.sqrt(np.max(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))
