"""Primitive tet meshes (core/primitives.py)."""

import numpy as np
import pytest

from core.geometry.primitives import CUBE_TETS, bar_tet_mesh, box_tet_mesh
from core.geometry.tetmesh import TetMesh, boundary_faces


def test_freudenthal_cube_is_six_positive_tets_filling_the_cube():
    corners = np.array([[c & 1, (c >> 1) & 1, (c >> 2) & 1] for c in range(8)], dtype=float)
    m = TetMesh.from_arrays(corners, CUBE_TETS)
    assert len(CUBE_TETS) == 6 and m.volumes.sum() == pytest.approx(1.0)


def test_box_is_conforming():
    X, T = box_tet_mesh((2, 3, 4))
    # A conforming mesh has exactly the box's surface as its boundary.
    assert len(boundary_faces(T)) == 4 * (2 * 3 + 3 * 4 + 2 * 4)
    assert len(X) == 3 * 4 * 5 and len(T) == 6 * 24


def test_bar_is_centred_across_its_width():
    X, _ = bar_tet_mesh(4.0, 1.0, 2)
    assert np.allclose(X.min(axis=0), [0, -0.5, -0.5]) and np.allclose(X.max(axis=0), [4, 0.5, 0.5])
    with pytest.raises(ValueError):
        box_tet_mesh((0, 1, 1))
