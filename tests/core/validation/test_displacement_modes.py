"""The displacement-mode baseline under the rig-complementarity constraint (core/validation/displacement_modes.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.model.constraint import complementarity_matrix
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.subspace.skinning_modes import skinning_eigenmodes
from core.validation.displacement_modes import displacement_modes
from core.validation.scenes import bar_scene


@pytest.fixture(scope="module")
def setup():
    s = bar_scene(cells_per_unit=3, bones=3)
    mat = Material.uniform(s.mesh.t, 2e4, 0.3, 1000.0)
    masses = lumped_mass(s.mesh, mat.density)
    d = default_leak_field(s.mesh)
    modes = skinning_eigenmodes(s.mesh, mat, masses, s.rig, d, 10)
    return s, mat, masses, d, modes


def test_displacement_modes_satisfy_the_same_constraint(setup):
    s, mat, masses, d, _ = setup
    dm = displacement_modes(s.mesh, mat, masses, s.rig, d, 12)
    U = dm.vectors
    m3 = np.repeat(masses, 3)
    Jc = complementarity_matrix(s.rig.jacobian(s.mesh.X), masses, d)
    assert np.abs(U.T @ (m3[:, None] * U) - np.eye(12)).max() < 1e-8
    assert np.linalg.norm(sp.csr_matrix(Jc).T @ U) <= 1e-9 * sp.linalg.norm(Jc) * np.linalg.norm(U)
    assert np.all(np.diff(dm.eigenvalues) >= -1e-9 * dm.eigenvalues.max())
