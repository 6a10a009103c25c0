"""From reduced coordinates to displacements of any point set (Benchekroun et al. 2023, §8.2).

``u = Y Z`` where Y (k x 4m) is the skinning basis of the points: their
skinning weights (interpolated from the tet mesh for embedded render
vertices) times their homogeneous, normalised rest positions.  Building Y
costs O(k m) once; each frame is one (k x 4m) @ (4m x 3) product, the same
work a vertex shader would do.
"""

from __future__ import annotations

import numpy as np

from ..subspace.reduced import ReducedModel


class Reconstructor:
    """Maps Z (4m x 3) to displacements (k, 3) of a fixed point set."""

    def __init__(
        self,
        model: ReducedModel,
        weights: np.ndarray | None = None,
        rest: np.ndarray | None = None,
        dtype: type = np.float64,
    ) -> None:
        """weights (k, m) and rest (k, 3) of embedded points; None means the tet vertices.

        dtype float32 suits render vertices: Blender stores positions and
        .pc2 files in float32 anyway, and the product is memory-bound, so
        half the bytes is about half the time (~1e-7 relative error).
        """
        if (weights is None) != (rest is None):
            raise ValueError("give both the weights and the rest positions of the embedded points, or neither")
        self.basis: np.ndarray = np.ascontiguousarray(model.basis(weights, rest), dtype=dtype)

    @property
    def count(self) -> int:
        return int(self.basis.shape[0])

    def displacement(self, z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """u (k, 3) = Y z in the basis' dtype; ``out`` may be a preallocated (k, 3) array of that dtype."""
        return np.matmul(self.basis, z.astype(self.basis.dtype, copy=False), out=out)
