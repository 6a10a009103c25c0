"""Blending aligned per-pose bases (core/posespace/blend.py)."""

import numpy as np
import pytest

from core.model.constraint import weight_space_constraint
from core.model.fem import scalar_laplacian
from core.model.rig import lbs_basis
from core.posespace.align import align_bases
from core.posespace.blend import (
    blend_basis,
    blend_pairs,
    blend_singles,
    column_scale,
    gram,
    normalisation,
    pair_products,
)


@pytest.fixture(scope="module")
def aligned(bent):
    return align_bases(np.stack([m.weights for m in bent.modes]), bent.masses, np.array([[0.0], [1.0]]))


def test_at_each_training_pose_the_blend_is_that_poses_basis(bent, aligned):
    """w = e_i: Υ = 1 for an M-orthonormal basis, so U(e_i) = U_i Q_i (1e-10: one square root
    and a 6 x 6 product of round-off)."""
    G = gram(aligned.bases, bent.masses)
    for i in range(2):
        w = np.eye(2)[i]
        U = blend_basis(aligned.bases, w, normalisation(G, w))
        np.testing.assert_allclose(U, aligned.bases[i], atol=1e-10)


def smallest_singular_value(U, masses):
    """σ_min of M^{1/2} U: 0 when the columns lose rank, 1 for an M-orthonormal basis."""
    return np.linalg.svd(np.sqrt(masses)[:, None] * U, compute_uv=False).min()


def test_the_aligned_blend_keeps_full_rank_where_a_naive_blend_of_permuted_modes_loses_it(bent):
    """Two nearby poses (rest and a 2° bend) have nearly the same modes, but an eigensolver hands
    each out with an arbitrary sign.  Signs opposite to the rest modes': blended half and half
    column by column, they cancel and a direction of the subspace collapses (measured σ_min 0.025
    of 1); aligned first, the blend stays orthonormal-like (0.993).  Between rest and the 90°
    bend, whose subspaces differ (principal cosines down to 0.02), the aligned blend keeps 0.83.
    Thresholds 0.05 / 0.9 / 0.5 leave a margin of 2x or more on each side."""
    from core.posespace.modes import posed_skinning_modes
    from tests.core.posespace.conftest import M_MODES, bend

    U0 = bent.modes[0].weights
    x = bent.scene.rig.positions(bent.scene.mesh.X, bend(bent.scene, 2.0)).reshape(-1, 3)
    U1 = posed_skinning_modes(bent.scene.mesh, x, bent.material, bent.masses, bent.scene.rig, None, M_MODES).weights
    handed_out = U1 * -np.sign(np.diag(U0.T @ (bent.masses[:, None] * U1)))[None, :]
    w = np.array([0.5, 0.5])
    assert smallest_singular_value(w[0] * U0 + w[1] * handed_out, bent.masses) < 0.05
    for bases, bound in ((np.stack([U0, handed_out]), 0.9), (np.stack([m.weights for m in bent.modes]), 0.5)):
        al = align_bases(bases, bent.masses, np.array([[0.0], [1.0]]))
        blended = blend_basis(al.bases, w, normalisation(gram(al.bases, bent.masses), w))
        assert smallest_singular_value(blended, bent.masses) > bound


def test_blended_columns_have_unit_mass_and_stay_complementary(bent, aligned):
    """Every column of unit M-norm (1e-12) and J_w U(w) = 0 to 1e-9 of the rows' scale times the
    weights' at random pose weights (the constraint is linear and shared by all poses)."""
    G = gram(aligned.bases, bent.masses)
    Jw = weight_space_constraint(bent.scene.mesh.X, bent.scene.rig, bent.masses, np.ones(bent.scene.mesh.n))
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = rng.uniform(-0.2, 1.2)
        w = np.array([1 - s, s])
        U = blend_basis(aligned.bases, w, normalisation(G, w))
        np.testing.assert_allclose(np.einsum("nq,n,nq->q", U, bent.masses, U), 1.0, atol=1e-12)
        assert np.abs(Jw @ U).max() < 1e-9 * abs(Jw).sum(axis=1).max() * np.abs(U).max()


def test_blended_products_equal_products_of_the_blended_basis(bent, aligned):
    """The reduced model's products without a pass over the mesh: Y(U(w))^T L Y(U(w)) from the
    per-pair products, and C Y(U(w)) from the per-pose ones, equal the direct products to 1e-10
    relative (sums of the same terms in another order)."""
    mesh = bent.scene.mesh
    L = scalar_laplacian(mesh, bent.material.mu)
    Ys = np.stack([lbs_basis(U, mesh.X) for U in aligned.bases])  # (k, n, 4m)
    P = pair_products(Ys, L, Ys)
    C = np.random.default_rng(1).normal(size=(7, mesh.n))
    S = np.stack([C @ Y for Y in Ys])
    G = gram(aligned.bases, bent.masses)
    w = np.array([0.3, 0.7])
    ups = normalisation(G, w)
    Y = lbs_basis(blend_basis(aligned.bases, w, ups), mesh.X)
    scale = column_scale(ups, 4)
    direct = Y.T @ (L @ Y)
    np.testing.assert_allclose(blend_pairs(P, w, scale, scale), direct, atol=1e-10 * np.abs(direct).max())
    np.testing.assert_allclose(blend_singles(S, w, scale), C @ Y, atol=1e-10 * np.abs(C @ Y).max())
