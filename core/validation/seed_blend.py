"""The seed's pose-space blend of per-pose displacement bases (Xu & Barbič, §5.1-5.2, eqs. 13-16).

Each training pose's basis U_i (3n, r) lives on its own posed shape.  Alignment (§5.1): along
the seed's greedy tree from the neutral pose, U_j is un-rotated per vertex onto its parent's
pose (eq. 13: the 1-ring, volume-weighted average of the tets' polar rotations between the two
shapes), turned by the mass-weighted Procrustes rotation Q_j towards the parent's aligned basis,
and rotated back.  Runtime (§5.2): U(p) = (sum_i w_i(p) U_i) Upsilon with the RBF weights of
eq. 2 and Upsilon = diag(1 / v_k) making every column of unit mass norm, v_k^2 from the
precomputed G_ij = U_i^T M U_j.  For validation only (issue 29 item 4).

The seed averages quaternions in eq. 13; here the volume-weighted rotation matrices are averaged
and projected back by a polar decomposition, the same rotation to first order.
"""

from __future__ import annotations

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..linalg.polar import rotation
from ..posespace import rbf
from ..posespace.align import alignment_tree, procrustes


def ring_rotations(mesh: TetMesh, x_from: np.ndarray, x_to: np.ndarray) -> np.ndarray:
    """Per-vertex rotations (n, 3, 3) from shape x_from (n, 3) to x_to (n, 3) (the seed's eq. 13)."""
    E_from = np.einsum("tai,taj->tij", x_from[mesh.T], mesh.gradients)
    E_to = np.einsum("tai,taj->tij", x_to[mesh.T], mesh.gradients)
    R = rotation(E_to @ np.linalg.inv(E_from))  # per tet: the rotation of F_ij = dx_to / dx_from
    V = np.abs(np.linalg.det(E_from)) * mesh.volumes
    acc = np.zeros((mesh.n, 3, 3))
    np.add.at(acc, mesh.T, (V[:, None, None] * R)[:, None])
    return rotation(acc)


def _rotate(U: np.ndarray, R: np.ndarray, inverse: bool = False) -> np.ndarray:
    """Rotate each vertex's 3-block of the columns of U (3n, r) by R (n, 3, 3), or by R^T."""
    n, r = len(R), U.shape[1]
    spec = "nji,njk->nik" if inverse else "nij,njk->nik"
    return np.einsum(spec, R, U.reshape(n, 3, r)).reshape(3 * n, r)


def align_pose_bases(
    mesh: TetMesh, bases: list[np.ndarray], shapes: list[np.ndarray], m3: np.ndarray, features: np.ndarray
) -> list[np.ndarray]:
    """Aligned bases, one (3n, r) per training pose, pose 0 (the neutral pose) the tree's root.

    bases: per pose (3n, r); shapes: per pose the rig shape (n, 3); m3 (3n,) the lumped mass;
    features (k, f): the poses' RBF features (the tree joins the closest poses first).
    """
    parent = alignment_tree(features, root=0)
    aligned: list[np.ndarray | None] = [None] * len(bases)
    aligned[0] = bases[0]
    while any(a is None for a in aligned):  # loop over poses, parents first
        for j in range(len(bases)):
            if aligned[j] is None and aligned[parent[j]] is not None:
                R = ring_rotations(mesh, shapes[parent[j]], shapes[j])
                local = _rotate(bases[j], R, inverse=True)
                Q, _ = procrustes(local, _as(aligned[parent[j]]), m3)
                aligned[j] = bases[j] @ Q  # = rotate back (local Q): Q acts on columns, R on rows
    return [_as(a) for a in aligned]


def _as(a: np.ndarray | None) -> np.ndarray:
    assert a is not None
    return a


class SeedBlend:
    """U(p) (3n, r) from aligned per-pose bases, the seed's eqs. 14-16."""

    def __init__(self, aligned: list[np.ndarray], m3: np.ndarray, features: np.ndarray) -> None:
        self.U = np.stack(aligned)  # (k, 3n, r)
        self.features = np.asarray(features, dtype=np.float64)
        self.coefficients = rbf.train(self.features)
        MU = m3[None, :, None] * self.U
        self.G = np.einsum("ian,jam->ijnm", self.U, MU)  # (k, k, r, r): U_i^T M U_j

    def weights(self, p: np.ndarray) -> np.ndarray:
        """RBF weights (k,) of the training poses at rig parameters p (12 b,)."""
        return rbf.weights(self.coefficients, self.features, rbf.pose_features(p))

    def basis(self, p: np.ndarray) -> np.ndarray:
        """The blended, column-mass-normalised basis (3n, r) at rig parameters p (12 b,)."""
        w = self.weights(p)
        v2 = np.einsum("i,j,ijkk->k", w, w, self.G)
        return np.einsum("i,iak->ak", w, self.U) / np.sqrt(v2)[None, :]
