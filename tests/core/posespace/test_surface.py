"""Contact with training poses (core/posespace/surface.py through core/posespace/simulator.py, issue 29).

The 4 m bar, 1 m thick, swinging through its two training poses (tests/core/posespace/conftest.py), under
gravity, its underside on the ground.  Tolerances: the blended rows equal the blended model's own basis
at the samples to round-off (1e-12 of the largest entry); complementarity as in test_simulator.py (1e-9
of the displacement's norm); penetration against 1 % of the thickness (the issue's bound).
"""

import numpy as np
import pytest

from core.contact.colliders import Ground
from core.contact.surface import ContactSettings, SurfaceContact
from core.dynamics.simulator import SimulationSettings
from core.model.constraint import complementarity_matrix
from core.model.rig import lbs_basis, rig_matrix
from core.posespace.simulator import PoseSpaceSimulator
from core.posespace.surface import PoseContact

WIDTH = 1.0  # the bar's thickness (core.validation.scenes.bar_scene)
GROUND = Ground(height=-WIDTH / 2)  # the rig's underside lies on it all along: the swing is about z


def contact(swing, self_contact=False):
    return SurfaceContact(swing.rest, swing.H, ContactSettings(self_contact=self_contact))


def test_rows_follow_the_blended_basis(swing):
    """Samples' and body pairs' rows are the blended model's basis at those points, at rest and between poses."""
    rest = contact(swing, self_contact=True)
    pc = PoseContact(swing.model, rest)
    for w in (np.eye(swing.model.k)[0], np.array([0.2, 0.5, 0.3]), swing.model.pose_weights(swing.pose(0.3))):
        blended, _ = swing.model.blend(w)
        at = pc.at(w)
        Y = blended.basis()
        assert np.abs(at.Y - Y[rest.samples]).max() <= 1e-12 * np.abs(Y).max()
        assert at.pairs is not None and rest.pairs is not None
        assert np.abs(at.pairs.Y - Y[rest.pairs.vertices]).max() <= 1e-12 * np.abs(Y).max()
    assert rest.Y is pc.contact.Y  # the rest contact is never changed


def roll(swing, with_contact, steps=96):
    """(flesh positions, rig positions) per step of the swing under gravity, ground on or off."""
    settings = SimulationSettings(time_step=swing.H, gravity=(0.0, 0.0, -9.81), damping=0.5)
    sim = PoseSpaceSimulator(swing.model, settings, contact(swing) if with_contact else None)
    state = sim.initial_state(swing.pose(0.0))
    Y_rig = lbs_basis(swing.scene.rig.weights, swing.scene.mesh.X)
    xs, rigs = [], []
    for k in range(1, steps + 1):
        p = swing.pose(k * swing.H)
        state, _ = sim.step(state, p, obstacles=[GROUND] if with_contact else None)
        rig = Y_rig @ rig_matrix(p)
        xs.append(rig + sim.displacement(state))
        rigs.append(rig)
    return xs, rigs


@pytest.fixture(scope="module")
def rolled(swing):
    return roll(swing, True), roll(swing, False)


def test_the_ground_holds_the_pose_space_jiggle(swing, rolled):
    (xs, rigs), (xf, rigs_free) = rolled
    assert all(np.isfinite(x).all() for x in xs)
    sunk = [-WIDTH / 2 - x[:, 2].min() for x in xs]
    assert max(sunk) <= 0.01 * WIDTH
    assert max(-WIDTH / 2 - x[:, 2].min() for x in xf) > 0.05 * WIDTH  # without contact it sags in
    # Bounded: the ground holds the flesh up, it adds no motion beyond the free swing's.
    assert max(np.abs(x - r).max() for x, r in zip(xs, rigs)) <= max(np.abs(x - r).max() for x, r in zip(xf, rigs_free))


def test_complementarity_with_poses_and_contact(swing, rolled):
    """J^T u = 0 every step with the ground on: the contact acts in the complementary blended subspace."""
    (xs, rigs), _ = rolled
    Jc = complementarity_matrix(swing.scene.rig.jacobian(swing.scene.mesh.X), swing.rest.masses, swing.rest.leak)
    norm_J = np.sqrt(Jc.multiply(Jc).sum())
    for x, r in zip(xs, rigs):
        u = x - r
        assert np.linalg.norm(Jc.T @ u.ravel()) <= 1e-9 * norm_J * np.linalg.norm(u)


@pytest.fixture(scope="module")
def fold():
    from core.validation.contact_fold import build_fold

    return build_fold()


def pressed_and_released(fold, model, with_contact):
    """Per step of the fold's snap (48): penetration, the rig's own, the left arm's secondary motion.

    The contact is the drive's (core/pipeline/drives.py): Skin on Skin where a pose is one-sided.
    """
    from core.model.rig import lbs_positions, rig_parameters
    from core.validation.contact_fold import H, folded

    pairs = SurfaceContact(fold.rest, H, ContactSettings(self_contact=True)) if with_contact else None
    sim = PoseSpaceSimulator(model, SimulationSettings(time_step=H), pairs)
    state = sim.initial_state(fold.pose, p_prev=fold.pose)
    depth, rig, motion = [], [], []
    for k in range(1, 49):
        A = folded(k * H)
        x = lbs_positions(fold.scene.mesh.X, fold.scene.rig.weights, A)
        state, _ = sim.step(state, rig_parameters(A))
        u = sim.displacement(state)
        assert np.isfinite(u).all()
        depth.append(((x[fold.left, 0] + u[fold.left, 0]) - (x[fold.facing, 0] + u[fold.facing, 0])).max())
        rig.append((x[fold.left, 0] - x[fold.facing, 0]).max())
        motion.append(np.abs(u[fold.left]).max())
    return np.array(depth), np.array(rig), np.array(motion)


def test_a_one_sided_pose_keeps_the_pressed_skin_out_and_lets_it_go(fold):
    """The fold as a training pose: One-Sided holds the arms apart while pressed (1 % of the 1.0 thickness)
    and lets the skin separate after release (at least half the motion without contact); Stick holds
    the touching skin in the pose's basis, so it barely moves after release (the issue's complaint)."""
    from core.posespace.model import build_pose_space

    poses, contacts = fold.pose[None], [fold.contacts]
    one_sided = build_pose_space(fold.rest, fold.material, poses, contacts=contacts, one_sided=[True], reach=0.5)
    assert one_sided.one_sided_contact and one_sided.radii is None  # no stick basis, so no local support either
    stick = build_pose_space(fold.rest, fold.material, poses, contacts=contacts, reach=0.5)
    assert not stick.one_sided_contact
    depth, rig, motion = pressed_and_released(fold, one_sided, True)
    free_depth, _, free_motion = pressed_and_released(fold, one_sided, False)
    _, _, held = pressed_and_released(fold, stick, False)
    pressed = rig > -0.05
    assert depth[pressed].max() <= 0.01
    assert free_depth.max() > 0.2  # without contact the flesh overshoots into the other arm
    released = slice(17, 30)  # from the first touch to the next: the arm swings away and back
    assert motion[released].max() >= 0.5 * free_motion[released].max()
    assert held[released].max() < 0.5 * free_motion[released].max()
