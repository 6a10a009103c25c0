"""A gait found on one mesh of a shape, played on another mesh of the same shape (e.g. 10x finer).

A gait is a search vector over the actuation modes *in the order and sign the
eigensolver gives them* (``signal.decode``: mode i's amplitude, period, phase).
The physics converges with the mesh, but that order does not: two modes whose
frequencies nearly coincide (the blob's 4th and 5th: 869 and 991 1/s^2 at 724
vertices, 831 and 823 at 10k, in the other order) swap between resolutions, and
an eigenvector's sign is arbitrary where the shape is symmetric.  Replayed
as is, the blob's gait from 724 vertices went 0.72 body lengths per 10 s on 10k
vertices instead of 2.06; with its modes matched, 2.06 (bench/locomotion.md).

So a gait moves between meshes through the modes' fields, not their indices:
each mode of the source is paired with the target mode whose displacement field
(read at the nearest target vertex to every source vertex, weighted by the
source's lumped volumes) it overlaps most, by an optimal assignment, and the
amplitude's sign follows the pair's overlap (tanh is odd, so flipping the
search vector's amplitude entry flips the mode exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree

from ..errors import SimulationError
from ..geometry.tetmesh import TetMesh
from ..model.fem import lumped_mass

# A pair of modes whose fields overlap less than this (|cosine|) is not the same mode: the meshes are not
# of one shape, or the mode has no counterpart among the target's lowest m (measured: matched pairs
# 0.97-1.00 from 724 to 10k vertices on the blob).
MATCH_FLOOR = 0.8


@dataclass(frozen=True)
class ModeMatch:
    """target (m_a,): the target mode each source mode plays as; sign (m_a,) +-1; overlap (m_a,): |cosine|."""

    target: np.ndarray
    sign: np.ndarray
    overlap: np.ndarray


def mode_overlaps(source: TetMesh, D_source: np.ndarray, target: TetMesh, D_target: np.ndarray) -> np.ndarray:
    """Cosines C (m_a, m_b) between the source's modes and the target's, read at the source's vertices.

    D_source: (n_a, 3, m_a) and D_target: (n_b, 3, m_b) displacement fields (``ActuationModes``);
    the meshes are aligned by their volume centroids; each source vertex reads the target's nearest vertex.
    """
    w = lumped_mass(source, 1.0)
    Xa = source.X - w @ source.X / w.sum()
    wb = lumped_mass(target, 1.0)
    Xb = target.X - wb @ target.X / wb.sum()
    Db = D_target[cKDTree(Xb).query(Xa)[1]]  # (n_a, 3, m_b)
    dot = np.einsum("n,nia,nib->ab", w, D_source, Db)
    na = np.sqrt(np.einsum("n,nia,nia->a", w, D_source, D_source))
    nb = np.sqrt(np.einsum("n,nib,nib->b", w, Db, Db))
    return dot / np.outer(na, nb)


class PairingError(SimulationError):
    """A gait's modes have no counterpart on the other mesh (:func:`match_modes`): it cannot be carried there."""


def match_modes(C: np.ndarray, floor: float = MATCH_FLOOR) -> ModeMatch:
    """The one-to-one pairing of source and target modes (C: (m_a, m_b), m_a <= m_b) of largest total |C|.

    Raises :class:`PairingError` when a pair overlaps less than ``floor``: a gait must not move to modes it
    was not found on.
    """
    if C.shape[0] > C.shape[1]:
        raise SimulationError(f"a gait over {C.shape[0]} actuation modes cannot play on {C.shape[1]}")
    rows, cols = linear_sum_assignment(-np.abs(C))
    target = cols[np.argsort(rows)]
    paired = C[np.arange(C.shape[0]), target]
    if np.abs(paired).min() < floor:
        worst = int(np.argmin(np.abs(paired)))
        raise PairingError(
            f"actuation mode {worst + 1} has no counterpart on the other mesh (best overlap "
            f"{abs(paired[worst]):.2f} < {floor}): not the same shape, or too coarse a mesh to carry the gait"
        )
    return ModeMatch(target=target, sign=np.where(paired < 0, -1.0, 1.0), overlap=np.abs(paired))


def transfer_gait(x: np.ndarray, match: ModeMatch, m_target: int, k: int = 1) -> np.ndarray:
    """The search vector (3 m_target k,) that plays gait x (3 m_a k,) on the target's modes.

    Target modes no source mode pairs with get zero amplitude (x entry 0: tanh 0) and the middle period.
    """
    src = np.asarray(x, dtype=np.float64).reshape(3, len(match.target), k)
    out = np.zeros((3, m_target, k))
    out[:, match.target] = src
    out[0, match.target] *= match.sign[:, None]
    return out.ravel()
