"""The solver in a pose-space subspace (core/posespace/simulator.py), proven by the solver's invariants.

Tolerances as in tests/core/dynamics/test_simulator.py: exact identities to round-off scaled by
the quantities involved (1e-9 relative), 1e-8 relative for rotation over 100 nonlinear steps.
"""

import numpy as np

from core.dynamics.simulator import SimulationSettings, Simulator
from core.geometry.tetmesh import TetMesh
from core.model.constraint import complementarity_matrix
from core.model.materials import Material
from core.model.rig import LBSRig, rest_parameters, rig_parameters
from core.posespace.model import assemble_pose_space
from core.posespace.simulator import PoseSpaceSimulator
from core.subspace.reduced import assemble_model
from core.validation.scenes import random_rotation
from tests.core.posespace.conftest import own_model


def run(sim, poses):
    """Step through rig parameters poses[1:] from rest relative to poses[0]; the list of u (n, 3)."""
    state = sim.initial_state(poses[0])
    out = []
    for p in poses[1:]:
        state, _ = sim.step(state, p)
        out.append(sim.displacement(state))
    return out


def swing_poses(swing, steps, **kw):
    return [swing.pose(k * swing.H, **kw) for k in range(steps + 1)]


def test_rest_stays_at_rest(swing):
    sim = PoseSpaceSimulator(swing.model, SimulationSettings(time_step=swing.H))
    u = run(sim, [rest_parameters(3)] * 21)
    assert max(np.abs(x).max() for x in u) <= 1e-12 * swing.scene.length


def test_complementarity_every_step(swing):
    """J^T u = 0 with the rest model's rig Jacobian, every step of a swing through both training
    poses: every blended basis is complementary (the constraint is shared and linear)."""
    sim = PoseSpaceSimulator(swing.model, SimulationSettings(time_step=swing.H))
    Jc = complementarity_matrix(swing.scene.rig.jacobian(swing.scene.mesh.X), swing.rest.masses, swing.rest.leak)
    norm_J = np.sqrt(Jc.multiply(Jc).sum())
    u = run(sim, swing_poses(swing, 48))
    assert max(np.abs(x).max() for x in u) > 1e-3 * swing.scene.length  # it moved
    for x in u:
        assert np.linalg.norm(Jc.T @ x.ravel()) <= 1e-9 * norm_J * np.linalg.norm(x)


def test_galilean_invariance(swing):
    """A bent pose (a training pose blended with rest) translating at constant velocity, already
    moving at t = 0, makes no secondary motion (1e-9 of the distance travelled)."""
    sim = PoseSpaceSimulator(swing.model, SimulationSettings(time_step=swing.H))
    v = np.array([3.0, -1.0, 2.0])
    bent = swing.scene.transforms(0.1, amplitude=swing.AMPLITUDE, frequency=1.0)

    def pose(t):
        A = bent.copy()
        A[:, :, 3] += v * t
        return rig_parameters(A)

    state = sim.initial_state(pose(0.0), p_prev=pose(-swing.H))
    for k in range(1, 41):
        state, _ = sim.step(state, pose(k * swing.H))
    assert 0.0 < sim.weights[1] < 1.0  # a blend, not a training pose
    assert np.abs(sim.displacement(state)).max() <= 1e-9 * np.linalg.norm(v) * 40 * swing.H


