"""The displacement bases of the seed's claim (core/validation/pose_bases.py).

The seed's per-pose basis at a training pose must be that pose's own small vibrations: its
linear modes are eigenpairs of the full-space reference linearised at the posed shape (checked
against finite differences of the reference's forces, not its Hessian code), and a small
vibration of the held pose stays in its span.
"""

import numpy as np
import pytest

from core.subspace.reduced import build_reduced_model
from core.validation.pose_bases import (
    linear_modes,
    modal_derivatives,
    mode_basis,
    pca_basis,
    skinning_basis,
    vertex_rotations,
    warped_basis,
)
from core.validation.posespace_claim import ClaimScene, ClaimSetup
from core.validation.reduced_run import reference_run, relative_errors, run_reduced
from core.validation.scenes import rotation_z

SMALL = ClaimSetup(length=2.0, cells=3)


@pytest.fixture(scope="module")
def cs():
    return ClaimScene(SMALL)


def _constraint_free(ref, r):
    """The part (3n,) of a force r (3n,) the constraint's multipliers C mu cannot absorb."""
    Y = ref.C / ref.m3[:, None]
    return r - ref.C @ (Y.T @ r)


def test_linear_modes_are_eigenpairs_of_the_linearised_full_space_at_the_pose(cs):
    x = cs.shape(60.0)
    pose = cs.ref._pose_reference(x)
    Phi, lam = linear_modes(cs.ref, x, 4)
    assert np.all(np.diff(lam) >= 0) and lam[0] > 0
    eps = 1e-6
    for i in range(4):
        d = Phi[:, i].reshape(-1, 3)
        g_plus = cs.ref._elastic_gradient(x + eps * d, pose).ravel()
        g_minus = cs.ref._elastic_gradient(x - eps * d, pose).ravel()
        r = (g_plus - g_minus) / (2 * eps) - lam[i] * cs.ref.m3 * Phi[:, i]
        assert np.linalg.norm(_constraint_free(cs.ref, r)) < 1e-5 * lam[i] * np.linalg.norm(cs.ref.m3 * Phi[:, i])
    assert np.abs(cs.ref.C.T @ Phi).max() < 1e-10


@pytest.mark.slow
def test_the_posed_basis_reproduces_the_poses_small_vibrations(cs):
    x = cs.shape(60.0)
    U = mode_basis(cs.ref, x, 8)
    frames, steps = [x] * 8, 6
    u0 = (1e-4 * (U[:, 0] + U[:, 1]) / np.abs(U[:, :2]).max()).reshape(-1, 3)
    u_ref, _ = reference_run(cs.ref, frames, steps, u0=u0)
    q0 = U.T @ (cs.ref.m3 * u0.ravel())
    run = run_reduced(cs.ref, lambda k: U, frames, steps, q0=q0)
    assert relative_errors(run.u, u_ref).max() < 1e-3


def test_mode_basis_is_m_orthonormal_on_the_constraint_and_derivatives_solve_their_system(cs):
    x = cs.shape(60.0)
    U = mode_basis(cs.ref, x, 10)
    assert U.shape[1] == 10
    assert np.allclose(U.T @ (cs.ref.m3[:, None] * U), np.eye(10), atol=1e-8)
    assert np.abs(cs.ref.C.T @ U).max() < 1e-8
    Phi, _ = linear_modes(cs.ref, x, 2)
    Z = modal_derivatives(cs.ref, x, Phi)
    assert Z.shape[1] == 3 and np.abs(cs.ref.C.T @ Z).max() < 1e-8 * np.abs(Z).max()


def test_warping_by_identity_keeps_the_span_and_a_rigid_rig_gives_its_rotation(cs):
    x = cs.shape(0.0)
    U = mode_basis(cs.ref, x, 6)
    n = cs.scene.mesh.n
    W = warped_basis(U, np.tile(np.eye(3), (n, 1, 1)), cs.ref)
    c = W.T @ (cs.ref.m3[:, None] * U)
    assert np.allclose(W @ c, U, atol=1e-8)
    A = np.zeros((3, 3, 4))
    A[:, :, :3] = 2.0 * rotation_z(0.7)  # scaled bones: the rotation is still 0.7 rad
    assert np.allclose(vertex_rotations(cs.scene.rig.weights, A), rotation_z(0.7))


def test_pca_and_skinning_bases_live_on_the_constraint(cs):
    rng = np.random.default_rng(0)
    snaps = rng.standard_normal((5, cs.scene.mesh.n, 3))
    P = pca_basis(snaps, cs.ref, 3)
    assert P.shape[1] == 3 and np.allclose(P.T @ (cs.ref.m3[:, None] * P), np.eye(3), atol=1e-10)
    mesh = cs.scene.mesh
    model = build_reduced_model(mesh, cs.material, cs.scene.rig, m=2, r=mesh.t, leak=cs.leak)
    B = skinning_basis(model, cs.ref)
    assert B.shape[1] <= 24 and np.abs(cs.ref.C.T @ B).max() < 1e-8


def test_warping_keeps_each_columns_identity_from_pose_to_pose(cs):
    """A carried q must mean the same thing one step later: small turns change columns little."""
    U = mode_basis(cs.ref, cs.shape(0.0), 6)
    n = cs.scene.mesh.n
    W0 = warped_basis(U, np.tile(rotation_z(0.50), (n, 1, 1)), cs.ref)
    W1 = warped_basis(U, np.tile(rotation_z(0.51), (n, 1, 1)), cs.ref)
    assert np.allclose(W0.T @ (cs.ref.m3[:, None] * W0), np.eye(6), atol=1e-10)
    assert np.abs(np.diag(W0.T @ (cs.ref.m3[:, None] * W1))).min() > 0.99
