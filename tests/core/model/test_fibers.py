"""Fibers along the bones (core/model/fibers.py): their directions and strengths, and what their energy
costs in the solver: a stretch along the fibers several times what it costs across them, and a turn of the
whole rig nothing (the reduced model's own energy, zero to the round-off of its cancelling constants)."""

import numpy as np
import pytest

from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.fibers import FIBER_DELTA, Fibers, tet_fibers
from core.model.rig import rest_parameters, rig_parameters
from core.pipeline import SubspaceSettings, prepare_character
from tests.core.pipeline.characters import HEADS, TAILS, two_spheres

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


def test_fibers_follow_the_heaviest_bone_and_fade_at_joints():
    T = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    W = np.zeros((12, 2))
    W[:4] = [1.0, 0.0]  # all bone 0
    W[4:8] = [0.5, 0.5]  # a joint shared half and half
    W[8:] = [0.2, 0.8]  # mostly bone 1
    heads = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    tails = np.array([[1.0, 0, 0], [1.0, 2.0, 0]])
    f = tet_fibers(T, W, heads, tails)
    assert np.allclose(f.axes[0], [1, 0, 0]) and np.allclose(f.axes[2], [0, 1, 0])
    assert f.strength[0] == 1.0 and f.strength[1] == 0.0 and f.strength[2] == 1.0  # 0.8 vs 0.2: >= 3/4
    D = f.scales()
    assert np.allclose(D[0], FIBER_DELTA * np.eye(3) + np.diag([1.0, 0, 0]))


def test_a_bone_without_a_segment_has_no_fiber():
    T = np.array([[0, 1, 2, 3]])
    W = np.tile([0.0, 1.0], (4, 1))
    f = tet_fibers(T, W, np.array([[0.0, 0, 0], [np.nan] * 3]), np.array([[1.0, 0, 0], [np.nan] * 3]))
    assert f.strength[0] == 0.0 and np.allclose(f.axes[0], 0.0)


@pytest.fixture(scope="module")
def model():
    prep = prepare_character(two_spheres(segments=True), SUB)
    assert isinstance(prep.model.fibers(), Fibers)
    return prep.model


def test_the_fiber_energy_resists_stretch_along_the_bones_not_turns(model):
    """A uniform stretch along the chain's bones (x) against one across them (y): the fibers (at 11 x the
    flesh) make the first cost several times the second (measured 2.9 x the plain ratio with the 6 weights of
    SUB; 2.5 x asked); a rigid turn of the whole body costs nothing."""
    p = rest_parameters(model.bones)
    plain = Simulator(model, SimulationSettings(material="arap"))
    fibered = Simulator(model, SimulationSettings(material="arap", fiber_scale=11.0))
    Y = model.basis()
    G = Y.T @ (model.masses[:, None] * Y)

    def fit(u):  # the reduced coordinates nearest u (n, 3) in the M-norm
        return np.linalg.solve(G, Y.T @ (model.masses[:, None] * u))

    X = model.X - model.X.mean(axis=0)
    eps = 1e-3
    along, across = np.zeros_like(X), np.zeros_like(X)
    along[:, 0], across[:, 1] = eps * X[:, 0], eps * X[:, 1]
    ratio_plain = plain.elastic_energy(fit(along), p) / plain.elastic_energy(fit(across), p)
    ratio_fiber = fibered.elastic_energy(fit(along), p) / fibered.elastic_energy(fit(across), p)
    assert model.fiber_strength is not None and np.any(model.fiber_strength > 0)
    assert ratio_fiber > 2.5 * ratio_plain
    # The rig turned as a whole ("pose" state: the pose is the rest) costs nothing, fibers and all.
    c, s = np.cos(0.3), np.sin(0.3)
    A = np.tile(np.eye(4)[:3], (model.bones, 1, 1))
    A[:, :, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    turned = rig_parameters(A)
    # Zero to the round-off of the energy's cancelling constant terms (~1e-16 of kappa_f sum mu_c).
    scale = 11.0 * float(model.cluster_mu.sum())
    assert abs(fibered.elastic_energy(np.zeros_like(fit(along)), turned)) <= 1e-12 * scale


def test_without_a_fiber_scale_the_fibers_play_no_part(model):
    """fiber_scale 0 (or the "rest" state): the fiber clusters drop out, the plain energy is all there is."""
    p = rest_parameters(model.bones)
    z = np.random.default_rng(3).normal(size=(4 * model.m, 3)) * 1e-3
    off = Simulator(model, SimulationSettings(fiber_scale=0.0)).elastic_energy(z, p)
    rest = Simulator(model, SimulationSettings(fiber_scale=11.0, rest_state="rest"))
    on = Simulator(model, SimulationSettings(fiber_scale=11.0)).elastic_energy(z, p)
    assert on > off > 0
    assert rest._A_F is None and not rest.system(1.0, 0.0).fiber_scale
    assert HEADS.shape == TAILS.shape
