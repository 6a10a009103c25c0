"""The test creatures (core/locomotion/creatures.py): conforming lattice meshes, symmetric, on the ground."""

import numpy as np

from core.locomotion.creatures import RECIPES, blob, creature_mesh, creature_problem, quadruped


def test_blob_is_a_symmetric_solid_resting_on_its_sole():
    m = blob()
    assert 2000 < m.t < 5000 and m.volumes.min() > 0.0
    assert m.X[:, 2].min() == 0.0
    np.testing.assert_allclose(m.X[:, :2].min(axis=0), -m.X[:, :2].max(axis=0), atol=1e-12)  # symmetric in x, y
    assert np.isclose(np.ptp(m.X[:, 0]), 1.02)  # 17 cells of 6 cm: about 1 m long
    sole = m.X[m.X[:, 2] == 0.0]
    assert len(sole) > 20  # a flat patch, not a point


def test_quadruped_stands_on_four_feet():
    m = quadruped()
    assert 2000 < m.t < 5000 and m.volumes.min() > 0.0
    feet = m.X[m.X[:, 2] == 0.0]
    quadrants = {(bool(x > 0), bool(y > 0)) for x, y in feet[:, :2]}
    assert len(quadrants) == 4  # one foot under each corner
    assert np.ptp(m.X[:, 0]) == 0.8 and np.isclose(np.ptp(m.X[:, 2]), 0.35)


def test_the_problem_samples_every_boundary_vertex_and_rests_on_the_ground():
    recipe = RECIPES["quadruped"]
    mesh = creature_mesh(recipe)
    p = creature_problem(recipe, 30, mesh)
    assert np.array_equal(np.sort(p.model.samples), mesh.boundary_vertices())
    assert abs(p.ground.height) < 1e-12 and p.ground.friction == recipe.friction  # Y Z0 = X to round-off
    assert np.isclose(p.length, 0.8) and p.amplitude_max == recipe.amplitude_max
