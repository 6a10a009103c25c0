"""Per-tet rotations fixed from the rig (Song et al., §3).

Transforms are affine bone maps (b, 3, 4) as in ``core.model.rig``.  The seed
gives each tet the rotation of its bone (piecewise-constant clusters); it notes
that the jumps at cluster boundaries cause candy-wrapper and collapse artefacts
(§5).  :func:`blended_rotations` is the smooth alternative: per tet, the bone
rotations blended as quaternions with the tet's skinning weights.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..linalg.polar import rotation


def bone_rotations(transforms: np.ndarray) -> np.ndarray:
    """Rotation parts (b, 3, 3) of bone transforms (b, 3, 4) (or (b, 4, 4)).

    A linear part that is already a rotation (to 1e-12) is kept as is, so the
    identity stays exactly the identity; others get their closest rotation.
    """
    L = np.array(np.asarray(transforms, dtype=np.float64)[:, :3, :3])
    err = np.abs(np.einsum("bki,bkj->bij", L, L) - np.eye(3)).max(axis=(1, 2))
    bad = (err > 1e-12) | (np.linalg.det(L) <= 0)
    if bad.any():
        L[bad] = rotation(L[bad])
    return L


def tet_rotations(transforms: np.ndarray, tet_bone: np.ndarray) -> np.ndarray:
    """Per-tet rotations (t, 3, 3): the rotation of each tet's bone.  tet_bone (t,)."""
    return bone_rotations(transforms)[tet_bone]


def blended_rotations(transforms: np.ndarray, tet_weights: np.ndarray) -> np.ndarray:
    """Per-tet rotations (t, 3, 3) blended from bone rotations with weights (t, b).

    Quaternions are flipped into the hemisphere of each tet's heaviest bone, summed
    with the weights and normalised (nlerp): a 180° twist between two bones turns
    smoothly instead of collapsing through (I + R) / 2.
    """
    return quaternion_matrices(*_blended_quaternions(transforms, tet_weights))


def blended_rotation_rows(transforms: np.ndarray, tet_weights: np.ndarray) -> np.ndarray:
    """:func:`blended_rotations` component-major (9, t): entry (i, j) of every tet's rotation in row
    3 i + j, the layout the physics skin's solve reads (``solve.divergence_entries``)."""
    return quaternion_rows(*_blended_quaternions(transforms, tet_weights))


def _blended_quaternions(transforms: np.ndarray, tet_weights: np.ndarray) -> np.ndarray:
    """The blended, unnormalised quaternions (4, t) as rows x, y, z, w; tet_weights (t, b)."""
    W = np.asarray(tet_weights, dtype=np.float64)
    q = Rotation.from_matrix(bone_rotations(transforms)).as_quat()  # (b, 4), x y z w
    ref = q[np.argmax(W, axis=1)]  # (t, 4)
    sign = np.where(ref @ q.T < 0.0, -1.0, 1.0)  # (t, b)
    # The blend has a positive dot product (at least the largest weight) with the
    # heaviest bone's quaternion, so it is never zero.
    return ((W * sign) @ q).T  # a matrix product: BLAS, where einsum would loop


def quaternion_matrices(x: np.ndarray, y: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rotation matrices (t, 3, 3) of quaternions (x, y, z, w), each (t,), normalised here."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    R = np.empty((len(x), 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 0, 2] = 1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)
    R[:, 1, 0], R[:, 1, 1], R[:, 1, 2] = s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)
    R[:, 2, 0], R[:, 2, 1], R[:, 2, 2] = s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)
    return R


def quaternion_rows(x: np.ndarray, y: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`quaternion_matrices` component-major (9, t): the same entries, each row contiguous."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    R = np.empty((9, len(x)))
    R[0], R[1], R[2] = 1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)
    R[3], R[4], R[5] = s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)
    R[6], R[7], R[8] = s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)
    return R
