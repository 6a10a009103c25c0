"""Contact rows of the reduced coordinates (core/contact/sample_rows.py)."""

import numpy as np

from core.contact.sample_rows import stacked_rows


def test_rows_are_direction_times_basis_row():
    """Row r applied to z (3, q) is d_r . (z Y_r): here the z-component of z Y_1 (round-off: 1e-12 relative)."""
    Y = np.arange(6.0).reshape(2, 3)
    J = stacked_rows(Y, np.array([1]), np.array([[0.0, 0.0, 1.0]]))
    z = np.random.default_rng(0).standard_normal((3, 3))
    assert np.isclose(J[0] @ z.ravel(), (z @ Y[1])[2], rtol=1e-12, atol=0.0)
