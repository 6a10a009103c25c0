"""Moving a gait between meshes (core/locomotion/transfer.py): modes paired by their fields, not their indices."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.locomotion.transfer import match_modes, mode_overlaps, transfer_gait


def test_a_mesh_pairs_each_mode_with_itself(slug):
    mesh, _mat, model = slug
    D = model.modes.displacements
    C = mode_overlaps(mesh, D, mesh, D)
    np.testing.assert_allclose(np.abs(np.diag(C)), 1.0, atol=1e-12)
    match = match_modes(C)
    assert match.target.tolist() == list(range(model.m)) and (match.sign == 1.0).all()


def test_swapped_and_flipped_modes_are_found_and_the_gait_follows_them(slug):
    """The target's modes 1 and 3 swapped and mode 2 negated: the gait's entries follow, amplitude sign too."""
    mesh, _mat, model = slug
    D = model.modes.displacements
    order = np.array([0, 3, 2, 1, 4, 5])
    D_target = D[:, :, order] * np.array([1, 1, -1, 1, 1, 1.0])
    match = match_modes(mode_overlaps(mesh, D, mesh, D_target))
    assert match.target.tolist() == [0, 3, 2, 1, 4, 5]
    assert match.sign.tolist() == [1, 1, -1, 1, 1, 1]
    x = np.arange(1.0, 19.0)  # (amplitude, period, phase) x 6 modes
    y = transfer_gait(x, match, 6).reshape(3, 6)
    src = x.reshape(3, 6)
    np.testing.assert_array_equal(y[:, 3], [src[0, 1], src[1, 1], src[2, 1]])
    np.testing.assert_array_equal(y[:, 2], [-src[0, 2], src[1, 2], src[2, 2]])
    back = match_modes(mode_overlaps(mesh, D_target, mesh, D))
    np.testing.assert_array_equal(transfer_gait(transfer_gait(x, match, 6), back, 6), x)


def test_extra_target_modes_rest_and_unrelated_fields_are_refused(slug):
    mesh, _mat, model = slug
    D = model.modes.displacements
    match = match_modes(mode_overlaps(mesh, D[:, :, :4], mesh, D))
    y = transfer_gait(np.ones(12), match, 6).reshape(3, 6)
    assert (y[0, 4:] == 0.0).all() and (y[0, :4] == 1.0).all()  # tanh(0): modes 5 and 6 still
    noise = np.random.default_rng(0).standard_normal(D.shape)
    with pytest.raises(SimulationError, match="no counterpart"):
        match_modes(mode_overlaps(mesh, D, mesh, noise))
    with pytest.raises(SimulationError, match="cannot play"):
        match_modes(mode_overlaps(mesh, D, mesh, D[:, :, :4]))
