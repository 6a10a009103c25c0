"""Rigs (core/rig.py)."""

import numpy as np
import pytest

from core.errors import RigError
from core.model.rig import LBSRig, LinearRig, lbs_jacobian, lbs_positions, rest_parameters, rig_parameters
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
