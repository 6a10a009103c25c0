"""The flesh calibration's parts (core/subspace/flesh.py): the constrained quasi-static solve, the parts'
responses, the stiffness factors' blend, the calibration step, the reference and the weights it adds.

Tolerances: the constrained solve's constraint holds to round-off of a sparse LU solve (1e-10 relative) and
its equations to the tiny negative shift that keeps the factorisation definite (-1e-8 of H's scale: 1e-7
relative); everything else is exact arithmetic on small arrays.
"""

import numpy as np
import scipy.sparse as sp

from core.model.constraint import constraint_basis, weight_space_constraint
from core.model.fem import corotational_weight_space_hessian, lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.model.parts import Parts
from core.subspace.flesh import (
    FACTOR_RANGE,
    HELD_SAG,
    add_weights,
    calibrate,
    constrained_solver,
    reference,
    response_weights,
    tet_factors,
)
from core.subspace.skinning_modes import free_vertices, skinning_eigenmodes
from core.validation.scenes import bar_scene


def _setup():
    s = bar_scene(cells_per_unit=2, bones=3)
    mat = Material.uniform(s.mesh.t, 1e4, 0.3, 1000.0)
    M = lumped_mass(s.mesh, mat.density)
    d = default_leak_field(s.mesh)
    Y = constraint_basis(weight_space_constraint(s.mesh.X, s.rig, M, d), M)
    H = corotational_weight_space_hessian(s.mesh, mat.mu, mat.lam)
    return s, mat, M, d, Y, H


def test_the_constrained_solve_keeps_the_constraint_and_the_held_vertices():
    s, _, M, _, Y, H = _setup()
    held = np.flatnonzero(s.mesh.X[:, 0] < 0.3)
    free = free_vertices(s.mesh.n, held)
    Yf = np.zeros_like(Y)
    Yf[free] = constraint_basis(
        weight_space_constraint(s.mesh.X, s.rig, M, default_leak_field(s.mesh))[:, free], M[free]
    )
    solve = constrained_solver(H, M, Yf, s.mesh.X, free)
    B = M[:, None] * np.random.default_rng(0).random((s.mesh.n, 2))
    X = solve(B)
    assert np.abs(X[held]).max() == 0.0
    assert np.abs(Yf.T @ (M[:, None] * X)).max() <= 1e-10 * np.abs(M[:, None] * X).sum()
    # On the free vertices H X - B lies in the constraint's directions M Y (a Lagrange multiplier).
    r = (sp.csr_matrix(H) @ X - B)[free]
    MY = (M[:, None] * Yf)[free]
    lam = np.linalg.lstsq(MY, r, rcond=None)[0]
    assert np.abs(r - MY @ lam).max() <= 1e-7 * np.abs(B).max()


def test_responses_are_linear_in_the_loads():
    s, _, M, _, Y, H = _setup()
    solve = constrained_solver(H, M, Y, s.mesh.X)
    loads = s.rig.weights[:, :2]
    R = response_weights(solve, M, loads)
    both = response_weights(solve, M, loads.sum(axis=1, keepdims=True))
    # To the solve's round-off, amplified by its conditioning near the rig's motions (H is nearly singular there).
    assert np.allclose(R.sum(axis=1), both[:, 0], rtol=0.0, atol=1e-6 * np.abs(both).max())


def test_factors_blend_geometrically_across_joints_and_are_bounded():
    s = bar_scene(cells_per_unit=2, bones=2)
    loads = s.rig.weights
    parts = Parts(bone_part=np.array([0, 1]), loads=loads, thin=np.zeros(2, bool), masses=np.ones(2))
    f = tet_factors(s.mesh, parts, np.log([4.0, 1.0]))
    mean = loads[s.mesh.T].mean(axis=1)
    assert np.allclose(f, 4.0 ** mean[:, 0])
    assert tet_factors(s.mesh, parts, np.array([100.0, -100.0])).max() <= FACTOR_RANGE


def test_the_calibration_brings_independent_parts_to_one_sag():
    """Parts whose sag is c_P over their tets' mean factor (springs coupled only where the factors blend at
    joints) start 400 x apart and end within 15 % of their common sag, each round a contraction."""
    s = bar_scene(cells_per_unit=2, bones=3)
    loads = s.rig.weights
    parts = Parts(bone_part=np.arange(3), loads=loads, thin=np.zeros(3, bool), masses=np.ones(3))
    owner = loads[s.mesh.T].mean(axis=1).argmax(axis=1)
    c = np.array([1.0, 20.0, 0.05])

    def sags(factors):
        return np.array([c[p] / np.exp(np.mean(np.log(factors[owner == p]))) for p in range(3)])

    _, last, history = calibrate(s.mesh, parts, sags, np.zeros(3), 12)
    ref, rel = reference(last)
    # The parts share their joints' tets (the factors blend there), so each step is a contraction, not exact.
    assert np.all(np.abs(rel - 1.0) < 0.15) and history[-1] < 0.1 * history[0]
    assert np.isclose(ref, np.exp(np.mean(np.log(last))))


def test_a_held_part_is_left_out_of_the_reference():
    ref, rel = reference(np.array([2.0, 8.0, 0.1 * HELD_SAG * 8.0]))
    assert np.isclose(ref, 4.0) and np.isnan(rel[2]) and np.allclose(rel[:2], [0.5, 2.0])


def test_added_weights_skip_what_the_modes_already_hold_and_stay_m_orthonormal():
    s, mat, M, d, Y, _ = _setup()
    modes = skinning_eigenmodes(s.mesh, mat, M, s.rig, d, 4)
    W = modes.weights
    rng = np.random.default_rng(1)
    new = rng.random(s.mesh.n)
    out = add_weights(W, np.column_stack([W[:, 1] * 3.0, new]), M, Y, s.mesh.X)
    assert out.shape[1] == 5  # the copy of a mode is dropped, the new weight kept
    G = out.T @ (M[:, None] * out)
    assert np.allclose(G, np.eye(5), atol=1e-10)
    assert np.abs(Y.T @ (M[:, None] * out)).max() < 1e-10
