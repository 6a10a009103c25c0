"""The lattice tetrahedraliser (core/lattice.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.geometry.embedding import barycentric
from core.geometry.lattice import BODY, JOINED, SKIPPED, cover_box, lattice_mesh, lattice_tet_mesh, triangle_cube_pairs
from core.geometry.tetmesh import TetMesh, dihedral_angles
from core.geometry.winding import winding_numbers_exact
from tests.core.geometry.test_tetrahedralize import face_components
from tests.core.surfaces import card, join, signed_volume, suzanne_like, torus, uv_sphere


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
    assert face_components(T) == 1


def test_every_surface_vertex_is_in_its_reported_tet():
    """vertex_tet names a tet holding each vertex: barycentric weights >= 0 up to round-off (1e-12)."""
    V, F = suzanne_like()
    mesh = lattice_mesh(V, F, cell=0.12)
    assert (mesh.vertex_status == BODY).all() and (mesh.vertex_tet >= 0).all()
    bary = barycentric(mesh.X, mesh.T, mesh.vertex_tet, V)
    assert bary.min() > -1e-12
    assert face_components(mesh.T) == 1


def test_a_lone_card_gets_a_one_cell_shell():
    """A flat card has |w| < 0.5 everywhere off it: no winding-number volume; every touched cell is kept whole."""
    V, F = card(12, 12, (0.0, 0.0, 0.0), (1.0, 0.2, 0.3), (-0.1, 1.0, 0.2))  # tilted off the lattice's axes
    cell = 0.08
    mesh = lattice_mesh(V, F, cell)
    assert mesh.inside_tets == 0 and mesh.shell_cubes > 0
    assert len(mesh.T) == 6 * mesh.shell_cubes  # whole cubes only, unsnapped
    vol = TetMesh.from_arrays(mesh.X, mesh.T).volumes.sum()
    area = np.linalg.norm(np.cross([1.0, 0.2, 0.3], [-0.1, 1.0, 0.2]))
    assert vol > area * cell  # at least one cell thick
    assert (mesh.vertex_tet >= 0).all() and face_components(mesh.T) == 1


def test_pieces_near_the_body_join_and_far_ones_are_dropped():
    body, near, far = uv_sphere(24), uv_sphere(10, 0.15, (1.3, 0, 0)), uv_sphere(10, 0.15, (3.0, 0, 0))
    V, F = join(body, near, far)
    cell = 0.12  # the near ball is just over a cell from the sphere, the far one 15 cells
    mesh = lattice_mesh(V, F, cell)
    n0, n1 = len(body[0]), len(near[0])
    assert (mesh.vertex_status[:n0] == BODY).all()
    assert (mesh.vertex_status[n0 : n0 + n1] == JOINED).all()
    assert (mesh.vertex_status[n0 + n1 :] == SKIPPED).all() and (mesh.vertex_tet[n0 + n1 :] == -1).all()
    assert mesh.bridge_cubes > 0 and face_components(mesh.T) == 1
    alone = lattice_mesh(V, F, cell, join_cells=0)  # nothing joins: the near ball is dropped too
    assert (alone.vertex_status[n0:] == SKIPPED).all() and face_components(alone.T) == 1


def test_identical_input_gives_identical_bytes():
    V, F = join(uv_sphere(24), card(8, 3, (0.9, -0.3, 0.0), (1.0, 0.0, 0.0), (0.0, 0.6, 0.0)))
    a, b = lattice_mesh(V, F, 0.1), lattice_mesh(V.copy(), F.copy(), 0.1)
    assert a.X.tobytes() == b.X.tobytes() and a.T.tobytes() == b.T.tobytes()
    assert a.vertex_tet.tobytes() == b.vertex_tet.tobytes()


def test_triangle_cube_pairs_are_exactly_the_touching_cubes():
    """Against dense sampling: every cube a sample lands in is listed, and a listed cube is within round-off."""
    rng = np.random.default_rng(3)
    V = rng.uniform(-1, 1, (60, 3))
    F = rng.integers(0, 60, (20, 3))
    F = F[(F[:, 0] != F[:, 1]) & (F[:, 1] != F[:, 2]) & (F[:, 0] != F[:, 2])]
    lat = cover_box(V.min(axis=0), V.max(axis=0), 0.2)
    tri, cube = triangle_cube_pairs(lat, V, F)
    pairs = set(zip(tri.tolist(), cube.tolist()))
    s = np.linspace(0, 1, 80)
    u, v = (a.ravel() for a in np.meshgrid(s, s))
    keep = u + v <= 1
    u, v = u[keep], v[keep]
    for t in range(len(F)):
        A, B, C = V[F[t]]
        pts = A + u[:, None] * (B - A) + v[:, None] * (C - A)
        ijk = np.floor((pts - lat.origin) / lat.cell).astype(int)
        for c in np.unique(lat.cube_ids(ijk)):
            assert (t, int(c)) in pairs
    # Every listed pair really touches: the triangle comes within the cube (distance 0 up to round-off).
    for t, c in list(pairs)[::7]:
        lo = lat.origin + lat.cube_ijk(np.array([c]))[0] * lat.cell
        A, B, C = V[F[t]]
        pts = A + u[:, None] * (B - A) + v[:, None] * (C - A)
        gap = np.maximum(np.maximum(lo - pts, pts - lo - lat.cell), 0).max(axis=1).min()
        assert gap < 0.02  # the sampling's own spacing, not the test's doubt


def test_inside_tets_follow_the_generalised_winding_number():
    """Tets are kept where |w| > 0.5 at their lattice centroid: checked against summing every triangle."""
    V, F = uv_sphere(24)
    F = F[V[F].mean(axis=1)[:, 2] < 0.6]  # a bowl: open, w fractional near the rim
    mesh = lattice_mesh(V, F, 0.15, snap=False)
    w = winding_numbers_exact(V, F, mesh.X[mesh.T].mean(axis=1))
    # Deep inside is kept; tets kept with |w| <= 0.5 are shells and vertex tets at the surface only.
    assert (np.abs(w) > 0.5).mean() > 0.8


def test_too_fine_a_lattice_is_refused_before_work():
    V, F = uv_sphere(12)
    with pytest.raises(MeshError, match="memory"):
        lattice_tet_mesh(V, F, cell=1e-4)


def test_least_coordinates_in_chunks_are_the_one_shot_numbers(monkeypatch):
    """Issue 41: the snap's containment check evaluated every point against every tet of its star at once
    (1.9 GB at 80k surface points); it runs in chunks now.  Chunks of 7 pairs give exactly (bit for bit) what
    one barycentric evaluation of all pairs gives, stars padded with the tet itself included."""
    import core.geometry.embedding as embedding
    import core.geometry.lattice as lattice

    mesh = lattice_mesh(*uv_sphere(), 0.25)
    rng = np.random.default_rng(5)
    tets = rng.integers(0, len(mesh.T), size=40)
    stars = lattice.tet_stars(mesh.T, tets)
    P = mesh.X[mesh.T[tets]].mean(axis=1) + rng.normal(scale=0.05, size=(40, 3))
    whole = barycentric(mesh.X, mesh.T, stars.ravel(), np.repeat(P, stars.shape[1], axis=0)).min(axis=1)
    monkeypatch.setattr(embedding, "CHUNK_PAIRS", 7)  # point_chunks reads it there
    chunked = lattice.least_coordinates(mesh.X, mesh.T, stars, P)
    np.testing.assert_array_equal(chunked, whole.reshape(stars.shape))
