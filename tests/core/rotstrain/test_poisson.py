"""The Poisson reconstruction (eq. 3): exact for compatible gradient fields, rigid rotations included."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.rotstrain.coordinates import displacement_gradients, hat
from core.rotstrain.exponential import exp_rodrigues
from core.rotstrain.poisson import PoissonReconstruction
from core.rotstrain.transfer import rs_gradient

from .bars import bar


@pytest.mark.parametrize("angle", [np.pi / 2, 2.0, np.pi - 1e-3])
def test_a_rigidly_rotated_free_shape_is_reconstructed_exactly(angle):
    """RS omega = a constant rotation, eps = 0: the shape turns, it does not collapse (seed 000 §9.4)."""
    b = bar(3, fixed=False)
    axis = np.array([0.3, -0.5, 0.8])
    omega = np.broadcast_to(hat(angle * axis / np.linalg.norm(axis)), (b.mesh.t, 3, 3))
    Fd = rs_gradient(omega, np.zeros_like(omega))
    u = b.poisson.reconstruct(Fd[None])[0]
    R = exp_rodrigues(omega[:1])[0]
    expected = b.mesh.X @ (R - np.eye(3)).T
    expected -= b.masses @ expected / b.masses.sum()  # the free reconstruction has zero mass-weighted mean
    assert np.abs(u - expected).max() < 1e-10 * b.mesh.size()


def test_a_compatible_field_with_clamped_vertices_is_reconstructed_exactly():
    b = bar(3, fixed=True)
    X = b.mesh.X
    u = np.stack([0.1 * X[:, 0] ** 2, np.sin(X[:, 0]) * X[:, 1], X[:, 0] * X[:, 2]], axis=1)
    u[b.fixed] = 0.0  # the clamped vertices all sit at x = 0, where u vanishes anyway
    Fd = displacement_gradients(b.mesh, u[None])
    assert np.abs(b.poisson.reconstruct(Fd)[0] - u).max() < 1e-12
    # and many right-hand sides at once give the same as one at a time
    F2 = np.concatenate([Fd, 2.0 * Fd])
    both = b.poisson.reconstruct(F2)
    assert np.allclose(both[1], 2.0 * both[0], atol=1e-13)


def test_a_free_object_needs_its_masses_and_a_fixed_one_its_vertices():
    b = bar(3)
    with pytest.raises(SimulationError, match="masses"):
        PoissonReconstruction(b.mesh, None, None)
    with pytest.raises(SimulationError, match="fixed=None"):
        PoissonReconstruction(b.mesh, np.array([], dtype=int))
