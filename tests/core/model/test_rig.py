"""Rigs (core/rig.py)."""

import numpy as np
import pytest

from core.errors import RigError
from core.model.rig import (
    MIN_WEIGHT_SUM,
    LBSRig,
    LinearRig,
    lbs_basis,
    lbs_jacobian,
    lbs_positions,
    normalize_weights,
    rest_parameters,
    rig_matrix,
    rig_parameters,
)
from core.validation.scenes import bar_scene, random_rotation


@pytest.fixture(scope="module")
def scene():
    return bar_scene(cells_per_unit=2, bones=4)


def test_jacobian_times_parameters_is_linear_blend_skinning(scene):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 3, 4))
    J = lbs_jacobian(scene.mesh.X, scene.rig.weights)
    x = (J @ rig_parameters(A)).reshape(-1, 3)
    assert np.abs(x - lbs_positions(scene.mesh.X, scene.rig.weights, A)).max() < 1e-12
    # The rest pose reproduces the rest shape (weights are a partition of unity).
    x0 = (J @ rest_parameters(4)).reshape(-1, 3)
    assert np.abs(x0 - scene.mesh.X).max() < 1e-12


def test_rigid_pose_moves_every_vertex_rigidly(scene):
    R = random_rotation(np.random.default_rng(1))
    A = np.tile(np.hstack([R, [[1.0], [2.0], [3.0]]]), (4, 1, 1))
    x = scene.rig.positions(scene.mesh.X, rig_parameters(A))
    assert np.abs(x - (scene.mesh.X @ R.T + [1, 2, 3])).max() < 1e-12


@pytest.mark.parametrize(
    "weights,match",
    [
        (np.zeros((5, 0)), "no deforming bones"),
        (np.zeros((5, 2)), "all bone weights are zero"),
        (np.array([[np.nan, 1]] + [[1, 0]] * 4), "NaN"),
        (np.array([[-0.5, 1]] + [[1, 0]] * 4), "negative"),
        (np.array([[0, 0]] + [[1, 0]] * 4), "no bone weight"),
        (np.array([[MIN_WEIGHT_SUM, 0]] + [[1, 0]] * 4), "no bone weight"),  # at the threshold: unskinned
    ],
)
def test_bad_weights_get_one_line_errors(weights, match):
    with pytest.raises(RigError, match=match) as err:
        LBSRig.from_weights(weights)
    assert "\n" not in str(err.value)


def test_weights_are_normalised_like_blenders_armature_modifier():
    rig = LBSRig.from_weights(np.array([[2.0, 2.0], [0.5, 0.0]]))
    assert np.allclose(rig.weights, [[0.5, 0.5], [1.0, 0.0]])


def test_general_rig_checks_its_shape(scene):
    with pytest.raises(RigError, match="shape"):
        LinearRig.from_matrix(np.ones((7, 2)), scene.mesh.n)
    J = lbs_jacobian(scene.mesh.X, scene.rig.weights)
    assert LinearRig.from_matrix(J, scene.mesh.n).n_params == 48


def test_normalize_weights_scales_rows_and_zeroes_unskinned_ones():
    """Rows above MIN_WEIGHT_SUM are divided by their own sum (bit for bit: the same division);
    rows at or below it, an all-zero row included, come back as zeros, never NaN."""
    W = np.array([[2.0, 2.0, 0.0], [0.3, 0.0, 0.1], [0.0, 0.0, 0.0], [MIN_WEIGHT_SUM, 0.0, 0.0], [2e-4, 1e-4, 0.0]])
    N = normalize_weights(W)
    assert N.dtype == np.float64 and np.isfinite(N).all()
    skinned = [0, 1, 4]
    assert np.array_equal(N[skinned], W[skinned] / W[skinned].sum(axis=1, keepdims=True))
    assert np.array_equal(N[[2, 3]], np.zeros((2, 3)))
    assert np.allclose(N[skinned].sum(axis=1), 1.0, rtol=0, atol=1e-15)  # round-off of one division per entry


def test_lbs_basis_times_the_parameter_matrix_is_linear_blend_skinning(scene):
    """Y P equals the per-bone einsum of lbs_positions up to round-off (1e-12 on unit-size coordinates)."""
    A = np.random.default_rng(2).standard_normal((4, 3, 4))
    Y = lbs_basis(scene.rig.weights, scene.mesh.X)
    assert Y.shape == (scene.mesh.n, 16)
    x = Y @ rig_matrix(rig_parameters(A))
    assert np.abs(x - lbs_positions(scene.mesh.X, scene.rig.weights, A)).max() < 1e-12
    # Column 4 b + 3 is the weight itself (the homogeneous 1): exact.
    assert np.array_equal(Y[:, 3::4], scene.rig.weights)
