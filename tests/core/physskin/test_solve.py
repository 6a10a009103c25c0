import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from core.geometry.primitives import bar_tet_mesh
from core.geometry.tetmesh import TetMesh, signed_volumes
from core.linalg.polar import cofactors
from core.model.materials import Material
from core.model.rig import lbs_positions
from core.physskin.assignment import assign_tets, pin_vertices
from core.physskin.rig import PhysicsRig
from core.physskin.rotations import blended_rotation_rows, blended_rotations, tet_rotations
from core.physskin.solve import PhysicsSkin, hessian, rotated_divergence
from core.validation.scenes import chain_weights, random_rotation
from testkit import limb

HEADS = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
TAILS = np.array([[2.0, 0.0, 0.0], [4.0, 0.0, 0.0]])


def cylinder(cells_per_unit=4):
    """A 4 x 1 bar whose square cross-section is mapped onto the disk of radius 0.5 (elliptical grid map)."""
    X, T = bar_tet_mesh(4.0, 1.0, cells_per_unit)
    u, v = 2.0 * X[:, 1], 2.0 * X[:, 2]
    X = X.copy()
    X[:, 1], X[:, 2] = 0.5 * u * np.sqrt(1 - v * v / 2), 0.5 * v * np.sqrt(1 - u * u / 2)
    return TetMesh.from_arrays(X, T)


def rig(mesh, poisson=0.45, radius=0.1):
    mat = Material.uniform(mesh.t, 1e4, poisson, 1000.0)
    pins, bones = pin_vertices(mesh.X, HEADS, TAILS, radius=radius)
    return PhysicsSkin.build(mesh, mat.mu, mat.lam, pins, bones)


