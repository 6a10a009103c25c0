"""Planted feet (core/model/planted.py): the flesh the rig puts on the ground, and holding it still."""

import numpy as np
import pytest

from core.errors import RigError
from core.model.planted import MAX_SHARE, grounded, planted_tet_vertices, planted_vertices, rig_positions
from core.model.rig import rig_parameters
from core.pipeline import CharacterInput, FrameSimulation, SolverSettings, SubspaceSettings, prepare_character
from core.validation.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


def _walk(frames: int) -> np.ndarray:
    """Two bones: bone 0 still, bone 1 lifted and lowered along z; (frames, 24) parameters."""
    out = []
    for f in range(frames):
        A = np.tile(np.eye(4)[:3], (2, 1, 1))
        A[1, 2, 3] = 0.3 * max(0.0, np.sin(f / 3.0))
        out.append(rig_parameters(A))
    return np.array(out)


def test_rig_positions_are_linear_blend_skinning():
    rest = np.random.default_rng(0).normal(size=(7, 3))
    W = np.random.default_rng(1).random((7, 2))
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    A[1, :, 3] = (1.0, 2.0, 3.0)
    x = rig_positions(rest, W, rig_parameters(A)[None])
    w1 = W[:, 1] / W.sum(axis=1)
    assert np.allclose(x[0], rest + w1[:, None] * np.array([1.0, 2.0, 3.0]))


def test_grounded_is_within_one_percent_of_the_lowest_point_per_frame():
    pos = np.zeros((2, 3, 3))
    pos[:, :, 2] = [[0.0, 0.005, 0.5], [0.2, 0.0, 0.5]]  # diagonal 1: 1 % is 0.01
    assert grounded(pos, 1.0).tolist() == [[True, True, False], [False, True, False]]


def test_a_clip_lying_on_the_ground_plants_nothing():
    rest = np.c_[np.linspace(0, 1, 10), np.zeros(10), np.zeros(10)]  # a flat line on the ground
    W = np.ones((10, 1))
    assert grounded(rig_positions(rest, W, _walk(2)[:, :12]), 1.0).mean() > MAX_SHARE
    assert not planted_vertices(rest, W, _walk(2)[:, :12]).any()


def test_planted_tet_vertices_are_the_corners_of_the_tets_holding_them():
    T = np.array([[0, 1, 2, 3], [1, 2, 3, 4]])
    assert planted_tet_vertices(T, np.array([1, 0, 0]), np.array([True, False, False])).tolist() == [1, 2, 3, 4]


@pytest.fixture(scope="module")
def feet():
    """Two spheres, one above the other: the lower one (bone 0) stands on the ground, the upper (bone 1) hops."""
    V, F = join(uv_sphere(16, 0.4, (0, 0, 0.4)), uv_sphere(16, 0.3, (0, 0, 1.0)))
    W = chain_weights(V, np.array([0.3, 1.0]), axis=2)
    return V, F, W


def test_planted_flesh_follows_the_rig_exactly(feet):
    V, F, W = feet
    p = _walk(30)
    planted = planted_vertices(V, W, p)
    assert 0 < planted.sum() < 0.25 * len(V) and V[planted, 2].max() < 0.05
    inp = CharacterInput(rest=V, faces=F, bone_weights=W, planted=planted)
    prep = prepare_character(inp, SUB)
    free = prepare_character(CharacterInput(rest=V, faces=F, bone_weights=W), SUB)
    assert prep.key != free.key  # the cache key knows the feet
    held = planted_tet_vertices(prep.mesh.T, prep.embedding.tet, planted)
    assert np.abs(prep.model.weights[held]).max() < 1e-10  # every mode vanishes on the held corners
    sim = FrameSimulation(prep, SolverSettings(), 0, 29, lambda f: p[min(max(f, 0), 29)])
    worst = max(float(np.abs(sim.offsets(f)[planted]).max()) for f in range(0, 30, 3))
    moved = max(float(np.abs(sim.offsets(f)).max()) for f in range(0, 30, 3))
    assert moved > 1e-4 and worst <= 1e-6 * moved + 1e-7


def test_planted_flags_are_checked(feet):
    V, F, W = feet
    with pytest.raises(RigError, match="one flag per vertex"):
        prepare_character(CharacterInput(rest=V, faces=F, bone_weights=W, planted=np.ones(3, bool)), SUB)


def test_a_clip_off_the_floor_plants_nothing():
    """A swimmer: its lowest point still at every frame, but well below the floor (issue 37: a dolphin's
    flippers, held as if they were feet, never moved).  Lift it onto the floor and it stands."""
    rest = np.c_[np.zeros(20), np.zeros(20), np.linspace(0.0, 1.0, 20)]
    W = np.ones((20, 1))
    p = _walk(4)[:, :12]
    below = rest - np.array([0.0, 0.0, 0.3])  # the lowest point 30 % of the body under the floor
    assert not planted_vertices(below, W, p).any()
    assert planted_vertices(rest, W, p).any()
    assert planted_vertices(below, W, p, floor=None).any()  # without a floor: any lowest point stands
    assert planted_vertices(below, W, p, floor=-0.3).any()


def test_a_planted_foot_holds_its_thin_leg_but_not_a_thick_body():
    """Tet vertices held for the flesh calibration: the thin foot bone and the thin chain above it, never
    the thick body the leg hangs from (nor a thick body that lies on the ground)."""
    from core.model.planted import leg_tet_vertices

    n = 60
    X = np.c_[np.zeros(n), np.zeros(n), np.linspace(0.0, 1.0, n)]
    bone = np.repeat([0, 1, 2], 20)  # 0 foot (bottom), 1 shin, 2 body (top)
    W = np.eye(3)[bone]
    depth = np.where(bone == 2, np.linspace(0, 1.0, n), 0.05)  # the body is deep, the leg is thin
    parents = np.array([1, 2, -1])
    planted = np.zeros(n, dtype=bool)
    planted[:5] = True  # the sole
    held = leg_tet_vertices(W, X, depth, parents, W, X, planted)
    assert set(np.unique(bone[held])) == {0, 1}
    # A body on the ground (thick where it is planted) is not held at all.
    thick = np.ones(n)
    assert len(leg_tet_vertices(W, X, thick, parents, W, X, planted)) == 0
