"""Covariance tensors (core/locomotion/covariance.py) against brute-force per-tet sums."""

import numpy as np

from core.locomotion.covariance import (
    basis_gradients,
    contract,
    covariance_tensor,
    passive_tensor,
    target_gradients,
    target_gram,
)
from core.model.fem import deformation_gradient_operator


def _per_tet_gradients(mesh, positions):
    """F (t, 3, 3) from full positions (n, 3) by the FEM operator, independently of the tensors."""
    return (deformation_gradient_operator(mesh) @ positions.ravel()).reshape(mesh.t, 3, 3)


def test_contraction_equals_the_brute_force_sum(slug_clusters):
    mesh, mat, model = slug_clusters
    rng = np.random.default_rng(0)
    Z = model.rest + 0.1 * rng.standard_normal(model.rest.shape)
    a = 0.3 * rng.standard_normal(model.m)
    abar = np.r_[a, 1.0]
    F = _per_tet_gradients(mesh, model.positions(Z))
    target = mesh.X + model.modes.displacements @ a
    Yt = _per_tet_gradients(mesh, target)
    w = 2.0 * mat.mu * mesh.volumes  # actuation_stiffness = 2
    labels = model.actuation_labels
    brute = np.zeros((labels.max() + 1, 3, 3))
    np.add.at(brute, labels, w[:, None, None] * F @ Yt.transpose(0, 2, 1))  # H_c = sum w F Y^T (eq. 12)
    H = contract(model.K, Z, abar)
    assert np.abs(H - brute).max() <= 1e-10 * np.abs(brute).max()


def test_passive_tensor_and_target_gram_equal_brute_force(slug_clusters):
    mesh, mat, model = slug_clusters
    rng = np.random.default_rng(1)
    Z = model.rest + 0.1 * rng.standard_normal(model.rest.shape)
    F = _per_tet_gradients(mesh, model.positions(Z))
    w = mat.mu * mesh.volumes
    brute = np.zeros((model.passive_labels.max() + 1, 3, 3))
    np.add.at(brute, model.passive_labels, w[:, None, None] * F)
    H = np.einsum("ui,cuj->cij", Z, model.P)
    assert np.abs(H - brute).max() <= 1e-10 * np.abs(brute).max()
    a = rng.standard_normal(model.m)
    Yt = _per_tet_gradients(mesh, mesh.X + model.modes.displacements @ a)
    abar = np.r_[a, 1.0]
    G = target_gram(target_gradients(mesh, model.modes.displacements), 2.0 * w)
    np.testing.assert_allclose(abar @ G @ abar, np.sum(2.0 * w * (Yt**2).sum(axis=(1, 2))), rtol=1e-10)


def test_chunking_does_not_change_the_tensor(slug, monkeypatch):
    import core.locomotion.covariance as cov

    mesh, mat, model = slug
    DY = basis_gradients(mesh, model.subspace.basis)
    DPhi = target_gradients(mesh, model.modes.displacements)
    labels = model.actuation_labels
    w = mat.mu * mesh.volumes
    whole = covariance_tensor(DY, DPhi, labels, w)
    monkeypatch.setattr(cov, "CHUNK_ENTRIES", 7 * DY.shape[2] * 3 * DPhi.shape[3])
    np.testing.assert_allclose(covariance_tensor(DY, DPhi, labels, w), whole, rtol=0, atol=1e-12 * np.abs(whole).max())
    assert passive_tensor(DY, labels, w).shape == (1, model.q, 3)
