"""RS coordinates: the exact inverse of eq. 1, and the linear split that seed 000 §9.4 shows collapsing."""

import numpy as np

from core.rotstrain.coordinates import hat, rotation_log, rs_fields, rs_from_gradient, rs_vectors, vee
from core.rotstrain.exponential import exp_rodrigues

from .bars import bar

QUARTER_TURN_Z = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def test_hat_and_vee_are_inverse_and_hat_is_the_cross_product():
    v, w = np.random.default_rng(0).standard_normal((2, 5, 3))
    assert np.allclose(vee(hat(v)), v)
    assert np.allclose(np.einsum("kij,kj->ki", hat(v), w), np.cross(v, w))


def test_rs_of_the_rest_shape_is_zero():
    omega, eps = rs_from_gradient(np.zeros((4, 3, 3)))
    assert np.abs(omega).max() == 0.0 and np.abs(eps).max() < 1e-15


def test_rs_from_gradient_inverts_eq_1_for_any_angle():
    rng = np.random.default_rng(1)
    axes = rng.standard_normal((50, 3))
    angles = rng.uniform(0.0, np.pi - 1e-3, 50)
    angles[:3] = [0.0, np.pi / 2, np.pi - 1e-6]
    omega = hat(axes / np.linalg.norm(axes, axis=1, keepdims=True) * angles[:, None])
    A = 0.2 * rng.standard_normal((50, 3, 3))
    eps = 0.5 * (A + np.swapaxes(A, 1, 2))  # |eps| well below 1: eps + I is SPD
    Fd = exp_rodrigues(omega) @ (eps + np.eye(3)) - np.eye(3)
    om2, eps2 = rs_from_gradient(Fd)
    assert np.abs(exp_rodrigues(om2) @ (eps2 + np.eye(3)) - np.eye(3) - Fd).max() < 1e-10
    assert np.abs(om2 - omega).max() < 1e-8
    assert np.abs(eps2 - eps).max() < 1e-10


def test_rotation_log_near_a_half_turn_keeps_the_axis():
    omega = hat(np.array([[0.0, 0.0, np.pi - 1e-9], [0.6, 0.0, 0.8 * (np.pi - 0.01)]]))
    R = exp_rodrigues(omega)
    assert np.abs(exp_rodrigues(rotation_log(R)) - R).max() < 1e-12


def test_the_linear_split_of_a_quarter_turn_collapses_as_seed_000_says():
    """§9.4: splitting R - I into skew + symmetric and mapping back gives diag(0, 0, 1)."""
    G = QUARTER_TURN_Z - np.eye(3)
    w, s = 0.5 * (G - G.T), 0.5 * (G + G.T)
    F = exp_rodrigues(w[None])[0] @ (s + np.eye(3))
    assert np.allclose(F, np.diag([0.0, 0.0, 1.0]))
    # The exact split does not collapse: it recovers the quarter turn with zero strain.
    omega, eps = rs_from_gradient(G[None])
    assert np.abs(exp_rodrigues(omega)[0] - QUARTER_TURN_Z).max() < 1e-12 and np.abs(eps).max() < 1e-12


def test_rs_vectors_split_the_modes_gradients_and_combine_linearly():
    b = bar(3)
    W, S = rs_vectors(b.mesh, b.U)
    assert np.allclose(W, -np.swapaxes(W, 2, 3)) and np.allclose(S, np.swapaxes(S, 2, 3))
    q = np.array([0.3, -1.0, 2.0])
    omega, eps = rs_fields(W, S, q)
    assert np.allclose(omega, np.tensordot(q, W, 1)) and np.allclose(eps, np.tensordot(q, S, 1))
