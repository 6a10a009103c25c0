"""Procrustes alignment of per-pose bases (core/posespace/align.py)."""

import numpy as np

from core.posespace.align import align_bases, alignment_tree, procrustes
from tests.core.posespace.test_modes import projector


def test_procrustes_undoes_a_signed_permutation_exactly(bent):
    """An eigensolver may return the same modes permuted and sign-flipped: Q is that signed
    permutation's inverse (entries 0 and ±1 to round-off, 1e-12), every cosine is 1."""
    W = bent.modes[1].weights
    m = W.shape[1]
    P = np.eye(m)[np.random.default_rng(0).permutation(m)] * np.array([1, -1, -1, 1, -1, 1])[None, :]
    Q, cosines = procrustes(W @ P, W, bent.masses)
    np.testing.assert_allclose(Q, P.T, atol=1e-12)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-12)


def test_alignment_matrices_are_orthogonal_and_keep_each_span(bent):
    """Q^T Q = I to 1e-12 (an SVD's factors of a 6 x 6 matrix); the aligned basis spans the
    pose's own subspace (projectors agree to 1e-12)."""
    bases = np.stack([m.weights for m in bent.modes])
    features = np.array([[0.0], [1.0]])
    al = align_bases(bases, bent.masses, features)
    assert list(al.parent) == [-1, 0]
    for Q, U, A in zip(al.rotations, bases, al.bases):
        np.testing.assert_allclose(Q.T @ Q, np.eye(len(Q)), atol=1e-12)
        assert np.abs(projector(U, bent.masses) - projector(A, bent.masses)).max() < 1e-12
    # Turned towards the rest basis: the aligned columns match it better than the raw ones.
    G = lambda A, B: np.diag(A.T @ (bent.masses[:, None] * B))  # noqa: E731
    assert G(al.bases[1], bases[0]).sum() >= np.abs(G(bases[1], bases[0])).sum() - 1e-12
    assert (al.cosines[1] > 0).all() and (al.cosines[1] <= 1 + 1e-12).all()


def test_the_tree_grows_greedily_from_the_root():
    """Poses on a line at 0, 1, 3, 3.5, -2: each joins the nearest connected pose (§5.1)."""
    features = np.array([[0.0], [1.0], [3.0], [3.5], [-2.0]])
    assert list(alignment_tree(features)) == [-1, 0, 1, 2, 0]
    assert list(alignment_tree(features, root=3)) == [1, 2, 3, -1, 0]