def test_rotation_equivariance(swing):
    """Rotate the rest mesh and the rig trajectory by R, on the same per-pose weights: the
    secondary motion rotates by R (1e-8 relative over 100 steps, spinning the bar 90°)."""
    R = random_rotation(np.random.default_rng(11))
    rest = swing.rest
    mesh_r = TetMesh.from_arrays(rest.X @ R.T, rest.T)
    mat = Material(mu=rest.mu, lam=rest.lam, density=np.full(mesh_r.t, 1000.0))
    rest_r = assemble_model(
        mesh_r, mat, rest.masses, rest.leak, LBSRig(rest.rig_weights), rest.weights, rest.eigenvalues, rest.labels
    )
    training_r = np.array([swing.pose(0.25, rotate=R), swing.pose(0.75, rotate=R)])
    bases = swing.model.alignment.bases @ np.transpose(swing.model.alignment.rotations, (0, 2, 1))  # unaligned
    model_r = assemble_pose_space(rest_r, mat, np.vstack([rest_parameters(3)[None], training_r]), bases)
    settings = SimulationSettings(time_step=swing.H)
    u = run(PoseSpaceSimulator(swing.model, settings), swing_poses(swing, 100, spin=np.pi / 2))
    u_r = run(PoseSpaceSimulator(model_r, settings), swing_poses(swing, 100, spin=np.pi / 2, rotate=R))
    scale = max(np.abs(a).max() for a in u)
    assert scale > 0.02 * swing.scene.length
    assert max(np.abs(b - a @ R.T).max() for a, b in zip(u, u_r)) <= 1e-8 * scale


def test_held_at_a_training_pose_it_is_that_poses_own_solver(swing):
    """Driven towards training pose 1 and held there, the pose-space solver equals the ordinary
    solver on pose 1's own model (its products agree to 1e-10, test_model.py) to 1e-8."""
    m = swing.model
    own = own_model(swing, 1)
    settings = SimulationSettings(time_step=swing.H)
    p0, p1 = m.poses[1], m.poses[1].copy()
    p1.reshape(-1, 3, 4)[:, :, 3] += np.array([0.0, 0.4, 0.0])  # a jerk of the held pose: same rotations
    plain = Simulator(own, settings)
    ps = PoseSpaceSimulator(m, settings)
    s_plain, s_ps = plain.initial_state(p0), ps.initial_state(p0)
    for p in [p1] * 30:
        s_plain, _ = plain.step(s_plain, p)
        s_ps, _ = ps.step(s_ps, p)
        a, b = plain.displacement(s_plain), ps.displacement(s_ps)
        assert np.abs(a).max() > 0
        np.testing.assert_allclose(b, a, atol=1e-8 * np.abs(a).max())


def test_sweeping_between_poses_changes_the_offsets_smoothly(swing):
    """No frame-to-frame jump larger than the motion explains: the largest change of u between
    frames stays within 2x the rest-only solver's on the same swing (measured about 1x), and the
    largest second difference within 2x as well: a basis switching abruptly would spike both."""
    settings = SimulationSettings(time_step=swing.H)
    poses = swing_poses(swing, 96)
    u_ps = np.array(run(PoseSpaceSimulator(swing.model, settings), poses))
    u_rest = np.array(run(Simulator(swing.rest, settings), poses))

    def jumps(u):
        d1 = np.abs(np.diff(u, axis=0)).max()
        d2 = np.abs(np.diff(u, n=2, axis=0)).max()
        return d1, d2

    (a1, a2), (b1, b2) = jumps(u_ps), jumps(u_rest)
    assert a1 <= 2.0 * b1 and a2 <= 2.0 * b2, (a1, b1, a2, b2)


def test_a_step_with_animated_controls_factorises_its_system_once(swing, monkeypatch):
    """The blended system is factorised for the step's own stiffness and damping (what the frame
    simulation passes every step), not first for the settings' and then again."""
    import core.dynamics.simulator as simulator_module

    calls = []
    factor = simulator_module.sla.cho_factor
    monkeypatch.setattr(simulator_module.sla, "cho_factor", lambda *a, **k: calls.append(1) or factor(*a, **k))
    sim = PoseSpaceSimulator(swing.model, SimulationSettings(time_step=swing.H))
    state = sim.initial_state(swing.pose(0.0))
    calls.clear()
    for k in range(1, 6):
        state, _ = sim.step(state, swing.pose(k * swing.H), stiffness_scale=2.0, damping=0.5)
    assert len(calls) == 5
