"""Skin on skin that lets go (core/contact/pairs.py): the folded bar of core/validation/contact_fold.py.

A 4 x 1 bar folded into a U whose arms touch on the plane x = 2; the left arm swings 0.39 away and
back at 3 Hz, touching again every 16 steps.  Penetration is measured as in contact_fold.py (a left
contact vertex past its facing right one, along x); the arm is 1.0 thick, so 1 % is 0.01.  While the
rig holds the arms within 5 % of the thickness of each other ("pressed"), one-sided pairs keep the
penetration below 1 %; after each release the left arm's secondary motion is at least half of what it
is without contact (the skin separates: it is not stuck as with the training poses' stick contact).
"""

import numpy as np
import pytest

from core.contact.pairs import BodyPairs
from core.contact.surface import ContactSettings, SurfaceContact
from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.rig import lbs_positions, rig_parameters
from core.validation.contact_fold import H, build_fold, folded


@pytest.fixture(scope="module")
def fold():
    return build_fold()


def run(fold, contact):
    sim = Simulator(fold.rest, SimulationSettings(time_step=H), contact)
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


def test_pressed_skin_stays_out_and_lets_go(fold):
    free_depth, rig, free_motion = run(fold, None)
    depth, _, motion = run(fold, SurfaceContact(fold.rest, H, ContactSettings(self_contact=True)))
    pressed = rig > -0.05
    assert depth[pressed].max() <= 0.01
    assert free_depth.max() > 0.2  # without contact the flesh overshoots into the other arm
    assert depth.max() <= 0.1 * free_depth.max()  # a whipping tip far from the rig's contact grazes a little
    released = slice(17, 30)  # from the first touch to the next: the arm swings away and back
    assert motion[released].max() >= 0.5 * free_motion[released].max()


def test_pairs_face_each_other_across_parts_and_skip_joints(fold):
    pairs = BodyPairs(fold.rest, stiffness=1.0)
    x = pairs.rig_positions(fold.pose)
    s, t, n = pairs.pairs(x)
    assert len(s) > 0 and (pairs.parts[s] != pairs.parts[t]).all()
    assert np.all(np.linalg.norm(pairs.rest[s] - pairs.rest[t], axis=1) > 2 * pairs.radius)  # not joint neighbours
    assert np.median(np.abs(n[:, 0])) > 0.9  # mostly across the plane x = 2 the arms meet on (corners: oblique)
    straight = pairs.pairs(pairs.rig_positions(rig_parameters(np.tile(np.eye(4)[:3], (5, 1, 1)))))
    assert len(straight[0]) == 0  # the straight bar touches nothing


def test_no_pairs_no_rows(fold):
    pairs = BodyPairs(fold.rest, stiffness=1.0)
    z = np.zeros((3, fold.rest.basis().shape[1]))
    straight = pairs.rig_positions(rig_parameters(np.tile(np.eye(4)[:3], (5, 1, 1))))
    assert pairs.rows(straight, z, z) is None
    rows = pairs.rows(pairs.rig_positions(fold.pose), z, z)
    assert rows is not None and rows.one_sided.all() and (rows.b <= 0).all()
