"""A skinned character's physics skin (core/physskin/rig.py): invariants of positions and corrections."""

import numpy as np
import pytest

from core.geometry.embedding import embed_points
from core.geometry.tetmesh import TetMesh, signed_volumes
from core.model.materials import Material
from core.model.rig import rig_parameters
from core.physskin.rig import PhysicsRig, render_correction
from core.physskin.solve import _tail
from core.validation.scenes import chain_weights, random_rotation
from tests.core.physskin.test_solve import HEADS, TAILS, cylinder, rx

# Tight iterations where an invariant is exact in exact arithmetic: what is left is the
# solve's round-off, far below the 1e-9 of the size the tests allow.
TIGHT = 1e-13


def build(mesh, poisson=0.45, heads=HEADS, tails=TAILS, tolerance=TIGHT):
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    mat = Material.uniform(mesh.t, 1e4, poisson, 1000.0)
    return PhysicsRig.build(mesh, W, heads, tails, mat.mu, mat.lam, 0.3, tolerance)


def twist(angle=np.pi, frame=None):
    """Bone 1 turned by ``angle`` about the cylinder's axis (x); optionally every bone moved by ``frame``."""
    A = np.tile(np.eye(4), (2, 1, 1))
    A[1, :3, :3] = rx(angle)
    if frame is not None:
        A = frame @ A
    return rig_parameters(A[:, :3, :])


@pytest.fixture(scope="module")
def mesh():
    return cylinder(4)


def test_rest_pose_gives_no_correction(mesh):
    # The physics positions are exactly X (a zero right-hand side); LBS sums weights that add
    # to one up to round-off, so the correction is at round-off of the size (4 m): 1e-12.
    phys = build(mesh, tolerance=1e-6)
    p = twist(0.0)
    assert np.array_equal(phys.positions(p), mesh.X)
    assert np.abs(phys.correction(p)).max() <= 1e-12


@pytest.mark.parametrize("poisson", [0.0, 0.45])
def test_a_rigid_motion_of_the_whole_rig_gives_no_correction(mesh, poisson):
    """Same rotation and translation on every bone: physics skin = LBS = the rigid motion (1e-9 of 4 m)."""
    Q = np.eye(4)
    Q[:3, :3] = random_rotation(np.random.default_rng(1))
    Q[:3, 3] = [0.5, -2.0, 1.0]
    p = rig_parameters(np.tile(Q[:3], (2, 1, 1)))
    assert np.abs(build(mesh, poisson).correction(p)).max() <= 1e-9 * 4.0


def test_rotating_the_whole_problem_rotates_the_answer(mesh):
    """Rest shape, bones and rig rotated by Q and moved by t: positions are Q x + t (1e-9 of the size).

    The pins, the weights and the blended rotations are all defined by distances and
    rotations, so the rule commutes with rigid changes of frame.
    """
    Q = np.eye(4)
    Q[:3, :3] = random_rotation(np.random.default_rng(7))
    Q[:3, 3] = [3.0, 1.0, -2.0]
    moved = TetMesh.from_arrays(mesh.X @ Q[:3, :3].T + Q[:3, 3], mesh.T)
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    mat = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
    phys = PhysicsRig.build(mesh, W, HEADS, TAILS, mat.mu, mat.lam, 0.3, TIGHT)
    turned = PhysicsRig.build(
        moved, W, HEADS @ Q[:3, :3].T + Q[:3, 3], TAILS @ Q[:3, :3].T + Q[:3, 3], mat.mu, mat.lam, 0.3, TIGHT
    )
    assert np.array_equal(turned.skin.pins, phys.skin.pins)
    A = twist(2.0).reshape(2, 3, 4)
    A4 = np.concatenate([A, np.tile([[[0.0, 0.0, 0.0, 1.0]]], (2, 1, 1))], axis=1)
    conj = (Q @ A4 @ np.linalg.inv(Q))[:, :3]  # the same motion seen in the moved frame
    x, y = phys.positions(A.ravel()), turned.positions(conj.ravel())
    np.testing.assert_allclose(y, x @ Q[:3, :3].T + Q[:3, 3], atol=1e-9 * 4.0)


