"""Displacements of a fixed point set (render vertices, guard probes) in a blended pose-space subspace.

A point embedded in the tet mesh carries, per training pose, the weights
interpolated from that pose's aligned basis; interpolation is linear, so the
blended subspace's weights at the point are the blend of those.  Its basis
row is then Σ_i w_i Y_i (Υ ⊗ 1_4), and u = Σ_i w_i Y_i (s ⊙ z) with s the
repeated Υ: k products of (p x 4m) by (4m x 3) a frame, the single-basis
product k times over.
"""

from __future__ import annotations

import numpy as np

from ..model.rig import lbs_basis
from .blend import column_scale, normalisation
from .model import PoseSpaceModel


class PosePoints:
    """The per-pose bases (k, p, 4m) of p points, in ``dtype`` (float32 suits render vertices)."""

    def __init__(self, model: PoseSpaceModel, weights: np.ndarray, rest: np.ndarray, dtype: type = np.float64):
        """weights (k, p, m): each pose's aligned weights at the points; rest (p, 3) their rest positions."""
        W = np.asarray(weights, dtype=np.float64)
        if W.shape[0] != model.k:
            raise ValueError(f"expected weights for {model.k} poses, got {W.shape[0]}")
        Xn = (np.asarray(rest, dtype=np.float64) - model.rest.centre) / model.rest.scale
        self.model = model
        self.bases: np.ndarray = np.ascontiguousarray(np.stack([lbs_basis(Wi, Xn) for Wi in W]), dtype=dtype)

    @property
    def count(self) -> int:
        return int(self.bases.shape[1])

    def displacement(self, w: np.ndarray, z: np.ndarray) -> np.ndarray:
        """u (p, 3) in the points' dtype for pose weights w (k,) and reduced coordinates z (4m, 3)."""
        s = column_scale(normalisation(self.model.gram, w), 4)
        zs = (s[:, None] * z).astype(self.bases.dtype, copy=False)
        out = np.zeros((self.count, 3), dtype=self.bases.dtype)
        for wi, Y in zip(w, self.bases):  # loop over poses, a handful
            if wi != 0.0:
                out += self.bases.dtype.type(wi) * (Y @ zs)
        return out
