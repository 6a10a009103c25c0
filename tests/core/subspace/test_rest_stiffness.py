"""The reduced model's rest stiffness (core/subspace/rest_stiffness.py), with and without fibers.

Checked against central differences of the solver's own elastic energy: a quadratic-dominated
function, so the truncation is O(eps^2) and the energy's constant terms cancel to round-off
(~1e-16 of sum mu / eps^2): 1e-5 relative.
"""

import numpy as np
import pytest

from core.dynamics.simulator import SimulationSettings, Simulator
from core.model.materials import Material
from core.model.rig import rest_parameters
from core.pipeline import SubspaceSettings, prepare_character
from core.subspace.reduced import build_reduced_model
from core.subspace.rest_stiffness import fiber_hessian, rest_hessian
from core.validation.scenes import bar_scene
from tests.core.pipeline.characters import two_spheres

SUB = SubspaceSettings(modes=6, clusters=20, target_tets=2500, tet_method="lattice")


@pytest.fixture(scope="module")
def scene():
    return bar_scene(cells_per_unit=3, bones=3)


@pytest.fixture(scope="module", params=[0.0, 0.4], ids=["arap", "corotational"])
def model(request, scene):
    mat = Material.uniform(scene.mesh.t, 3e4, request.param, 1000.0)
    return build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)


def test_rest_hessian_is_the_second_derivative_of_the_solver_energy(model):
    sim = Simulator(model, SimulationSettings(rest_state="rest"))
    K = rest_hessian(model, sim.arap)
    rng = np.random.default_rng(4)
    p = rest_parameters(3)
    eps = 1e-3
    for _ in range(3):
        v = rng.standard_normal((4 * model.m, 3))
        e = [sim.elastic_energy(a * v, p) for a in (-eps, 0.0, eps)]
        fd = (e[0] - 2 * e[1] + e[2]) / eps**2
        exact = v.ravel() @ K @ v.ravel()
        assert abs(fd - exact) <= 1e-5 * abs(exact)


@pytest.fixture(scope="module")
def fibered():
    """The two-sphere character with its bones' segments: a flesh-calibrated model with fibers."""
    return prepare_character(two_spheres(segments=True), SUB).model


@pytest.mark.parametrize("fiber_scale", [0.0, 11.0])
def test_the_fibers_rest_hessian_is_the_second_derivative_of_the_solver_energy(fibered, fiber_scale):
    """With the fiber clusters at their own scale (an SPD rest gradient D, not I, and their own rotations),
    and without them (the plain clusters alone, as the calibration takes them)."""
    assert fibered.fiber is not None and fibered.fiber.any() and fibered.A_F is not None
    sim = Simulator(fibered, SimulationSettings(fiber_scale=fiber_scale, material="corotational"))
    K = rest_hessian(fibered, arap=False, fiber_scale=fiber_scale)
    p = rest_parameters(fibered.bones)
    rng = np.random.default_rng(7)
    # A larger step than above: with the fibers at scale 11 the energy's constant terms are larger, and their
    # round-off over eps^2 dominates below (measured: 4.3e-5 relative at eps 1e-3, 2.4e-4 at 3e-4, growing as
    # 1 / eps^2); at 3e-3 the O(eps^2) truncation is still far below 1e-5.
    eps = 3e-3
    for _ in range(3):
        v = rng.standard_normal((4 * fibered.m, 3)) * 1e-2
        e = [sim.elastic_energy(a * v, p) for a in (-eps, 0.0, eps)]
        fd = (e[0] - 2 * e[1] + e[2]) / eps**2
        exact = v.ravel() @ K @ v.ravel()
        assert abs(fd - exact) <= 1e-5 * abs(exact)
    # The fibers stiffen: the fiber part adds positive stiffness along some directions.
    F = fiber_hessian(fibered)
    assert np.linalg.eigvalsh(0.5 * (F + F.T)).max() > 0