def test_a_twisted_joint_keeps_its_volume_where_lbs_loses_a_third():
    """180° twist: LBS -33 % (hat weights), physics skin within 2 % (the issue's bound) with no inverted tet.

    At 2,673 vertices (the seed's smallest size), measured -1.45 % with the shipped path (the ARAP
    answer and one volume step; -1.8 % with the seed's linear solve before the step; the step
    minimises (det F - 1)^2 tet by tet, not the total).  This mesh caught pins reaching into the
    joint (-2.7 %, 26 inverted tets).  At 425 vertices (one coarse ring of tets across the joint)
    it is -2.05 %.
    """
    mesh = cylinder(8)
    phys = build(mesh, tolerance=1e-6)
    p = twist(np.pi)
    V0 = mesh.volumes.sum()
    lbs, skin = signed_volumes(phys.lbs(p), mesh.T), signed_volumes(phys.positions(p), mesh.T)
    assert lbs.sum() / V0 - 1 <= -0.30
    assert abs(skin.sum() / V0 - 1) <= 0.02 and (skin > 0).all()


def test_render_vertices_get_the_interpolated_correction(mesh):
    """At tet vertices the embedding is exact (1e-12); skipped vertices get none."""
    phys = build(mesh, tolerance=1e-6)
    c = phys.correction(twist(1.0))
    pts = mesh.X[::7]
    emb = embed_points(mesh.X, mesh.T, pts)
    keep = np.ones(len(pts), bool)
    keep[0] = False
    out = render_correction(emb, mesh.T, c, keep)
    np.testing.assert_allclose(out[1:], c[::7][1:], atol=1e-12)
    assert np.array_equal(out[0], np.zeros(3))


def soft_end(mesh, pin_rigid):
    """The limb with its end (x >= 3, bound to bone 1 alone) soft unless ``pin_rigid``; nu = 0.45."""
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    mat = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
    return PhysicsRig.build(mesh, W, HEADS, TAILS, mat.mu, mat.lam, 0.3, pin_rigid=pin_rigid), mat


def test_gravity_sags_a_soft_one_bone_region_and_leaves_the_pins_exact(mesh):
    """Pin Rigidly Bound off: the end bound to bone 1 alone sags under gravity (E = 1e4 Pa, 1000 kg/m^3:
    millimetres to centimetres), pinned vertices stay exactly on their bones, and gravity off gives
    the same bits as a rig that never had it."""
    from core.physskin.rig import GRAVITY

    phys, mat = soft_end(mesh, pin_rigid=False)
    p = twist(0.0)
    plain = phys.positions(p)
    phys.set_gravity(GRAVITY, mat.density)
    x = phys.positions(p)
    pins = phys.skin.pins
    assert np.array_equal(x[pins], mesh.X[pins])
    end = np.setdiff1d(np.flatnonzero(mesh.X[:, 0] >= 3.0), pins)
    sag = (x - mesh.X)[end, 2]
    assert len(end) > 0 and sag.mean() < -1e-3 and (sag < 0.0).mean() > 0.9
    bent_pose = twist(1.0)
    y = phys.positions(bent_pose)
    np.testing.assert_array_equal(y[pins], phys.skin.pin_targets(bent_pose.reshape(-1, 3, 4)))
    phys.set_gravity(None, mat.density)
    assert np.array_equal(phys.positions(p), plain)


def test_a_push_moves_a_soft_one_bone_region_and_a_rigidly_pinned_one_not_at_all(mesh):
    """A push (+y, 2 N per vertex) on the end bound to bone 1 alone: with Pin Rigidly Bound off the end
    moves along it; on (the default), every vertex there is a pin and nothing moves."""
    p = twist(0.0)
    push = np.zeros((mesh.n, 3))
    push[mesh.X[:, 0] >= 3.0, 1] = 2.0
    soft, _ = soft_end(mesh, pin_rigid=False)
    soft.force = push
    moved = (soft.positions(p) - mesh.X)[mesh.X[:, 0] >= 3.0]
    assert moved[:, 1].mean() > 1e-3 and np.abs(moved[:, 1]).max() > 10 * np.abs(moved[:, [0, 2]]).mean()
    stiff, _ = soft_end(mesh, pin_rigid=True)
    stiff.force = push
    np.testing.assert_array_equal(stiff.positions(p)[mesh.X[:, 0] >= 3.0], mesh.X[mesh.X[:, 0] >= 3.0])


@pytest.fixture(scope="module")
def limb():
    from testkit.limb import cylinder_mesh

    return cylinder_mesh(32, 8)  # 2,673 vertices, the bench's smallest limb


def from_bones(mesh, weights=None):
    from testkit import limb as limb_scene

    mat = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
    W = np.zeros((mesh.n, 2)) if weights is None else weights
    return PhysicsRig.from_bones(mesh, W, limb_scene.HEADS, limb_scene.TAILS, mat.mu, mat.lam)


