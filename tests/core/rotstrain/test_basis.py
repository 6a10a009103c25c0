"""Linear modes and the extended basis of first and second RS derivatives."""

import numpy as np

from core.rotstrain.basis import mass_orthonormalize, project_out, rigid_modes, second_order_gradients

from .bars import bar


def gram(V, masses):
    return np.einsum("kai,a,lai->kl", V, masses, V)


def test_linear_modes_are_mass_orthonormal_and_clamped():
    b = bar(3)
    assert np.allclose(gram(b.U, b.masses), np.eye(3), atol=1e-10)
    assert np.abs(b.U[:, b.fixed]).max() == 0.0


def test_extended_basis_has_r_plus_r_r_plus_1_over_2_columns_and_spans_the_modes():
    b = bar(3)
    B = b.fit.B
    assert len(B) == 3 + 6
    assert np.allclose(gram(B, b.masses), np.eye(len(B)), atol=1e-10)
    # the first-order columns are the Poisson fits of the modes' own gradients: the modes themselves
    left = project_out(b.U, B, b.masses)
    assert np.abs(left).max() < 1e-10 * np.abs(b.U).max()


def test_second_order_gradients_are_the_second_derivatives_of_eq_1():
    """d2/dq_i dq_j of exp(omega(q)) (eps(q) + I) at q = 0, by central differences."""
    from core.rotstrain.coordinates import rs_fields
    from core.rotstrain.transfer import rs_gradient

    b = bar(2)
    h = 1e-3 / np.abs(b.W).max()  # tet rotations of a milliradian
    F = lambda q: rs_gradient(*rs_fields(b.W, b.S, q))  # noqa: E731
    e0, e1 = np.eye(2)
    fd = (F(h * (e0 + e1)) - F(h * (e0 - e1)) - F(h * (e1 - e0)) + F(-h * (e0 + e1))) / (4 * h * h)
    second = second_order_gradients(b.W, b.S)  # pairs (0,0), (0,1), (1,1)
    assert np.abs(fd - second[1]).max() < 1e-5 * np.abs(second[1]).max()


def test_a_free_basis_holds_no_rigid_motion():
    b = bar(3, fixed=False)
    Y = rigid_modes(b.mesh.X, b.masses)
    assert np.allclose(gram(Y, b.masses), np.eye(6), atol=1e-10)
    assert np.abs(np.einsum("kai,a,lai->kl", b.fit.B, b.masses, Y)).max() < 1e-10


def test_mass_orthonormalize_drops_dependent_fields():
    b = bar(2)
    V = np.concatenate([b.U, b.U[:1] + b.U[1:2]])
    assert len(mass_orthonormalize(V, b.masses)) == 2
