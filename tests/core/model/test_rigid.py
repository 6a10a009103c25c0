"""Rigid parts (core/model/rigid.py, issue 23 item 6a): a loose piece bound to one bone follows it."""

import numpy as np
import pytest

from core.errors import SkinmodesError
from core.model.planted import planted_tet_vertices
from core.model.rig import rig_parameters
from core.model.rigid import HARD_SURFACE, held_pieces, rigid_pieces, vertex_pieces
from core.pipeline import CharacterInput, FrameSimulation, SolverSettings, SubspaceSettings, prepare_character
from core.validation.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


def _unwelded(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every triangle with its own three vertices, as a flat-shaded glTF import gives (the Fox)."""
    return V[F.ravel()], np.arange(3 * len(F)).reshape(-1, 3)


def test_a_loose_piece_on_one_bone_is_rigid_and_a_blended_one_is_not():
    V, F = join(uv_sphere(10, 0.4, (0, 0, 0)), uv_sphere(10, 0.2, (0, 0, 1.0)))
    W = np.zeros((len(V), 2))
    lower = V[:, 2] < 0.6
    W[lower] = chain_weights(V[lower], np.array([-0.3, 0.3]), axis=2)  # blended: not rigid
    W[~lower, 1] = 2.0  # alone on bone 1 (unnormalised rows are normalised)
    assert (rigid_pieces(V, F, W) == ~lower).all()
    # Two bones inside one piece, each alone: not one bone, not rigid.
    W2 = W.copy()
    W2[~lower & (V[:, 0] > 0)] = [1.0, 0.0]
    assert not rigid_pieces(V, F, W2).any()
    # Just under RIGID_WEIGHT (0.999) on one vertex: that piece is not rigid.
    W3 = W.copy()
    W3[np.flatnonzero(~lower)[0]] = [0.002, 0.998]
    assert not rigid_pieces(V, F, W3).any()


def test_one_hot_regions_of_one_welded_piece_are_not_rigid():
    """The Fox's tail is one-hot on its bones but part of the body: flat-shaded split vertices are welded first."""
    V, F = _unwelded(*uv_sphere(10, 0.5))
    W = np.zeros((len(V), 2))
    W[V[:, 2] > 0, 1] = 1.0
    W[V[:, 2] <= 0, 0] = 1.0
    assert len(np.unique(vertex_pieces(V, F))) == 1  # 180 triangles, one piece once welded
    assert not rigid_pieces(V, F, W).any()
    # A mesh of one piece on one bone is a blob that jiggles, not a rigid part.
    assert not rigid_pieces(V, F, np.ones((len(V), 1))).any()


def _swing(frames: int) -> np.ndarray:
    """Two bones: bone 0 still, bone 1 swung sideways and stopped; (frames, 24) parameters."""
    out = []
    for f in range(frames):
        A = np.tile(np.eye(4)[:3], (2, 1, 1))
        A[1, 0, 3] = 0.4 * np.sin(min(f, 12) / 12.0 * np.pi / 2)
        out.append(rig_parameters(A))
    return np.array(out)


@pytest.fixture(scope="module")
def body_and_plate():
    """A blended two-bone body (a sphere) and, apart from it, a plate (a small sphere) alone on bone 1."""
    V, F = join(uv_sphere(16, 0.4, (0, 0, 0.0)), uv_sphere(12, 0.15, (0, 0, 0.7)))
    plate = V[:, 2] > 0.5
    W = np.zeros((len(V), 2))
    W[~plate] = chain_weights(V[~plate], np.array([-0.3, 0.3]), axis=2)
    W[plate, 1] = 1.0
    return V, F, W, plate


def test_a_rigid_part_follows_its_bone_exactly_and_swings_without_the_rule(body_and_plate):
    V, F, W, plate = body_and_plate
    p = _swing(30)
    inp = CharacterInput(rest=V, faces=F, bone_weights=W)
    prep = prepare_character(inp, SubspaceSettings(**{**SUB.__dict__, "rigid_pieces": "all"}))
    free = prepare_character(inp, SubspaceSettings(**{**SUB.__dict__, "rigid_pieces": "none"}))
    assert prep.key != free.key and prep.stats["rigid_vertices"] > 0
    held = planted_tet_vertices(prep.mesh.T, prep.embedding.tet, plate)
    # Every mode vanishes on the plate's tet corners: the stick rows are solved to round-off.
    assert np.abs(prep.model.weights[held]).max() < 1e-10

    def offsets(pc):
        sim = FrameSimulation(pc, SolverSettings(), 0, 29, lambda f: p[min(max(f, 0), 29)])
        return np.array([np.abs(sim.offsets(f)).max(axis=1) for f in range(30)])

    held_u, free_u = offsets(prep), offsets(free)
    # Without the rule the plate wobbles visibly (> 1e-4 of a body about 1 long); with it, it does
    # not move off its bone beyond float32 reconstruction round-off (1e-7 of that size).
    assert free_u[:, plate].max() > 1e-4
    assert held_u[:, plate].max() <= 1e-7
    # The blended body keeps its secondary motion.
    assert held_u[:, ~plate].max() > 1e-4


def test_held_pieces_follow_the_rigid_pieces_mode(body_and_plate):
    """Automatic holds one-bone loose pieces only on a hard-surface mesh (HARD_SURFACE of it or more in such
    pieces: a robot of plates); All holds them, None none, Vertex Group the painted vertices."""
    V, F, W, plate = body_and_plate
    assert plate.mean() < HARD_SURFACE  # an organic body with one plate: the plate jiggles by default
    assert not held_pieces(V, F, W, "auto").any()
    assert np.array_equal(held_pieces(V, F, W, "all"), plate)
    assert not held_pieces(V, F, W, "none").any()
    painted = np.where(plate, 1.0, 0.0)
    painted[0] = 0.7  # any vertex the animator paints at 0.5 or more follows its bone
    assert np.array_equal(held_pieces(V, F, W, "group", painted), plate | (np.arange(len(V)) == 0))
    assert not held_pieces(V, F, W, "group", None).any()
    # A mesh of plates: every piece alone on its bone (two spheres, one per bone) is hard-surface.
    Wp = np.zeros_like(W)
    Wp[plate, 1] = Wp[~plate, 0] = 1.0
    assert held_pieces(V, F, Wp, "auto").all()
    with pytest.raises(SkinmodesError, match="Rigid Pieces"):
        held_pieces(V, F, W, "some")
