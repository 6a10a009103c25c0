"""The obstacles' penalty on the physics skin (core/physskin/contact.py, issue 30 item 4): its gradient and
Hessian against finite differences, which vertices it acts on, and nothing pressed, nothing pushed."""

import numpy as np
import pytest

from core.contact.colliders import Ground
from core.physskin.contact import SkinContact
from tests.core.contact.scenes import box
from tests.core.physskin.test_rig import soft_end
from tests.core.physskin.test_solve import cylinder


@pytest.fixture(scope="module")
def skin():
    return soft_end(cylinder(4), pin_rigid=False)[0].skin


def pressed(skin):
    """The limb with a box pressed 0.2 m into its free end (+y side) and the ground 0.1 m into its bottom."""
    contact = SkinContact.build(skin, [box([3.2, 0.3, -1.0], [5.0, 2.0, 1.0]), Ground(-0.4)])
    return contact, contact.planes(skin.mesh.X)


def test_it_acts_on_the_free_surface_alone(skin):
    contact, planes = pressed(skin)
    assert len(planes.index) > 0
    assert not np.isin(contact.vertices, skin.pins).any()
    assert np.isin(contact.vertices, skin.mesh.boundary_vertices()).all()
    np.testing.assert_array_equal(skin.free_vertices[contact.slots], contact.vertices)
    assert np.all(contact.stiffness > 0.0)


def test_gradient_and_hessian_match_finite_differences(skin):
    contact, planes = pressed(skin)
    x = skin.mesh.X + 1e-3 * np.random.default_rng(3).standard_normal(skin.mesh.X.shape)
    g = contact.gradient(planes, x)
    rng = np.random.default_rng(4)
    v = rng.standard_normal(x.shape)
    v[skin.pins] = 0.0
    h = 1e-6
    fd = (contact.energy(planes, x + h * v) - contact.energy(planes, x - h * v)) / (2 * h)
    assert abs(fd - np.vdot(g, v)) <= 1e-6 * max(1.0, abs(fd))
    product = contact.product(planes, x)
    Hv = product(v[skin.free_vertices])
    dg = (contact.gradient(planes, x + h * v) - contact.gradient(planes, x - h * v))[skin.free_vertices] / (2 * h)
    np.testing.assert_allclose(Hv, dg, atol=1e-5 * np.abs(dg).max())


def test_nothing_pressed_means_no_energy_no_push(skin):
    contact = SkinContact.build(skin, [Ground(-5.0)])
    planes = contact.planes(skin.mesh.X)
    assert contact.energy(planes, skin.mesh.X) == 0.0
    assert not contact.gradient(planes, skin.mesh.X).any()
    assert contact.product(planes, skin.mesh.X) is None
