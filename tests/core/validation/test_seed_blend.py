"""The seed's alignment and blend of per-pose displacement bases (core/validation/seed_blend.py)."""

import numpy as np
import pytest

from core.model.rig import rig_parameters
from core.posespace import rbf
from core.validation.pose_bases import mode_basis
from core.validation.posespace_claim import ClaimScene, ClaimSetup, bend_transforms, seed_pose_blend
from core.validation.scenes import rotation_z
from core.validation.seed_blend import SeedBlend, align_pose_bases, ring_rotations


@pytest.fixture(scope="module")
def cs():
    return ClaimScene(ClaimSetup(length=2.0, cells=3))


def test_ring_rotations_of_a_rigid_turn_are_that_turn(cs):
    X = cs.scene.mesh.X
    R = rotation_z(0.9)
    assert np.allclose(ring_rotations(cs.scene.mesh, X, X @ R.T + 0.3), R, atol=1e-12)


def test_alignment_undoes_a_turn_a_permutation_and_sign_flips(cs):
    """Pose 1 is pose 0 turned rigidly, its columns permuted and flipped: the seed's Fig. 7 case."""
    mesh, m3 = cs.scene.mesh, cs.ref.m3
    X = cs.shape(0.0)
    U0 = mode_basis(cs.ref, X, 6)
    R = rotation_z(np.pi / 2)
    turned = np.einsum("ij,njk->nik", R, U0.reshape(-1, 3, 6)).reshape(-1, 6)
    U1 = turned[:, [2, 0, 1, 5, 4, 3]] * np.array([1, -1, 1, -1, 1, 1])
    features = np.array([[0.0], [1.0]])
    aligned = align_pose_bases(mesh, [U0, U1], [X, X @ R.T], m3, features)
    assert np.allclose(aligned[1], turned, atol=1e-8)


def test_the_blend_is_each_basis_at_its_pose_and_mass_normalised_between(cs):
    blend, bases = seed_pose_blend(cs, 6)
    for i, deg in enumerate((0.0, 60.0, 120.0)):
        U = blend.basis(rig_parameters(bend_transforms(cs.scene, deg)))
        assert np.allclose(U.T @ (cs.ref.m3[:, None] * U), np.eye(6), atol=1e-8)
        # The same span as the pose's own basis (aligned = turned inside its span).
        c = bases[i].T @ (cs.ref.m3[:, None] * U)
        assert np.allclose(bases[i] @ c, U, atol=1e-8)
    U = blend.basis(rig_parameters(bend_transforms(cs.scene, 30.0)))
    assert np.allclose(np.einsum("ak,a,ak->k", U, cs.ref.m3, U), 1.0)
    w = blend.weights(rig_parameters(bend_transforms(cs.scene, 30.0)))
    assert np.isclose(w.sum(), 1.0) and w[0] > 0 and w[1] > 0


def test_seed_blend_weights_come_from_the_poses_features():
    f = np.array([[0.0], [1.0], [2.0]])
    U = [np.eye(4)[:, :2] * (i + 1) for i in range(3)]
    b = SeedBlend(U, np.ones(4), f)
    assert np.allclose(b.coefficients, rbf.train(f))
