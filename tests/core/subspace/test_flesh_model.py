"""The flesh-calibrated reduced model (core/subspace/flesh_model.py, issue 37).

On a bar of four bones, flesh calibrated part by part:
- complementarity: J_c^T B(W) = 0 to round-off (1e-9 of the norms' product: the modes, the responses and
  the Ritz step are all in the constraint's complement up to the solves' round-off), and held vertices
  stay at zero exactly;
- the calibration converged: every part's reduced sag within 20 % of their common one;
- rotation and translation invariance of the factors, the reference and the span (1e-8: round-off of the
  solves on a rotated copy), and the reference sag scaling as the size squared (same material);
- the physics the Wobble now promises: a steady acceleration a of the whole rig sags every part by about
  a / (2 pi f)^2, within a factor 2 (the model as simulated, Wobble 3 Hz, critically damped to settle).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from core.geometry.tetmesh import TetMesh, boundary_faces
from core.model.constraint import complementarity_matrix
from core.model.fem import lumped_mass
from core.model.leak import surface_depth
from core.model.materials import Material
from core.model.parts import body_parts
from core.model.rig import LBSRig, lbs_jacobian, rig_parameters
from core.subspace.flesh_model import build_flesh_model
from core.validation.scenes import bar_scene, random_rotation

PARENTS = np.array([-1, 0, 1, 2])


def _build(mesh, rig, held=None):
    mat = Material.uniform(mesh.t, 1e4, 0.3, 1000.0)
    parts = body_parts(rig.weights, lumped_mass(mesh, mat.density), surface_depth(mesh), PARENTS, min_share=0.01)
    return build_flesh_model(mesh, mat, rig, m=6, r=24, parts=parts, held=held), mat, parts


@pytest.fixture(scope="module")
def bar():
    s = bar_scene(cells_per_unit=2, bones=4)
    held = np.flatnonzero(s.mesh.X[:, 0] < 0.2)
    model, mat, parts = _build(s.mesh, s.rig, held)
    return s, model, mat, parts, held


def test_the_model_is_complementary_and_holds_what_is_held(bar):
    s, model, _, _, held = bar
    # The Modes budget: the 6 slowest Ritz vectors of the modes and the responses.
    assert model.m == 6 and model.reference_sag is not None and model.reference_sag > 0
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), model.masses, model.leak)
    B = sp.csr_matrix(lbs_jacobian(s.mesh.X, model.weights))
    assert sp.linalg.norm(Jc.T @ B) <= 1e-9 * sp.linalg.norm(Jc) * sp.linalg.norm(B)
    assert np.abs(model.weights[held]).max() == 0.0


def test_every_part_sags_alike(bar):
    _, model, _, _, _ = bar
    sags = model.part_sags[np.isfinite(model.part_sags)]
    assert len(sags) >= 2 and np.all(np.abs(sags - 1.0) < 0.2)


def test_the_calibration_is_the_same_for_a_turned_moved_or_scaled_character(bar):
    s, model, _, _, held = bar
    R = random_rotation(np.random.default_rng(5))
    turned = TetMesh.from_arrays(s.mesh.X @ R.T + np.array([2.0, -1.0, 4.0]), s.mesh.T)
    other, _, _ = _build(turned, LBSRig.from_weights(s.rig.weights), held)
    assert np.allclose(other.mu, model.mu, rtol=1e-8)
    assert np.isclose(other.reference_sag, model.reference_sag, rtol=1e-8)
    Wm, Wo = model.weights, other.weights
    rest = Wo - Wm @ (Wm.T @ (model.masses[:, None] * Wo))
    assert np.sqrt(model.masses @ rest**2).max() < 1e-6
    big = TetMesh.from_arrays(3.0 * s.mesh.X, s.mesh.T)
    scaled, _, _ = _build(big, LBSRig.from_weights(s.rig.weights), held)
    # Same material, three times the size: every frequency a third, every sag per m/s^2 nine times.
    assert np.isclose(scaled.reference_sag, 9.0 * model.reference_sag, rtol=1e-6)


def test_a_steady_acceleration_sags_the_flesh_as_the_wobble_says(bar):
    """The rig accelerates uniformly along y (a = 2 m/s^2 after a smooth start); critically damped at 3 Hz,
    the flesh settles on its quasi-static sag: every part's surface within a factor 2 of a / (2 pi 3)^2."""
    from core.pipeline import CharacterInput, FrameSimulation, SolverSettings, SubspaceSettings, prepare_character
    from core.validation.scenes import chain_weights

    s, _, _, _, _ = bar
    surf = s.mesh.boundary_vertices()
    X, T = s.mesh.X, s.mesh.T
    # The bar as a character: its surface vertices as render vertices, the bar's own tets as its volume.
    W = chain_weights(X, s.joints)
    faces = boundary_faces(T)
    inp = CharacterInput(rest=X, faces=faces, bone_weights=W, bone_parents=PARENTS)
    prep = prepare_character(inp, SubspaceSettings(modes=6, clusters=24), tets=(X, T))
    assert prep.model.reference_sag is not None
    fps, a = 24.0, 2.0

    tau = 0.5  # the acceleration ramps from 0 to a over tau seconds, then stays

    def rig(f):
        t = max(f, 0) / fps
        if t < tau:
            y = a * t**3 / (6.0 * tau)
        else:
            y = a * (tau**2 / 6.0 + tau * (t - tau) / 2.0 + (t - tau) ** 2 / 2.0)
        A = np.tile(np.eye(4)[:3], (4, 1, 1))
        A[:, 1, 3] = y
        return rig_parameters(A)

    sim = FrameSimulation(prep, SolverSettings(damping_ratio=1.0), 0, 72, rig)
    u = np.asarray(sim.offsets(72), dtype=np.float64)
    expect = a / (2.0 * np.pi * 3.0) ** 2
    sag = np.percentile(np.linalg.norm(u[surf], axis=1), 95)
    assert 0.5 * expect <= sag <= 2.0 * expect, (sag, expect)
