"""The pose-space reduced model (core/posespace/model.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.model.rig import rest_parameters
from core.posespace.model import build_pose_space
from tests.core.posespace.conftest import own_model

PRODUCTS = ("A_L", "A_M", "C_W", "A_LR", "A_MR")


def assert_products_equal(a, b, rtol):
    for name in PRODUCTS:
        x, y = getattr(a, name), getattr(b, name)
        np.testing.assert_allclose(x, y, atol=rtol * np.abs(y).max(), err_msg=name)


def test_the_rest_pose_is_added_as_pose_zero(swing):
    m = swing.model
    assert m.k == 3 and np.array_equal(m.poses[0], rest_parameters(3))
    np.testing.assert_array_equal(m.alignment.bases[0], swing.rest.weights)  # the root is never turned


def test_at_each_training_pose_the_blend_is_that_poses_own_model(swing):
    """Pose weights e_i at training pose i (1e-10: the RBF solve), and the blended products equal
    the products assembled directly from pose i's aligned basis (1e-10 relative: Υ = 1 up to
    round-off for an M-orthonormal basis, and the same sums in another order)."""
    m = swing.model
    for i, p in enumerate(m.poses):
        np.testing.assert_allclose(m.pose_weights(p), np.eye(m.k)[i], atol=1e-10)
        blended, gravity = m.at(p)
        own = own_model(swing, i)
        assert_products_equal(blended, own, 1e-10)
        np.testing.assert_allclose(blended.weights, m.alignment.bases[i], atol=1e-10)
        Y = own.basis()
        np.testing.assert_allclose(gravity, Y.T @ own.masses, rtol=1e-10, atol=1e-10 * np.abs(Y.T @ own.masses).max())


def test_blended_at_rest_is_the_rest_model(swing):
    """1e-12 relative: Υ differs from 1 by the rest modes' orthonormality round-off only."""
    blended, _ = swing.model.at(rest_parameters(3))
    assert_products_equal(blended, swing.rest, 1e-12)


def test_progress_reports_each_pose_and_can_cancel(swing):
    seen = []
    build_pose_space(
        swing.rest, swing.material, swing.training[:1], progress=lambda i, k: seen.append((i, k)), hessian="pose"
    )
    assert seen == [(1, 1)]

    class Cancelled(Exception):
        pass

    def cancel(i, k):
        raise Cancelled

    with pytest.raises(Cancelled):
        build_pose_space(swing.rest, swing.material, swing.training, progress=cancel, hessian="pose")


def test_a_pose_that_folds_the_mesh_is_refused_with_its_reason_for_its_own_hessian(swing):
    """The posed Hessian of a collapsed shape does not exist: refused with the reason.  The rest
    Hessian (the default) needs no posed shape, so the same pose builds."""
    p = swing.pose(0.25, amplitude=2 * 0.95 * np.pi)  # 171° per joint: LBS folds the joints through themselves
    with pytest.raises(MeshError, match="inverted"):
        build_pose_space(swing.rest, swing.material, p[None], hessian="pose")
    assert build_pose_space(swing.rest, swing.material, p[None]).k == 2


def test_without_contact_the_rest_hessian_reuses_the_rest_modes(swing):
    m = build_pose_space(swing.rest, swing.material, swing.training)
    for W in m.alignment.bases:
        np.testing.assert_allclose(W, swing.rest.weights, atol=1e-12)


def test_blending_without_the_weights_gives_the_same_products(swing):
    """The solver's per-step blend skips the mesh pass; its products are the same arrays (exact)."""
    w = swing.model.pose_weights(swing.pose(0.1))
    full, g_full = swing.model.blend(w)
    lean, g_lean = swing.model.blend(w, weights=False)
    for name in PRODUCTS:
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
    np.testing.assert_array_equal(g_lean, g_full)
    assert lean.weights is swing.rest.weights


def test_local_support_gives_a_contact_basis_no_weight_half_way_to_the_rest(swing):
    """Issue 29: the bar's last bone bent 90 degrees, some skin held there (a contact pose).  At 45
    degrees the global RBF gives the contact basis half the blend (measured: 0.498);
    with reach 0.5 it gives 0 (the blend there is the rest model's), and at the pose itself it is 1."""
    from tests.core.posespace.conftest import bend

    pose = bend(swing.scene, 90.0)
    held = [np.arange(6)]
    glob = build_pose_space(swing.rest, swing.material, pose[None], contacts=held)
    local = build_pose_space(swing.rest, swing.material, pose[None], contacts=held, reach=0.5)
    assert glob.radii is None and np.isinf(local.radii[0]) and np.isfinite(local.radii[1])
    half = bend(swing.scene, 45.0)
    assert abs(glob.pose_weights(half)[1] - 0.498) < 1e-3
    np.testing.assert_allclose(local.pose_weights(half), [1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(local.pose_weights(pose), [0.0, 1.0], atol=1e-9)
    free = build_pose_space(swing.rest, swing.material, pose[None], reach=0.5)  # no contact: global
    assert free.radii is None
