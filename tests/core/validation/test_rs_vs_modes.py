"""RS against skinning eigenmodes (issue 27): the §9.4 split, the rig-carried RS solver, the leak measure."""

from __future__ import annotations

import numpy as np
import pytest

from core.geometry.embedding import embed_points
from core.model.leak import default_leak_field
from core.rotstrain.drive import RotStrainDrive
from core.validation import rs_vs_modes as rv


def test_a_quarter_turn_split_linearly_collapses_onto_the_axis():
    """Seed 000 §9.4: F = Rz(90°) split as F - I = omega + eps and rebuilt as exp(omega)(I + eps) is diag(0, 0, 1)."""
    Rz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(rv.linearised_rs_gradient(Rz), np.diag([0.0, 0.0, 1.0]), atol=1e-12)
    # A small turn is nearly kept: the split is the RS map linearised at rest.
    a = 0.01
    Rs = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    assert np.abs(rv.linearised_rs_gradient(Rs) - Rs).max() < a**2


def test_the_bent_bars_pose_rebuilt_exactly_with_the_log_and_collapsed_linearised():
    scene = rv.bent_bar(steps=4, cells=2, rise=2 * rv.H)
    rec = rv.rig_pose_reconstruction(scene, -1, (3,))
    assert rec["exact"]["error"] < 1e-10
    assert rec["linearised"]["error"] > 0.2
    assert rec["linearised"]["volume_kept"] < rec["exact"]["volume_kept"] - 0.2
    assert 0.0 < rec["subspace_3"]["error"] < 1.0


def test_rs_carried_by_one_bone_is_the_object_drive():
    """With one bone, p = LBS(X + B x) is the drive's L (X + B x) + t: the same steps, the same motion."""
    scene = rv.spun_object(steps=5, cells=2, rise=2 * rv.H)
    # Four modes: the three slowest (two bendings and a twist) are orthogonal to the spin's loads.
    rs, _ = rv.rs_model(scene, 4)
    u, seconds = rs.run(scene.A)
    assert u.shape == (5, scene.mesh.n, 3) and len(seconds) == 5
    X = scene.mesh.X
    rig = {k - 1: scene.A[k, 0].ravel() for k in range(len(scene.A))}  # frame -1 is the sample before the start
    emb = embed_points(X, scene.mesh.T, X)
    drive = RotStrainDrive(rs.body, rig.__getitem__, emb, None, np.arange(3), rv.H, rv.ITERATIONS, 1.0, rv.TOLERANCE)
    state = drive.initial_state(drive.sample(0), drive.sample(-1))
    for k in range(1, 6):
        state, _ = drive.step(state, drive.sample(k), float(k), 1.0, 0.0)
        world = drive.world(state.x, state.a)
        rigid = X @ scene.A[k + 1, 0, :, :3].T + scene.A[k + 1, 0, :, 3]
        np.testing.assert_allclose(world - rigid, u[k - 1], atol=1e-8 * max(1e-3, float(np.abs(u).max())))
    assert np.abs(u).max() > 1e-6  # it did move: the spin strains the box


@pytest.mark.parametrize("make", [rv.bent_bar, rv.spun_object])
def test_the_leak_is_zero_for_complementary_motion_and_one_for_the_rigs_own(make):
    scene = make(steps=3, cells=2)
    ref, _ = rv.reference_run(scene)
    assert rv.rig_leak(scene, ref).max() < 1e-8
    sim, _ = rv.modes_simulator(scene, 3, 20)
    um, _ = rv.modes_run(scene, sim)
    assert rv.rig_leak(scene, um).max() < 1e-8
    # The rig's own motion (one bone turned a little), weighted by the leak field as Jc is, is all leak.
    d = default_leak_field(scene.mesh)[:, None]
    rigid = d * np.cross([0.0, 0.0, 0.1], scene.mesh.X) * scene.weights[:, -1:]
    assert rv.rig_leak(scene, rigid[None]).max() == pytest.approx(1.0, abs=1e-8)


def test_rs_under_a_bent_rig_leaks_into_the_rigs_space():
    """The §9.4 worry that RS undoes complementarity, measured: its motion is not complementary under a rig."""
    scene = rv.bent_bar(steps=8, cells=2, rise=4 * rv.H)
    rs, _ = rv.rs_model(scene, 3)
    u, _ = rs.run(scene.A)
    assert rv.rig_leak(scene, u).max() > 0.05


def test_a_limb_is_cut_by_its_bones_weights():
    scene = rv.bent_bar(steps=2, cells=2)
    X, T = scene.mesh.X, scene.mesh.T
    W = np.concatenate([scene.weights, np.zeros((len(X), 1))], axis=1)  # a third bone moving nothing here
    limb = rv.limb_scene("limb", X, T, W, np.concatenate([scene.A, scene.A[:, :1]], axis=1), [0, 1], rv.H)
    assert limb.mesh.n == scene.mesh.n and limb.weights.shape == (len(X), 2)
    np.testing.assert_allclose(limb.weights.sum(axis=1), 1.0)
    half = rv.limb_scene("half", X, T, scene.weights, scene.A, [1], rv.H)
    assert 0 < half.mesh.n < scene.mesh.n and np.allclose(half.weights, 1.0)