def rx(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def bent(angle=0.8):
    """Bone 1 turned by ``angle`` about z through the joint (2, 0, 0)."""
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    c, s = np.cos(angle), np.sin(angle)
    A[1, :, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    A[1, :, 3] = HEADS[1] - A[1, :, :3] @ HEADS[1]
    return A


def test_rest_pose_is_reproduced_exactly():
    # 1e-12: at rest every R_e is exactly I and every pin target exactly X_p, so the
    # right-hand side is exactly zero and the displacement solve returns exact zeros.
    mesh = cylinder()
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    for poisson in (0.0, 0.45):  # prefactored ARAP and the per-frame co-rotational path
        skin = rig(mesh, poisson)
        assert skin.prefactored == (poisson == 0.0)
        for R in (tet_rotations(A, assign_tets(mesh.X, mesh.T, HEADS, TAILS)), blended_rotations(A, W[mesh.T].mean(1))):
            assert np.abs(skin.positions(A, R) - mesh.X).max() <= 1e-12


def test_same_rigid_motion_on_every_bone_moves_the_mesh_rigidly():
    # 1e-10 (mesh size 4 m): x = R X + t zeroes the gradient exactly in exact arithmetic,
    # so what is left is the solve's round-off, cond(A) * eps * |u| ~ 1e-12 here.
    mesh = cylinder()
    Q = random_rotation(np.random.default_rng(3))
    t = np.array([0.3, -1.2, 2.0])
    A = np.tile(np.hstack([Q, t[:, None]]), (2, 1, 1))
    tb = assign_tets(mesh.X, mesh.T, HEADS, TAILS)
    R = tet_rotations(A, tb)
    for poisson in (0.0, 0.45):
        skin = rig(mesh, poisson)
        np.testing.assert_allclose(skin.direct_positions(A, R), mesh.X @ Q.T + t, atol=1e-10)
        np.testing.assert_allclose(skin.positions(A, R, tolerance=1e-13), mesh.X @ Q.T + t, atol=1e-10)


def test_condensed_solve_equals_full_kkt_solve():
    # 1e-8 m: two different direct factorisations of the same SPD system; both are
    # backward stable, so they agree to cond * eps times the displacement (~0.5 m).
    # The iterative path, run to a relative residual of 1e-13, lands within the same bound.
    mesh = cylinder()
    A = bent()
    force = np.random.default_rng(4).normal(0.0, 10.0, mesh.X.shape)
    R = tet_rotations(A, assign_tets(mesh.X, mesh.T, HEADS, TAILS))
    for poisson in (0.0, 0.45):
        skin = rig(mesh, poisson)
        kkt = skin.kkt_positions(A, R, force)
        np.testing.assert_allclose(skin.direct_positions(A, R, force), kkt, atol=1e-8)
        np.testing.assert_allclose(skin.positions(A, R, force, tolerance=1e-13), kkt, atol=1e-8)


def test_two_materials_get_their_own_preconditioner_and_the_same_answer():
    """One Poisson's ratio everywhere shares the ARAP factor as the preconditioner; a stiff, nearly
    incompressible half beside a soft one (ratio (2 mu + lam) / 2 mu differing per tet) gets its own
    factor, and the iterations still land on the KKT answer (1e-8 m, as above)."""
    mesh = cylinder()
    A = bent()
    R = tet_rotations(A, assign_tets(mesh.X, mesh.T, HEADS, TAILS))
    pins, bones = pin_vertices(mesh.X, HEADS, TAILS, radius=0.1)
    uniform = Material.uniform(mesh.t, 1e4, 0.45, 1000.0)
    skin = PhysicsSkin.build(mesh, uniform.mu, uniform.lam, pins, bones)
    assert skin.precondition is skin.factor
    left = mesh.X[mesh.T].mean(axis=1)[:, 0] < 2.0
    soft = Material.uniform(mesh.t, 1e4, 0.3, 1000.0)
    mixed = PhysicsSkin.build(
        mesh, np.where(left, uniform.mu * 10, soft.mu), np.where(left, uniform.lam * 10, soft.lam), pins, bones
    )
    assert mixed.precondition is not mixed.factor
    np.testing.assert_allclose(mixed.positions(A, R, tolerance=1e-13), mixed.kkt_positions(A, R), atol=1e-8)


def test_iterations_stop_at_the_tolerance_asked_for():
    """The default tolerance (the starting residual reduced by 1e-6) lands within 1e-6 of the size
    (4 m) of the exact solve.  Starting from the answer costs no iteration, and the answer is a
    function of the frame alone."""
    mesh = cylinder()
    skin, W = rig(mesh, 0.45), chain_weights(mesh.X, np.array([1.0, 3.0]))
    A = bent(1.2)
    R = blended_rotations(A, W[mesh.T].mean(1))
    exact = skin.direct_positions(A, R)
    x = skin.positions(A, R)
    from_arap = skin.last_iterations
    assert 0 < from_arap < 100
    assert np.abs(x - exact).max() <= 1e-6 * 4.0
    skin.positions(A, R, guess=exact)
    assert skin.last_iterations == 0
    skin.positions(bent(0.3), R)  # another frame in between changes nothing
    assert np.array_equal(skin.positions(A, R), x)


def test_twice_the_force_gives_twice_the_displacement():
    # The energy is quadratic in x with R fixed, so the response to a force is linear;
    # 1e-9 relative is round-off of two back-substitutions.
    mesh = cylinder()
    A, skin = bent(), rig(mesh, 0.3)
    R = tet_rotations(A, assign_tets(mesh.X, mesh.T, HEADS, TAILS))
    f = np.zeros_like(mesh.X)
    f[mesh.X[:, 0] > 3.5, 1] = 50.0  # a push on the far end (newtons)
    x0 = skin.direct_positions(A, R)
    d1, d2 = skin.direct_positions(A, R, f) - x0, skin.direct_positions(A, R, 2 * f) - x0
    assert np.abs(d1).max() > 1e-4
    np.testing.assert_allclose(d2, 2 * d1, atol=1e-9 * np.abs(d1).max())


def test_180_degree_twist_keeps_volume_where_lbs_collapses():
    """A cylinder (425 vertices, 1536 tets) twisted 180° about its axis at the joint of two bones.

    LBS (hat weights blending over x in [1, 3]) loses a third of the volume (-33.3 %) and
    inverts 57 tets.  Physics skinning with quaternion-blended tet rotations and
    nu = 0.45 changes the volume by -1.6 % and inverts none.  The seed's per-bone
    rotations (one cluster per bone) do not reach that (-12 %, 52 inverted): the
    180° jump at the cluster boundary is incompatible; it is measured, not asserted.
    Bounds: |dV| <= 2 % (the issue's), LBS loss >= 30 % (the issue's), fewer inverted tets.
    """
    mesh = cylinder()
    A = np.tile(np.eye(4)[:3], (2, 1, 1))
    A[1, :, :3] = rx(np.pi)
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    V0 = mesh.volumes.sum()

    v_lbs = signed_volumes(lbs_positions(mesh.X, W, A), mesh.T)
    skin = rig(mesh, 0.45)
    start = time.perf_counter()
    v_phys = signed_volumes(skin.positions(A, blended_rotations(A, W[mesh.T].mean(1))), mesh.T)
    elapsed = time.perf_counter() - start
    v_bone = signed_volumes(skin.positions(A, tet_rotations(A, assign_tets(mesh.X, mesh.T, HEADS, TAILS))), mesh.T)

    print(
        f"LBS dV {v_lbs.sum() / V0 - 1:+.4f} inverted {(v_lbs <= 0).sum()}; "
        f"physics (blended) dV {v_phys.sum() / V0 - 1:+.4f} inverted {(v_phys <= 0).sum()} in {elapsed * 1e3:.1f} ms; "
        f"physics (per-bone) dV {v_bone.sum() / V0 - 1:+.4f} inverted {(v_bone <= 0).sum()}"
    )
    assert v_lbs.sum() / V0 - 1 <= -0.30
    assert abs(v_phys.sum() / V0 - 1) <= 0.02
    assert (v_phys <= 0).sum() < (v_lbs <= 0).sum()


def exact_energy(skin, R, x):
    """sum_e V_e (mu_e ||F_e - R_e||^2 + lam_e / 2 (det F_e - 1)^2): what volume steps minimise."""
    F = (skin.K @ x.reshape(-1)).reshape(-1, 3, 3)
    V = skin.mesh.volumes
    return float((V * (skin.mu * ((F - R) ** 2).sum(axis=(1, 2)) + skin.lam / 2 * (np.linalg.det(F) - 1) ** 2)).sum())


@pytest.mark.parametrize("radius", [0.1, 0.3])
def test_volume_step_equals_the_assembled_gauss_newton_step(radius):
    """The matrix-free step equals assembling A(cof F) and the exact gradient and solving directly.

    1e-8 of the size (4 m): the iterations are run to 1e-12 of their start, what is left is
    the conditioning of the two solves (about 1e4) times round-off.  With pins 0.3 from the bones
    some tets lie wholly among them and the step leaves them out (``FreePattern.tets``).
    """
    mesh = cylinder()
    A = bent(np.pi / 2)
    R = blended_rotations(A, chain_weights(mesh.X, np.array([1.0, 3.0]))[mesh.T].mean(1))
    skin = rig(mesh, 0.45, radius)
    assert (len(skin.pattern.tets) < mesh.t) == (radius > 0.1)
    x = skin.positions(A, R)
    F = (skin.K @ x.reshape(-1)).reshape(-1, 3, 3)
    C = cofactors(np.ascontiguousarray(F.reshape(-1, 9).T)).T.reshape(-1, 3, 3)
    np.testing.assert_allclose(np.einsum("tj,tj->t", F[:, 0], C[:, 0]), np.linalg.det(F), atol=1e-12)
    V, c = mesh.volumes, mesh.volumes * skin.lam
    grad = skin.K.T @ ((2 * V * skin.mu)[:, None] * (F - R).reshape(-1, 9)).ravel()
    grad += rotated_divergence(mesh, C).T @ (c * (np.linalg.det(F) - 1.0))
    H = hessian(skin.K, V, skin.mu, skin.lam, C)
    d = np.zeros(3 * mesh.n)
    d[skin.free] = spla.spsolve(sp.csc_matrix(H[skin.free][:, skin.free]), -grad[skin.free])
    step = skin.volume_step(R, x, tolerance=1e-12)
    assert np.abs(step - (x + d.reshape(-1, 3))).max() <= 1e-8 * 4.0
    assert np.array_equal(step[skin.pins], x[skin.pins])  # the pins hold


def test_volume_steps_lower_the_exact_energy_and_bring_a_bent_joint_back_toward_its_volume():
    """A 90° bend with nu = 0.45: the linear solve holds tr(R^T F) = 3, not det F = 1, and the
    joint (tets whose two weights both exceed 5 %) loses volume; Gauss-Newton steps lower the
    exact energy step by step (strictly: each is a descent step on it) and shrink that loss.
    Measured on this 425-vertex mesh: the joint's loss falls from 5.9 % to 3.7 % in one step."""
    mesh = cylinder()
    A = bent(np.pi / 2)
    W = chain_weights(mesh.X, np.array([1.0, 3.0]))
    Wt = W[mesh.T].mean(1)
    R = blended_rotations(A, Wt)
    skin = rig(mesh, 0.45)
    joint = (Wt > 0.05).all(axis=1)
    V0 = mesh.volumes[joint].sum()
    x = skin.positions(A, R)
    losses, energies = [], []
    for _ in range(3):
        losses.append(abs(signed_volumes(x, mesh.T)[joint].sum() / V0 - 1))
        energies.append(exact_energy(skin, R, x))
        x = skin.volume_step(R, x)
    print("joint volume loss by step", np.round(losses, 4), "energy", np.round(energies, 3))
    assert energies[0] > energies[1] > energies[2]
    assert losses[1] < losses[0]


def bent_and_twisted():
    """The cylinder at Poisson 0.49 bent 120° with its second bone twisted 180°, where one unsearched
    Gauss-Newton step inverts tets: (mesh, skin, blended rotations R, ARAP positions x0)."""
    mesh = cylinder()
    A = bent(2 * np.pi / 3)
    T = np.eye(4)
    T[:3, :3] = rx(np.pi)
    T[:3, 3] = HEADS[1] - rx(np.pi) @ HEADS[1]
    B = np.eye(4)
    B[:3] = A[1]
    A[1] = (B @ T)[:3]
    R = blended_rotations(A, chain_weights(mesh.X, np.array([1.0, 3.0]))[mesh.T].mean(1))
    skin = rig(mesh, 0.49)
    return mesh, skin, R, skin.arap_positions(A, R)


def test_the_searched_volume_solve_lowers_the_energy_and_inverts_nothing():
    """Issue 23: at Poisson 0.49, a 120° bend with a 180° twist, one unsearched Gauss-Newton step
    inverted 14 tets and stopped 10 % of the size from the converged answer.  The searched solve
    lowers the exact energy below the one step's, ends with no more inverted tets than the ARAP start
    had, and takes more than one step (its stop: a step below 1e-3 of the size)."""
    mesh, skin, R, x0 = bent_and_twisted()
    one = skin.volume_step(R, x0, 1e-3)
    solved = skin.volume_solve(R, x0, 1e-3, 8, 1e-3)
    before = int((signed_volumes(x0, mesh.T) <= 0).sum())
    assert skin.last_steps > 1
    assert exact_energy(skin, R, solved) < exact_energy(skin, R, one) < exact_energy(skin, R, x0)
    assert (signed_volumes(solved, mesh.T) <= 0).sum() <= before
    assert np.array_equal(solved[skin.pins], x0[skin.pins])  # the pins hold


def test_a_step_may_trade_inverted_tets_as_long_as_their_count_falls():
    """From bones only at the bench limb's hardest pose (120° bend, 180° twist, 2,673 vertices) the ARAP
    start inverts 135 tets; the first full step leaves 21, a few of them newly inverted.  Refusing every
    newly inverted tet stalled the solve with 106 inverted (measured); counting them lets it through:
    under 20 remain, and no accepted step raised the count (each step's count is checked)."""
    mesh = limb.cylinder_mesh(32, 8)
    mat = Material.uniform(mesh.t, limb.YOUNGS, limb.POISSON, 1000.0)
    rig = PhysicsRig.from_bones(mesh, np.zeros((mesh.n, 2)), limb.HEADS, limb.TAILS, mat.mu, mat.lam)
    A = limb.limb_pose(120.0, 180.0)
    R = blended_rotation_rows(A, rig.tet_weights[rig.skin.pattern.tets])
    x = rig.skin.arap_positions(A, R, rig.force)
    counts = [int((signed_volumes(x, mesh.T) <= 0).sum())]
    targets = rig.skin.pin_targets(A)
    for _ in range(rig.volume_steps):  # one searched step at a time, counting after each
        x = rig.skin.volume_solve(R, x, 1e-3, 1, 0.1, targets=targets)
        counts.append(int((signed_volumes(x, mesh.T) <= 0).sum()))
        if rig.skin.last_stop != "cap":
            break
    print("inverted tets after each step", counts)
    assert counts[0] > 100 and counts[-1] < 20
    assert all(b <= a for a, b in itertools.pairwise(counts))


def test_the_line_search_energy_and_inversion_test_equal_their_references():
    """The searched solve evaluates each trial by one K x on the tets that touch a free vertex (the
    others never move): the energy with a closed-form det F and the inversion test as det F <= 0.  On a
    pose where one unsearched step inverts tets (Poisson 0.49, 120° bend, 180° twist) the energy's
    changes equal the reference's (``np.linalg.det`` over every tet) to 1e-12 of the energy (round-off
    of sums over 1,536 tets), det F equals ``np.linalg.det`` and the inversion test the signed volumes,
    tet by tet; and a step linearised at a given K x equals one that computes it."""
    mesh, skin, R, x0 = bent_and_twisted()
    one = skin.volume_step(R, x0, 1e-3)
    R9 = skin.pattern.gather(R)
    kept = skin.pattern.tets
    energies = []
    for x in (x0, one):
        F = skin.deformation(x)
        Fr = (skin.K @ x.reshape(-1)).reshape(-1, 3, 3)[kept]
        np.testing.assert_allclose(F.T.reshape(-1, 3, 3), Fr, rtol=0, atol=1e-14)
        e, J = skin._energy(R9, F)
        energies.append((e, exact_energy(skin, R, x)))
        np.testing.assert_allclose(J, np.linalg.det(Fr), rtol=0, atol=1e-12)
        assert np.array_equal(J <= 0, signed_volumes(x, mesh.T)[kept] <= 0)
    (e0, r0), (e1, r1) = energies
    assert abs((e1 - e0) - (r1 - r0)) <= 1e-12 * r0
    assert abs(skin.exact_energy(R, one) - r1) <= 1e-12 * r1
    assert (signed_volumes(one, mesh.T) <= 0).sum() > 0  # the check above saw inverted tets
    assert np.array_equal(skin.volume_step(R, one, 1e-3, F=skin.deformation(one)), skin.volume_step(R, one, 1e-3))


def test_stress_force_and_divergence_entries_equal_their_sparse_references():
    """K^T P by the divergence entries' scatter, and D(R)'s entries, equal the assembled K and the
    per-tet products to round-off (1e-12 relative: sums of 4-24 terms), with tets wholly among the
    pins left out (pins 0.3 from the bones) and their forces on the pins dropped."""
    from core.physskin.solve import divergence_entries, divergence_rows

    mesh = cylinder()
    skin = rig(mesh, 0.45, 0.3)
    kept = skin.pattern.tets
    rng = np.random.default_rng(7)
    P = rng.normal(size=(mesh.t, 3, 3))
    full = np.zeros((mesh.t, 9))
    full[kept] = P[kept].reshape(-1, 9)
    reference = (skin.K.T @ full.ravel()).reshape(-1, 3)[skin.free_vertices]
    force = skin.stress_force(skin.pattern.gather(P))
    assert np.abs(force - reference).max() <= 1e-12 * np.abs(reference).max()
    g = divergence_rows(mesh, P)
    np.testing.assert_allclose(g, np.einsum("taj,tij->tai", mesh.gradients, P), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(divergence_entries(skin.G, skin.pattern.gather(P)), g[kept])
