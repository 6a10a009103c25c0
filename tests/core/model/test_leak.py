"""Momentum-leak field (core/leak.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.leak import default_leak_field, validate_leak_field


@pytest.fixture(scope="module")
def mesh():
    return TetMesh.from_arrays(*box_tet_mesh((8, 8, 8)))


def test_default_field_leaks_at_the_surface_and_holds_the_core(mesh):
    d = default_leak_field(mesh)
    assert d.min() >= 0.0 and d.max() <= 1.0
    assert np.all(d[mesh.boundary_vertices()] == 0.0)
    centre = np.argmin(np.linalg.norm(mesh.X - 0.5, axis=1))
    assert d[centre] == pytest.approx(1.0)
    # Monotone from the surface inwards along a line through the centre.
    line = np.flatnonzero((np.abs(mesh.X[:, 1] - 0.5) < 1e-9) & (np.abs(mesh.X[:, 2] - 0.5) < 1e-9))
    line = line[np.argsort(mesh.X[line, 0])][: len(line) // 2 + 1]
    assert np.all(np.diff(d[line]) >= -1e-12)


def test_user_field_is_validated(mesh):
    with pytest.raises(MeshError, match="NaN"):
        validate_leak_field(np.full(mesh.n, np.nan), mesh.n)
    with pytest.raises(MeshError, match=r"\[0, 1\]"):
        validate_leak_field(np.full(mesh.n, 2.0), mesh.n)
    with pytest.raises(MeshError, match="one value per vertex"):
        validate_leak_field(np.ones(3), mesh.n)
    assert np.all(validate_leak_field(np.full(mesh.n, 0.5), mesh.n) == 0.5)
