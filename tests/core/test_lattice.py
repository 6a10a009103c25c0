"""The built-in lattice tetrahedraliser (core/lattice.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.lattice import lattice_tet_mesh
from core.tetmesh import TetMesh, dihedral_angles
from tests.core.surfaces import join, signed_volume, torus, uv_sphere


@pytest.mark.parametrize("surface", [uv_sphere(32), torus()], ids=["sphere", "torus"])
def test_fills_closed_surfaces_within_two_percent(surface):
    V, F = surface
    X, T = lattice_tet_mesh(V, F, cell=0.1)
    mesh = TetMesh.from_arrays(X, T)  # raises on any inverted tet
    assert abs(mesh.volumes.sum() / signed_volume(V, F) - 1) < 0.02
    # Snapping keeps every tet at >= 25% of its lattice volume; dihedral angles stay clear of 0.
    assert dihedral_angles(X, T).min() > 2.0


def test_never_fails_on_open_flipped_self_intersecting_input():
    V, F = join(uv_sphere(24), uv_sphere(24, 0.8, (0.9, 0, 0)))
    F = F.copy()
    F[::7] = F[::7, ::-1]  # randomly flipped faces
    F = F[np.random.default_rng(0).random(len(F)) > 0.03]  # and holes
    X, T = lattice_tet_mesh(V, F, cell=0.15)
    mesh = TetMesh.from_arrays(X, T)
    assert 5.0 < mesh.volumes.sum() < 7.5  # the union of the two balls (~6.1), roughly


def test_too_fine_a_lattice_is_refused_before_work():
    V, F = uv_sphere(12)
    with pytest.raises(MeshError, match="memory"):
        lattice_tet_mesh(V, F, cell=1e-4)
