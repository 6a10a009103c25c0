"""Which drive a prepared character gets (core/pipeline/drives.py): rig, training poses or physics skin; and
an object's rotation-strain drive."""

import numpy as np
import pytest

from core.dynamics.drive import RigDrive
from core.physskin.drive import PhysicsSkinDrive
from core.pipeline import FrameSimulation, SolverSettings, prepare_pose_space
from core.posespace.drive import PoseSpaceDrive
from tests.core.pipeline.characters import swing


def test_physics_skin_leaves_the_poses_out_and_says_so(skinned):
    ps = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9])
    sim = FrameSimulation(skinned, SolverSettings(physics_skin=True), 1, 5, swing, posespace=ps)
    assert isinstance(sim.drive, PhysicsSkinDrive) and any("training poses are not used" in w for w in sim.warnings)


def test_the_rig_drives_unless_poses_or_the_physics_skin_do(prepared, skinned):
    """No poses, no physics skin: the rig; training poses: their blend; Physics Skin: its shape, with or
    without the jiggle on top (Secondary Motion)."""
    ps = prepare_pose_space(prepared, swing(2 * np.pi)[None], frames=[9])
    assert type(FrameSimulation(prepared, SolverSettings(), 1, 5, swing).drive) is RigDrive
    assert type(FrameSimulation(prepared, SolverSettings(), 1, 5, swing, posespace=ps).drive) is PoseSpaceDrive
    for jiggle in (True, False):
        solver = SolverSettings(physics_skin=True, secondary_motion=jiggle)
        sim = FrameSimulation(skinned, solver, 1, 5, swing)
        assert type(sim.drive) is PhysicsSkinDrive and sim.drive.jiggles is jiggle and sim.warnings == []


