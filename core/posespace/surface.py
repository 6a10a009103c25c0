"""The contact's sample rows following the pose-space blend: the ground, colliders and skin on skin
act on the pose-space jiggle (issue 29).

:class:`core.contact.surface.SurfaceContact` (and its body-part pairs) carry
the basis rows Y_s (s, 4m) of their sample points in the rest subspace.  With
training poses the subspace is blended per step, so the rows are too: each
pose's rows are kept (:class:`PosePoints`, k of them) and the step's are
Σ_i w_i Y_i,s scaled by the blend's column norms, exactly the blended basis
at those points (the blend is linear in the weights).  Everything else of the
contact (samples, stiffness, the rig's rows, the rig-wins rule) is the mesh's
and stays, so the rows of a step are those of :class:`SurfaceContact` on the
blended model.
"""

from __future__ import annotations

import numpy as np

from ..contact.surface import SurfaceContact
from .blend import column_scale, normalisation
from .model import PoseSpaceModel
from .points import PosePoints


class PoseContact:
    """A rest-model :class:`SurfaceContact` whose sample rows follow the blend of a :class:`PoseSpaceModel`."""

    def __init__(self, model: PoseSpaceModel, contact: SurfaceContact) -> None:
        W = model.alignment.bases  # (k, n, m)
        X = model.rest.X
        self.model = model
        self.contact = contact
        self.samples = PosePoints(model, W[:, contact.samples], X[contact.samples])
        pairs = contact.pairs
        self.pairs = None if pairs is None else PosePoints(model, W[:, pairs.vertices], X[pairs.vertices])

    def at(self, w: np.ndarray) -> SurfaceContact:
        """The contact on the subspace blended with pose weights w (k,): its rows (s, 4m) blended."""
        s = column_scale(normalisation(self.model.gram, w), 4)
        pairs = None if self.pairs is None else blended_rows(self.pairs.bases, w, s)
        return self.contact.rebased(blended_rows(self.samples.bases, w, s), pairs)


def blended_rows(bases: np.ndarray, w: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Σ_i w_i bases_i (p, q) with columns scaled by ``scale`` (q,); bases (k, p, q), w (k,)."""
    return np.tensordot(w, bases, axes=1) * scale[None, :]