@pytest.mark.parametrize("bend, within", [(0.0, 0.03), (90.0, 0.04)])
def test_from_bones_a_twisted_limb_without_weights_keeps_its_volume(limb, bend, within):
    """No weights at all: the seed's clusters (blended at the joint) and soft pins along the bones.  A 165°
    twist keeps the volume within 3 % (measured -1.5 %) with no inverted tet; with a 90° bend too,
    within 4 % (-3.4 %; the weighted skin: -3.2 %), none inverted.  The pins follow their bones to
    1e-4 of the limb's length."""
    from testkit.limb import LENGTH, limb_pose

    phys = from_bones(limb)
    assert phys.skin.soft and len(phys.skin.pins) < 0.05 * limb.n
    A = limb_pose(bend, 165.0)
    x = phys.positions(A.ravel())
    v0, v = signed_volumes(limb.X, limb.T), signed_volumes(x, limb.T)
    assert abs(v.sum() / v0.sum() - 1.0) < within and (v > 0.0).all()
    assert np.abs(x[phys.skin.pins] - phys.skin.pin_targets(A)).max() < 1e-4 * LENGTH


def test_from_bones_rest_is_exact_and_a_rigid_motion_is_rigid(limb):
    """Soft pins at their targets and every rotation the identity: x = X to the bit; one rigid motion
    on both bones moves the limb rigidly (1e-9 of its length), weights or none."""
    phys = from_bones(limb)
    assert np.array_equal(phys.positions(twist(0.0)), limb.X)
    Q = np.eye(4)
    Q[:3, :3] = random_rotation(np.random.default_rng(3))
    Q[:3, 3] = [1.0, 2.0, -0.5]
    p = rig_parameters(np.tile(Q[:3], (2, 1, 1)))
    np.testing.assert_allclose(phys.positions(p), limb.X @ Q[:3, :3].T + Q[:3, 3], atol=1e-9 * 4.0)


def test_from_bones_corrects_a_mesh_the_armature_cannot_move(limb):
    """Unweighted vertices stay at rest under the Armature modifier: the correction is the whole physics
    displacement there; with weights, the correction is to their linear blend skinning."""
    p = twist(1.0)
    bare = from_bones(limb)
    x = bare.positions(p)
    np.testing.assert_array_equal(bare.correction(p, x), x - limb.X)
    W = chain_weights(limb.X, np.array([1.0, 3.0]))
    weighted = from_bones(limb, W)
    np.testing.assert_array_equal(weighted.positions(p), x)  # the weights choose nothing here
    np.testing.assert_allclose(weighted.correction(p, x), x - weighted.lbs(p))


def test_the_volume_solve_says_why_it_stopped(mesh):
    """At rest nothing is left to do (converged, no step); a twisted joint converges within the cap (its
    last step moved the flesh by less than 1e-3 of the size); the same with one step allowed hits the cap."""
    phys = build(mesh, tolerance=1e-6)
    phys.positions(twist(0.0))
    assert (phys.skin.last_steps, phys.skin.last_stop) == (0, "converged")
    phys.positions(twist(2.5))
    assert phys.skin.last_stop == "converged" and 1 <= phys.skin.last_steps <= phys.volume_steps
    phys.volume_steps = 1
    phys.positions(twist(2.5))
    assert (phys.skin.last_steps, phys.skin.last_stop) == (1, "cap")


def bent_down(angle):
    """Bone 1 turned by ``angle`` about y through the joint (2, 0, 0): its end goes down (-z)."""
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    c, s = np.cos(angle), np.sin(angle)
    A[1, :, :3] = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
    A[1, :, 3] = HEADS[1] - A[1, :, :3] @ HEADS[1]
    return rig_parameters(A)


def inside(collider, x, vertices):
    """How deep (m) the deepest of ``vertices`` of x (n, 3) lies inside the collider (0 if none is)."""
    planes = collider.planes(x[vertices], 0.0)
    return float(np.maximum(planes.depth(x[vertices]), 0.0).max(initial=0.0))


