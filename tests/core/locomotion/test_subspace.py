"""The unconstrained simulation subspace (core/locomotion/subspace.py)."""

import numpy as np

from core.locomotion.subspace import rest_coordinates
from core.validation.scenes import random_rotation


def test_first_weight_is_constant_and_rest_is_exact(slug):
    mesh, _, model = slug
    W = model.subspace.weights
    assert np.ptp(W[:, 0]) < 1e-9 * np.abs(W[:, 0]).max()
    np.testing.assert_allclose(model.positions(model.rest), mesh.X, atol=1e-12 * mesh.size())


def test_rigid_and_affine_motions_are_in_the_subspace(slug):
    mesh, mat, model = slug
    from core.model.fem import lumped_mass

    rng = np.random.default_rng(3)
    A = random_rotation(rng) @ np.diag([1.2, 0.9, 1.1])
    target = mesh.X @ A.T + rng.standard_normal(3)
    Z = rest_coordinates(model.subspace.basis, lumped_mass(mesh, mat.density), target)
    np.testing.assert_allclose(model.positions(Z), target, atol=1e-11 * mesh.size())