def test_rotation_strain_moves_a_one_bone_object_and_refuses_a_rig_of_bones(prepared, tmp_path):
    """An object moved by its own transform (one bone of weight 1) gets rotation-strain coordinates through
    the frame loop: a whip jiggles it and a still one stays exactly at rest (1e-12: the rest state is each
    step's minimiser).  A rig of several bones is refused in one line; in physical mode the stiffness scale
    is not remapped."""
    from core.errors import SimulationError
    from core.geometry.primitives import bar_tet_mesh
    from core.geometry.tetmesh import boundary_faces
    from core.pipeline import CharacterInput, SubspaceSettings, prepare_character, rotstrain_drive
    from core.rotstrain.drive import RotStrainDrive

    with pytest.raises(SimulationError, match=r"this rig has \d+ bones; set Subspace to Skinning Eigenmodes"):
        rotstrain_drive(prepared, SolverSettings(), swing, 4)
    X, T = bar_tet_mesh(2.0, 0.5, 4)
    inp = CharacterInput(rest=X, faces=boundary_faces(T), bone_weights=np.ones((len(X), 1)))
    obj = prepare_character(inp, SubspaceSettings(modes=4, clusters=10, rigid_pieces="none"), tets=(X, T))

    def whip(f):
        g = min(max(f - 1, 0), 6) / 6
        c, s = np.cos(0.5 * np.pi * g), np.sin(0.5 * np.pi * g)
        return np.array([[c, -s, 0.0, g], [s, c, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]).ravel()

    solver = SolverSettings()
    drive = rotstrain_drive(obj, solver, whip, 4)
    assert type(drive) is RotStrainDrive and drive.kappa_ratio != 1.0
    sim = FrameSimulation(obj, solver, 1, 12, whip, drive=drive)
    assert max(np.abs(sim.offsets(f)).max() for f in range(1, 13)) > 1e-3 * sim.size
    still = FrameSimulation(
        obj, solver, 1, 6, lambda f: whip(1), drive=rotstrain_drive(obj, solver, lambda f: whip(1), 4)
    )
    assert max(np.abs(still.offsets(f)).max() for f in range(1, 7)) < 1e-12 * still.size
    assert rotstrain_drive(obj, SolverSettings(stiffness_mode="physical"), whip, 4).kappa_ratio == 1.0


def test_a_stored_gait_drives_a_boneless_mesh_through_the_frame_loop(tmp_path):
    """A gait found for a prepared mesh without bones plays in FrameSimulation exactly as its own rollout
    (1e-12: the same Stepper fed the same floats, module doc of core/locomotion/drive.py); the gait's JSON
    plays the same; another mesh or another frame rate is refused in one line."""
    from core.errors import SimulationError
    from core.geometry.tetmesh import boundary_faces, compact_unreferenced
    from core.locomotion.creatures import quadruped
    from core.locomotion.drive import LocomotionDrive
    from core.locomotion.gait import rollout
    from core.locomotion.stored import GaitSettings, StoredGait, search
    from core.model.rig import rig_parameters
    from core.pipeline import CharacterInput, SubspaceSettings, locomotion_drive, prepare_character

    mesh = quadruped(cell=0.1)
    V, F, _ = compact_unreferenced(mesh.X, boundary_faces(mesh.T))
    character = CharacterInput(rest=V, faces=F, bone_weights=np.ones((len(V), 1)))
    prepared = prepare_character(character, SubspaceSettings(modes=4, clusters=8), tets=(mesh.X, mesh.T))
    settings = GaitSettings(dt=1 / 30, rollout_s=1.0, judge_s=0.0, generations=2, population=4, restarts=1)
    gait = StoredGait.from_json(search(prepared.mesh, settings).to_json())
    solver = SolverSettings(fps=15, substeps=2, preroll=0, stiffness_mode="physical")
    drive = locomotion_drive(prepared, solver, gait, 1)
    assert isinstance(drive, LocomotionDrive)
    still = rig_parameters(np.eye(4)[None, :3])
    sim = FrameSimulation(prepared, solver, 1, 8, lambda f: still, drive=drive)
    problem = gait.problem(prepared.mesh, steps=14)
    r = rollout(problem, problem.sinusoids(gait.x), record=True)
    for f in (1, 4, 8):
        np.testing.assert_allclose(sim.state(f).z, r.Z[2 * (f - 1)], rtol=0, atol=1e-12)
    with pytest.raises(SimulationError, match="frame rate"):
        locomotion_drive(prepared, SolverSettings(fps=24, substeps=2), gait, 1)
    other = quadruped(cell=0.09)
    W, G, _ = compact_unreferenced(other.X, boundary_faces(other.T))
    moved = prepare_character(
        CharacterInput(rest=W, faces=G, bone_weights=np.ones((len(W), 1))),
        SubspaceSettings(modes=4, clusters=8),
        tets=(other.X, other.T),
    )
    with pytest.raises(SimulationError, match="another mesh"):
        locomotion_drive(moved, solver, gait, 1, "'Blob'")


def test_the_ground_acts_through_the_rig_drive_and_is_off_by_default(prepared):
    """Ground on (just under the character): the rig's drive carries it, and the swinging flesh stays above
    it (1 % of the size); off, the frame loop runs the plain rig drive, bit for bit the same as before."""
    X = prepared.model.X
    floor = float(X[:, 2].min())
    plain = FrameSimulation(prepared, SolverSettings(), 1, 12, swing)
    assert plain.drive.obstacles is None
    solver = SolverSettings(ground=True, ground_height=floor)
    sim = FrameSimulation(prepared, solver, 1, 12, swing)
    assert sim.drive.obstacles is not None and sim.warnings == []
    lowest = min(
        float((sim.drive.simulator.displacement(sim.state(f)) + rig_positions(prepared, f))[:, 2].min())
        for f in range(1, 13)
    )
    assert floor - lowest <= 0.01 * sim.size


def rig_positions(prepared, frame):
    from core.model.rig import lbs_basis, rig_matrix

    m = prepared.model
    return lbs_basis(m.rig_weights, m.X) @ rig_matrix(swing(frame))


def test_contact_with_poses_acts_and_with_the_physics_skin_too(skinned):
    """With training poses the ground acts (issue 29): the pose-space drive carries it, the flesh stays
    above it (1 % of the size), bounded; with Physics Skin it acts too, and no line says it is off (issue 30)."""
    from core.model.rig import lbs_basis, rig_matrix

    ps = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9])
    floor = float(skinned.model.X[:, 2].min())
    on = SolverSettings(ground=True, ground_height=floor)
    sim = FrameSimulation(skinned, on, 1, 12, swing, posespace=ps)
    assert isinstance(sim.drive, PoseSpaceDrive) and sim.drive.obstacles is not None and sim.warnings == []
    m = skinned.model
    for f in range(1, 13):
        state = sim.state(f)
        x = sim.drive.simulator.displacement(state) + lbs_basis(m.rig_weights, m.X) @ rig_matrix(swing(f))
        assert np.isfinite(x).all() and floor - float(x[:, 2].min()) <= 0.01 * sim.size
        assert float(np.abs(state.z).max()) < 1e3 * sim.size
    solver = SolverSettings(ground=True, physics_skin=True)
    physics = FrameSimulation(skinned, solver, 1, 3, swing)
    assert physics.drive.obstacles is not None and not any("contact is off" in w for w in physics.warnings)


def test_skin_on_skin_alone_gives_the_rig_drive_body_pairs(prepared):
    sim = FrameSimulation(prepared, SolverSettings(self_contact=True), 1, 4, swing)
    assert sim.drive.obstacles is None and sim.drive.simulator.contact.pairs is not None
    assert np.isfinite(sim.offsets(4)).all()


def test_a_one_sided_pose_turns_skin_on_skin_on_for_the_poses(skinned):
    """A training pose whose contact is one-sided has no stick basis: the drive adds the body pairs
    (Skin on Skin) instead, with no setting of the user's; a stick pose alone adds no contact."""
    one = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9], contacts=["auto"], one_sided=[True])
    assert one.contacts == (0, 0)  # nothing held in a basis
    sim = FrameSimulation(skinned, SolverSettings(), 1, 3, swing, posespace=one)
    contact = sim.drive.simulator._contact
    assert contact is not None and contact.pairs is not None and sim.drive.obstacles is None
    stick = prepare_pose_space(skinned, swing(2 * np.pi)[None], frames=[9], contacts=["auto"])
    assert FrameSimulation(skinned, SolverSettings(), 1, 3, swing, posespace=stick).drive.simulator._contact is None
