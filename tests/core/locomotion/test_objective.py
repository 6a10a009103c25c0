"""The locomotion objective (core/locomotion/objective.py)."""

import numpy as np

from core.locomotion.objective import alignment, body_length, displacement, jump_objective, locomotion_objective

V = np.array([1.0, 0.0, 0.0])


def test_straight_walk_scores_its_distance_in_body_lengths():
    com = np.linspace([0, 0, 0], [3.0, 0.5, 0.0], 11)
    fwd = np.tile(V, (11, 1))
    assert displacement(com, V, 2.0) == 1.5
    assert locomotion_objective(com, fwd, V, 2.0) == 1.5


def test_turning_lowers_the_score_and_backwards_never_pays():
    com = np.linspace([0, 0, 0], [2.0, 0, 0], 5)
    ang = np.linspace(0, np.pi / 3, 5)
    fwd = np.c_[np.cos(ang), np.sin(ang), 0 * ang]
    np.testing.assert_allclose(alignment(fwd, V), 0.5)
    np.testing.assert_allclose(locomotion_objective(com, fwd, V, 1.0), 1.0)
    backwards = locomotion_objective(-com, -np.tile(V, (5, 1)), V, 1.0)
    assert backwards <= 0.0


def test_body_length():
    X = np.array([[0.0, 0, 0], [2.0, 1, 0], [-1.0, 0, 3]])
    assert body_length(X, V) == 3.0


def test_jump_scores_the_mean_rise():
    com = np.zeros((5, 3))
    com[:, 2] = [0.0, 1.0, 2.0, 1.0, 0.0]
    assert jump_objective(com, np.array([0.0, 0.0, 1.0]), 2.0) == 0.4


def test_sideways_drift_costs_its_length_and_height_does_not():
    up = np.array([0.0, 0.0, 1.0])
    com = np.array([[0.0, 0.0, 0.0], [3.0, 1.0, -0.5]])  # 3 m ahead, 1 m to the side, 0.5 m lower
    assert displacement(com, V, 2.0) == 1.5  # the seed's: the side drift is free
    assert displacement(com, V, 2.0, up, side=1.0) == 1.0  # ours: (3 - 1) / 2
    fwd = np.tile(V, (2, 1))
    assert locomotion_objective(com, fwd, V, 2.0, up, side=1.0) == 1.0
