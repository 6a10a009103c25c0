"""Preparing a character (core/pipeline/prepare.py): what it holds, its cache, painted masks, and where it
puts the motion (issue 31): appendages, the leak mask's full range, Amount.

The character: a thick body (bone 0, the root) and a thin tail of two bones along +x
(bones 1 and 2), resting on the ground (z = 0 is its lowest point).
"""

import numpy as np
import pytest

from core.model.constraint import lbs_weight_space_constraint
from core.model.leak import default_leak_field
from core.model.rig import rig_parameters
from core.pipeline import (
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    SolverSettings,
    SubspaceSettings,
    prepare_character,
)
from core.validation.scenes import chain_weights, rotation_z
from tests.core.pipeline import characters
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=3000, tet_method="lattice")
PARENTS = np.array([-1, 0, 1])


@pytest.fixture(scope="module")
def tailed():
    V, F = join(
        uv_sphere(20, 0.5, (0.0, 0.0, 0.5)),
        join(uv_sphere(12, 0.14, (0.6, 0.0, 0.5)), uv_sphere(12, 0.12, (0.85, 0.0, 0.5))),
    )
    W = chain_weights(V, np.array([0.0, 0.6, 0.85]))
    return V, F, W


def swish(f):
    """The tail's bones turn about z at the body's centre, then hold from frame 12; (36,)."""
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    R = rotation_z(0.5 * np.sin(min(f, 12) / 3.0))
    for b in (1, 2):
        A[b, :, :3] = R
        A[b, :, 3] = np.array([0.0, 0.0, 0.5]) - R @ np.array([0.0, 0.0, 0.5])
    return rig_parameters(A)


@pytest.fixture(scope="module")
def tailed_prepared(tailed):
    V, F, W = tailed
    return prepare_character(CharacterInput(rest=V, faces=F, bone_weights=W, bone_parents=PARENTS), SUB)


def test_a_thin_chain_swings_through_and_the_body_keeps_the_depth_field(tailed_prepared):
    d0 = default_leak_field(tailed_prepared.mesh)
    w = tailed_prepared.tet_bone_weights
    tail = w[:, 1:].sum(axis=1) > 1 - 1e-9
    body = w[:, 0] > 1 - 1e-9
    assert tail.any() and body.any()
    assert np.abs(tailed_prepared.leak[tail]).max() == 0.0  # rig momentum leaks through the tail's whole depth
    np.testing.assert_allclose(tailed_prepared.leak[body], d0[body])  # the body: skin swings, core follows
    assert d0[tail].max() > 0.1  # before, the tail's interior was held


def test_the_mask_holds_keeps_or_frees_over_its_full_range(tailed, tailed_prepared):
    V, F, W = tailed
    d0 = default_leak_field(tailed_prepared.mesh)
    for value, expected in ((0.0, np.ones_like(d0)), (0.5, d0), (1.0, np.zeros_like(d0))):
        p = prepare_character(CharacterInput(rest=V, faces=F, bone_weights=W, leak=np.full(len(V), value)), SUB)
        np.testing.assert_allclose(p.leak, expected, atol=1e-9)
    off = prepare_character(
        CharacterInput(rest=V, faces=F, bone_weights=W, bone_parents=PARENTS),
        SubspaceSettings(modes=6, clusters=20, target_tets=3000, tet_method="lattice", swing_appendages=False),
    )
    np.testing.assert_allclose(off.leak, d0)


def test_modes_stay_complementary_and_vanish_on_planted_flesh(tailed):
    V, F, W = tailed
    planted = V[:, 2] < 0.01
    p = prepare_character(CharacterInput(rest=V, faces=F, bone_weights=W, bone_parents=PARENTS, planted=planted), SUB)
    m = p.model
    Jw = lbs_weight_space_constraint(m.X, m.rig_weights, m.masses, m.leak)
    scale = np.abs(Jw).max() * np.abs(m.weights).max() * m.n
    assert np.abs(Jw @ m.weights).max() <= 1e-10 * scale
    held = np.unique(p.mesh.T[p.embedding.tet[planted]])
    assert np.abs(m.weights[held]).max() <= 1e-10 * np.abs(m.weights).max()


def test_the_tail_follows_through_and_amount_scales_it(tailed_prepared):
    sim = FrameSimulation(tailed_prepared, SolverSettings(), 0, 30, swish)
    twice = FrameSimulation(tailed_prepared, SolverSettings(amount=2.0), 0, 30, swish)
    u = np.array([sim.offsets(f) for f in range(31)])
    assert np.linalg.norm(u, axis=2).max() > 1e-3  # the tail lags and overshoots its bones
    u2 = np.array([twice.offsets(f) for f in range(31)])
    np.testing.assert_allclose(u2, 2.0 * u, rtol=1e-6, atol=1e-7 * np.abs(u).max())


def test_galilean_invariance_with_appendages_and_planted_flesh(tailed):
    V, F, W = tailed
    p = prepare_character(
        CharacterInput(rest=V, faces=F, bone_weights=W, bone_parents=PARENTS, planted=V[:, 2] < 0.01), SUB
    )
    v = np.array([0.3, -0.1, 0.2])

    def carried(f):
        A = np.tile(np.eye(4)[:3], (3, 1, 1))
        A[:, :, 3] += v * f
        return A.ravel()

    sim = FrameSimulation(p, SolverSettings(), 1, 24, carried)
    assert max(np.abs(sim.offsets(f)).max() for f in range(1, 25)) <= 1e-9 * np.linalg.norm(v) * 24


def test_prepared_character_has_what_the_solver_needs(prepared, character):
    st = prepared.stats
    # Six eigenmodes, and a weight for each of the body's parts that adds a direction (the flesh calibration).
    assert st["tets"] > 1000 and st["modes"] == 6 and st["clusters"] >= 10
    assert prepared.reconstructor.count == len(character.rest)
    assert np.allclose(prepared.tet_bone_weights.sum(axis=1), 1.0)
    assert prepared.leak.min() >= 0 and prepared.leak.max() <= 1


def test_second_preparation_comes_from_the_cache(character, tmp_path):
    first = prepare_character(character, characters.SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
    second = prepare_character(character, characters.SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == ["model", "tets"]
    assert np.array_equal(first.model.weights, second.model.weights)
    assert np.array_equal(first.mesh.T, second.mesh.T)
    assert second.stats["tetrahedralize_s"] < first.stats["tetrahedralize_s"]


def test_painted_masks_change_the_material_and_the_leak(character, prepared):
    k = len(character.rest)
    soft = CharacterInput(
        rest=character.rest,
        faces=character.faces,
        bone_weights=character.bone_weights,
        stiffness=(character.rest[:, 0] < 0.3).astype(float),
        leak=np.zeros(k),
    )
    p = prepare_character(soft, characters.SUB, MaterialSettings(youngs_modulus=5e3))
    assert p.material.mu.min() < 0.5 * prepared.material.mu.min()
    assert np.allclose(p.leak, 1.0)  # painting 0 everywhere holds all flesh to the rig