def test_a_box_moving_into_a_soft_one_bone_region_pushes_it_out(mesh):
    """Pin Rigidly Bound off: a box moves into the limb's end (bound to bone 1 alone) from +y, up to 0.3 m
    of its 1 m thickness.  The skin is pushed out (no free vertex more than 1 % of the thickness
    inside), the pins stay exactly on their bones, no tet inverts, and the pressed side gives way."""
    from core.contact.colliders import MeshCollider
    from tests.core.contact.scenes import box

    phys, _ = soft_end(mesh, pin_rigid=False)
    p = twist(0.0)
    plain = phys.positions(p)
    free = phys.skin.free_vertices
    for depth in (0.05, 0.15, 0.3):
        collider = box([3.2, 0.5 - depth, -1.0], [5.0, 2.0, 1.0])
        x = phys.positions(p, [collider])
        assert isinstance(collider, MeshCollider) and inside(collider, plain, free) >= 0.9 * depth
        assert inside(collider, x, free) <= 0.01 * 1.0
        assert np.array_equal(x[phys.skin.pins], plain[phys.skin.pins])
        assert (signed_volumes(x, mesh.T) > 0.0).all()
        assert -(x - plain)[:, 1].min() >= 0.9 * depth  # the pressed side gives way by the box's depth


def test_the_ground_under_a_bent_limb_holds_its_free_surface_up(mesh):
    """The end bent 0.5 rad down through a ground 1.2 m below the axis (the flesh would reach 0.2 m under
    it): free vertices stay above it within 1 % of the thickness, the pins (above it) follow their
    bones exactly, no tet inverts."""
    from core.contact.colliders import Ground

    phys, _ = soft_end(mesh, pin_rigid=False)
    p = bent_down(0.5)
    plain = phys.positions(p)
    ground = Ground(-1.2)
    assert plain[:, 2].min() < -1.3 and plain[phys.skin.pins, 2].min() > -1.2
    x = phys.positions(p, [ground])
    assert x[phys.skin.free_vertices, 2].min() >= -1.2 - 0.01
    np.testing.assert_array_equal(x[phys.skin.pins], phys.skin.pin_targets(p.reshape(-1, 3, 4)))
    assert (signed_volumes(x, mesh.T) > 0.0).all()


def test_contact_off_gives_the_same_bits(mesh):
    """No obstacles (None or an empty list) is the solve without contact, to the bit."""
    phys, _ = soft_end(mesh, pin_rigid=False)
    p = bent_down(0.5)
    x = phys.positions(p)
    assert np.array_equal(phys.positions(p, None), x) and np.array_equal(phys.positions(p, []), x)


def test_the_shipped_volume_solve_converges_toward_a_tight_solve(mesh):
    """Issue 30, item 6: the shipped answer (steps until one moves the flesh by less than 1e-3 of the
    size, or the steps' ratio predicts a quarter of that still to go) against the same solve run to
    1e-8 of the size, at a 90° bend with a 90° twist: within 1e-3 of the size (RMS), and tightening
    the tolerance to 1e-5 brings it at least 10 times closer (convergence, not a cap: no solve here
    stops otherwise than converged)."""
    phys = build(mesh, tolerance=1e-6)
    A = np.tile(np.eye(4), (2, 1, 1))
    A[1, :3, :3] = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]) @ rx(np.pi / 2)
    A[1, :3, 3] = HEADS[1] - A[1, :3, :3] @ HEADS[1]
    p = rig_parameters(A[:, :3, :])
    size = 4.0  # the cylinder's length: twice the largest distance from its centroid

    def solve(volume_tolerance, steps):
        tight = PhysicsRig(**{**vars(phys), "volume_tolerance": volume_tolerance, "volume_steps": steps})
        x = tight.positions(p)
        assert tight.skin.last_stop == "converged"
        return x

    tight = solve(1e-8, 400)
    shipped = phys.positions(p)
    assert phys.skin.last_stop == "converged"
    finer = solve(1e-5, 400)

    def rms(x):
        return float(np.sqrt(np.mean(np.sum((x - tight) ** 2, axis=1)))) / size

    print(f"RMS distance from the 1e-8 solve: shipped {rms(shipped):.2e}, 1e-5 {rms(finer):.2e}")
    assert 0.0 < rms(shipped) <= 1e-3
    assert rms(finer) <= 0.1 * rms(shipped)


def test_the_tail_is_the_geometric_remainder_and_needs_two_shrinking_steps():
    """_tail(taken, previous) = taken rho / (1 - rho), rho = taken / previous: exact for a geometric
    sequence (1, 1/2, 1/4, ... leaves 1/4 after the step of 1/4 that followed 1/2); infinite after one step
    or when a step grew (no contraction to predict from)."""
    assert _tail(0.25, 0.5) == 0.25
    assert _tail(0.1, None) == float("inf") and _tail(0.5, 0.25) == float("inf")
