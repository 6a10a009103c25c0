"""From a skinned surface to per-frame secondary motion (core/pipeline.py)."""

import numpy as np
import pytest

from core.errors import SimulationError
from core.pipeline import (
    CharacterInput,
    FrameSimulation,
    MaterialSettings,
    SolverSettings,
    SubspaceSettings,
    prepare_character,
)
from core.rig import rig_parameters
from core.scenes import chain_weights
from tests.core.surfaces import join, uv_sphere

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


@pytest.fixture(scope="module")
def character():
    V, F = join(uv_sphere(20, 0.5, (0, 0, 0)), uv_sphere(20, 0.4, (0.7, 0, 0)))
    W = chain_weights(V, np.array([-0.5, 0.5, 1.1]))
    return CharacterInput(rest=V, faces=F, bone_weights=W)


def swing(t):
    """Three bones: the last two swing about z; rig parameters (36,)."""
    A = np.tile(np.eye(4)[:3], (3, 1, 1))
    a = 0.6 * np.sin(t / 4.0)
    c, s = np.cos(a), np.sin(a)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    for b in (1, 2):
        A[b, :, :3] = R
    return rig_parameters(A)


@pytest.fixture(scope="module")
def prepared(character, tmp_path_factory):
    return prepare_character(
        character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path_factory.mktemp("c")
    )


def test_prepared_character_has_what_the_solver_needs(prepared, character):
    st = prepared.stats
    assert st["tets"] > 1000 and st["modes"] == 6 and st["clusters"] >= 10
    assert prepared.reconstructor.count == len(character.rest)
    assert np.allclose(prepared.tet_bone_weights.sum(axis=1), 1.0)
    assert prepared.leak.min() >= 0 and prepared.leak.max() <= 1


def test_any_frame_order_gives_the_same_motion(prepared):
    solver = SolverSettings(fps=24, substeps=2)
    a = FrameSimulation(prepared, solver, 1, 30, swing)
    seq = {f: a.offsets(f) for f in range(1, 31)}
    b = FrameSimulation(prepared, solver, 1, 30, swing)
    for f in (25, 3, 30, 1, 17, 18, 9):
        assert np.array_equal(b.offsets(f), seq[f])
    assert np.abs(seq[30]).max() > 1e-4
    assert not b.offsets(0).any() and not b.offsets(31).any()
    b.invalidate_after(10)
    assert max(b.cached_frames) == 10 and np.array_equal(b.offsets(20), seq[20])


def test_second_preparation_comes_from_the_cache(character, tmp_path):
    first = prepare_character(character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
    second = prepare_character(character, SUB, MaterialSettings(youngs_modulus=5e3), cache_dir=tmp_path)
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
    p = prepare_character(soft, SUB, MaterialSettings(youngs_modulus=5e3))
    assert p.material.mu.min() < 0.5 * prepared.material.mu.min()
    assert np.allclose(p.leak, 1.0)  # painting 0 everywhere holds all flesh to the rig


def test_empty_range_is_refused(prepared):
    with pytest.raises(SimulationError, match="empty frame range"):
        FrameSimulation(prepared, SolverSettings(), 10, 5, swing)
