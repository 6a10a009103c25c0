"""Where the motion goes, per region (core/validation/where_it_moves.py)."""

import numpy as np
import pytest

from core.pipeline import CharacterInput, FrameSimulation, SolverSettings, SubspaceSettings, prepare_character
from core.validation.scenes import chain_weights
from core.validation.where_it_moves import (
    effective_stiffness,
    grounded_offset_pct,
    markdown,
    mode_participation,
    region_reports,
    swing_capture,
)
from tests.core.surfaces import join, uv_sphere


def test_participation_and_stiffness_weigh_modes_by_their_mass_in_the_region():
    W = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    part = mode_participation(W, np.ones(3), np.array([1, 2]))
    np.testing.assert_allclose(part, [0.0, 1.0])
    assert effective_stiffness(np.array([1.0, 16.0]), part) == pytest.approx(4.0)
    assert np.isnan(effective_stiffness(np.array([1.0, 16.0]), np.zeros(2)))


def test_a_rigid_turn_is_captured_by_an_affine_basis_and_not_by_a_vanishing_one():
    X = np.random.default_rng(0).normal(size=(20, 3))
    ones = np.ones((20, 1))
    basis = np.hstack([ones * X, ones])  # one constant weight: the affine maps, which hold every turn
    assert swing_capture(basis, np.ones(20), X, np.arange(10)) < 1.0  # the turn of half the points is not affine
    assert swing_capture(basis, np.ones(20), X, np.arange(20)) == pytest.approx(1.0)
    held = basis.copy()
    held[:10] = 0.0
    assert swing_capture(held, np.ones(20), X, np.arange(10)) == pytest.approx(0.0, abs=1e-9)


def test_region_reports_on_a_swinging_chain():
    V, F = join(uv_sphere(16, 0.5, (0, 0, 0)), uv_sphere(16, 0.4, (0.7, 0, 0)))
    W = chain_weights(V, np.array([-0.5, 0.5, 1.1]))
    prep = prepare_character(
        CharacterInput(rest=V, faces=F, bone_weights=W),
        SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice"),
    )

    def swing(f):
        A = np.tile(np.eye(4)[:3], (3, 1, 1))
        A[2, 1, 3] = 0.2 * np.sin(f / 3.0)
        return A.ravel()

    sim = FrameSimulation(prep, SolverSettings(), 0, 20, swing)
    u = np.array([sim.offsets(f) for f in range(21)], dtype=np.float64)
    tip, body = V[:, 0] > 0.9, V[:, 0] < -0.3
    reports = region_reports(prep, u, 2.0, {"tip": tip, "body": body, "empty": np.zeros(len(V), bool)})
    assert [r.name for r in reports] == ["tip", "body"]
    assert reports[0].peak_offset_pct == pytest.approx(100 * np.linalg.norm(u[:, tip], axis=2).max() / 2.0)
    assert all(0.0 <= r.mode_share <= 1.0 and 0.0 <= r.leak <= 1.0 for r in reports)
    assert "| chain | default | tip |" in markdown([("chain", "default", reports)])
    rig = np.broadcast_to(V, u.shape).copy()
    assert grounded_offset_pct(u, rig, 2.0) >= 0.0
