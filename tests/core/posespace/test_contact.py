"""Skin-on-skin contact and contact-aware modes (core/posespace/contact.py).

The scene: a 4 x 1 bar of 5 bones folded into a U (each arm turned 90° at its joint), so the
arms' inner faces press together along x = 2.  Exact set and zero checks need no tolerance
beyond round-off; the penetration bound is stated where it is asserted.
"""

import numpy as np
import pytest

from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.constraint import complementarity_matrix, stick_rows
from core.posespace.contact import contact_vertices, surface_edge_length
from core.posespace.model import build_pose_space
from core.posespace.simulator import PoseSpaceSimulator
from core.validation.contact_fold import H, build_fold, penetration


@pytest.fixture(scope="module")
def u_scene():
    return build_fold()


def test_the_fold_presses_the_inner_faces_together_and_rest_has_no_contact(u_scene):
    """Every vertex of both arms' inner faces (rest y = 0.5, x <= 1 or x >= 3, posed onto the plane
    x = 2) is found, and nothing farther than the contact distance from that plane."""
    X, T = u_scene.scene.mesh.X, u_scene.scene.mesh.T
    C = u_scene.contacts
    d = surface_edge_length(X, T)
    inner = np.flatnonzero((X[:, 1] == 0.5) & ((X[:, 0] <= 1.0) | (X[:, 0] >= 3.0)))
    assert np.allclose(u_scene.posed[inner, 0], 2.0, atol=1e-12)  # the scene is what it says
    assert np.isin(inner, C).all()
    assert (np.abs(u_scene.posed[C, 0] - 2.0) <= d).all()
    assert len(contact_vertices(X, X, T, d)) == 0  # the straight bar touches nothing
    # Scale-free: the character imported at 100x (distance scaled with it) finds the same set.
    assert np.array_equal(contact_vertices(100 * X, 100 * u_scene.posed, T, 100 * d), C)


def test_contact_aware_modes_vanish_at_the_contact_and_stay_complementary(u_scene):
    """Weights zero at every contact vertex (1e-12: a projection, exact to round-off) and the
    rig-complementarity constraint still holds (1e-9 relative)."""
    m = build_pose_space(u_scene.rest, u_scene.material, u_scene.pose[None], contacts=[u_scene.contacts])
    W = m.alignment.bases[1]
    assert np.abs(W[u_scene.contacts]).max() < 1e-12 * np.abs(W).max()
    s = u_scene.scene
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), u_scene.rest.masses, u_scene.rest.leak)
    blended, _ = m.at(u_scene.pose)
    Y = blended.basis()
    assert np.abs(Jc.T @ np.kron(Y, np.eye(3))).max() < 1e-9 * abs(Jc).max() * np.abs(Y).max()
    R = stick_rows(u_scene.contacts, u_scene.rest.masses)
    assert R.shape == (len(u_scene.contacts), s.mesh.n) and R.nnz == len(u_scene.contacts)


def test_secondary_motion_does_not_push_skin_through_skin_in_contact(u_scene):
    """The left arm swings away and snaps back onto the right one (a fast rig motion that never
    penetrates by itself; core/validation/contact_fold.py).  Without contact-aware modes the flesh
    overshoots into the other arm (measured 0.24 of the bar's width); with them it stays at the
    rig's own (0), to 1e-9 of the width."""
    settings = SimulationSettings(time_step=H)
    plain = Simulator(u_scene.rest, settings)
    aware = PoseSpaceSimulator(
        build_pose_space(u_scene.rest, u_scene.material, u_scene.pose[None], contacts=[u_scene.contacts]), settings
    )
    depth_plain, rig = penetration(u_scene, plain)
    depth_aware, rig_aware = penetration(u_scene, aware)
    assert np.array_equal(rig, rig_aware) and rig.max() <= 1e-12  # the rig itself never penetrates
    assert depth_plain.max() > 0.05  # without: a visible overshoot into the other arm
    assert (depth_aware <= rig + 1e-9).all()
