"""Tet mesh validation and geometry (core/tetmesh.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import (
    TetMesh,
    boundary_faces,
    compact_unreferenced,
    face_adjacency,
    shape_gradients,
    signed_volumes,
)
from core.validation.scenes import jitter


@pytest.fixture
def box():
    return box_tet_mesh((3, 4, 5), (1.0, 2.0, 3.0))


def test_volumes_are_positive_and_fill_the_box(box):
    X, T = box
    vol = signed_volumes(X, T)
    assert (vol > 0).all()
    # Exact up to round-off: the tets partition the box.
    assert vol.sum() == pytest.approx(6.0, rel=1e-12)


def test_shape_gradients_reproduce_any_affine_field_exactly(box):
    X, T = jitter(*box[:1], 0.05), box[1]
    G = shape_gradients(X, T)
    A = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0], [4.0, 0.0, 1.0]])
    u = X @ A.T + np.array([1.0, 2.0, 3.0])
    F = np.einsum("tai,taj->tij", u[T], G)
    # Linear elements represent affine fields exactly; tolerance is round-off of a 3x3 inverse.
    assert np.abs(F - A).max() < 1e-12


def test_inverted_tets_are_named_in_one_line(box):
    X, T = box
    T = T.copy()
    T[[7, 11]] = T[[7, 11]][:, [1, 0, 2, 3]]
    with pytest.raises(MeshError) as err:
        TetMesh.from_arrays(X, T)
    msg = str(err.value)
    assert "tet 7" in msg and "tet 11" in msg and "inverted" in msg
    assert "\n" not in msg and "re-tetrahedralize" in msg


def test_degenerate_tet_is_rejected(box):
    X, T = box
    X = X.copy()
    T = np.vstack([T, [[0, 1, 2, 2]]])
    with pytest.raises(MeshError, match="repeat a vertex"):
        TetMesh.from_arrays(X, T)
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=float)
    with pytest.raises(MeshError, match="degenerate"):
        TetMesh.from_arrays(flat, np.array([[0, 1, 2, 3]]))


def test_unreferenced_vertices_are_rejected(box):
    X, T = box
    X = np.vstack([X, [[10.0, 10.0, 10.0]]])
    with pytest.raises(MeshError, match="belong to no tet"):
        TetMesh.from_arrays(X, T)


def test_nan_positions_and_bad_indices_are_rejected(box):
    X, T = box
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(MeshError, match="NaN"):
        TetMesh.from_arrays(Xn, T)
    with pytest.raises(MeshError, match="indices"):
        TetMesh.from_arrays(X, T + len(X))


def test_boundary_faces_are_outward_and_complete(box):
    X, T = box
    F = boundary_faces(T)
    # 2 triangles per boundary square: 2 * (3*4 + 4*5 + 3*5) squares * 2
    assert len(F) == 4 * (12 + 20 + 15)
    a, b, c = X[F[:, 0]], X[F[:, 1]], X[F[:, 2]]
    # Divergence theorem: outward normals enclose the volume (exact for a box).
    vol = np.einsum("ij,ij->i", np.cross(b - a, c - a), a + b + c).sum() / 18.0
    assert vol == pytest.approx(6.0, rel=1e-12)


def test_face_adjacency_counts_interior_faces(box):
    _, T = box
    a, b = face_adjacency(T)
    assert (a < b).all() or (a != b).all()
    interior_faces = (4 * len(T) - len(boundary_faces(T))) // 2
    assert len(a) == interior_faces


def test_face_pairing_does_not_depend_on_how_large_the_vertex_ids_are(box):
    """Faces are paired by packed integer keys; ids beyond 21 bits (a lattice's global ids) are renumbered first."""
    _, T = box
    big = T * 977 + (1 << 22)  # sparse, huge ids, same order
    assert all(np.array_equal(x, y) for x, y in zip(face_adjacency(T), face_adjacency(big)))
    assert np.array_equal(boundary_faces(big), boundary_faces(T) * 977 + (1 << 22))


def test_compact_unreferenced_drops_unused_vertices_and_numbers_like_unique(box):
    """Exact integer and row comparisons: compaction copies rows and renumbers, no arithmetic."""
    X, T = box
    rng = np.random.default_rng(3)
    keep = rng.random(len(T)) < 0.3  # a scattered subset of tets leaves many vertices unused
    Xc, Tc, remap = compact_unreferenced(X, T[keep])
    used, inverse = np.unique(T[keep], return_inverse=True)
    assert np.array_equal(Xc, X[used])
    assert np.array_equal(Tc, inverse.reshape(-1, 4)) and Tc.dtype == np.int64
    assert np.array_equal(Xc[Tc], X[T[keep]])  # every element keeps its corners
    assert np.array_equal(np.flatnonzero(remap >= 0), used) and (remap[remap < 0] == -1).all()
    assert np.array_equal(remap[used], np.arange(len(used)))


def test_compact_unreferenced_works_for_triangles_and_keeps_a_full_mesh_unchanged():
    """Triangles (any element width) renumber the same way; nothing to drop leaves X and E as they were."""
    V = np.arange(18.0).reshape(6, 3)
    F = np.array([[5, 3, 1], [1, 3, 4]])
    Vc, Fc, remap = compact_unreferenced(V, F)
    assert np.array_equal(Vc, V[[1, 3, 4, 5]]) and np.array_equal(Fc, [[3, 1, 0], [0, 1, 2]])
    assert np.array_equal(remap, [-1, 0, -1, 1, 2, 3])
    V2, F2, remap2 = compact_unreferenced(Vc, Fc)
    assert np.array_equal(V2, Vc) and np.array_equal(F2, Fc) and np.array_equal(remap2, np.arange(4))
