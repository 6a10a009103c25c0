"""Skinning eigenmodes at a training pose (core/posespace/modes.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.model.constraint import weight_space_constraint
from core.posespace.modes import posed_skinning_modes
from core.subspace.skinning_modes import skinning_eigenmodes
from tests.core.posespace.conftest import M_MODES


def projector(W, masses):
    """The M-orthogonal projector (n, n) onto span(W): basis-independent, so spans compare exactly."""
    G = W.T @ (masses[:, None] * W)
    return W @ np.linalg.solve(G, W.T * masses[None, :])


def test_at_the_rest_pose_the_modes_are_the_rest_modes(bent):
    """Same Hessian, constraint and mass: the spans agree to the eigensolver's accuracy (its
    1e-10 residual tolerance, amplified by the eigengap: 1e-7)."""
    rest = skinning_eigenmodes(bent.scene.mesh, bent.material, bent.masses, bent.scene.rig, None, M_MODES)
    np.testing.assert_allclose(bent.modes[0].eigenvalues, rest.eigenvalues, rtol=1e-9)
    P0, P1 = projector(bent.modes[0].weights, bent.masses), projector(rest.weights, bent.masses)
    assert np.abs(P0 - P1).max() < 1e-7


def test_bent_modes_differ_yet_stay_complementary_and_orthonormal(bent):
    """J_w W = 0 to 1e-9 of the rows' scale times the weights' (a projection onto the constraint's
    complement, exact up to round-off); W^T M W = I to 1e-10 (CholeskyQR-orthonormalised)."""
    W = bent.modes[1].weights
    Jw = weight_space_constraint(bent.scene.mesh.X, bent.scene.rig, bent.masses, np.ones(bent.scene.mesh.n))
    scale = abs(Jw).sum(axis=1).max() * np.abs(W).max()
    assert np.abs(Jw @ W).max() < 1e-9 * scale
    np.testing.assert_allclose(W.T @ (bent.masses[:, None] * W), np.eye(M_MODES), atol=1e-10)
    # The bend changed the modes: the bent spectrum is softer and the spans differ.
    assert bent.modes[1].eigenvalues[0] < 0.9 * bent.modes[0].eigenvalues[0]
    P0, P1 = projector(bent.modes[0].weights, bent.masses), projector(W, bent.masses)
    assert np.abs(P0 - P1).max() > 1e-2


def test_a_pose_that_inverts_tets_is_refused(bent):
    folded = bent.scene.mesh.X * np.array([-1.0, 1.0, 1.0])  # a mirror image: every tet inverted
    with pytest.raises(MeshError, match="inverted"):
        posed_skinning_modes(bent.scene.mesh, folded, bent.material, bent.masses, bent.scene.rig, None, M_MODES)
