"""The lattice tetrahedraliser: deterministic, fast, and every surface vertex inside.

It never fails on any input: open, non-manifold, self-intersecting and
multi-part surfaces all have winding numbers.  Space is cut into cubes of
one size, each split into six Freudenthal tets (conforming, every dihedral
angle >= 45 degrees).  Which tets are kept:

* inside: |w| > 0.5 at the tet centroid (generalised winding number,
  computed exactly on the lattice's columns, ``winding.column_winding_numbers``);
* shell: every cube a surface triangle touches where that triangle has no
  inside tet close behind or in front of it and the cube's neighbourhood is
  nearly empty (open fins, cards, parts thinner than about a third of a
  cell): the whole cube, so such parts get at least one layer of cells;
* the tet that contains each surface vertex, so every render vertex is
  inside the volume by construction.

Then the kept tets are made one face-connected body: the largest component
is the body; a piece of a part that is partly in the body, or any piece
within ``join_cells`` cubes, is joined to it through a short path of whole
cubes (repeatedly, so chains join); the rest are dropped and reported
(their surface vertices follow the rig only).  Last, boundary vertices are
pulled onto the surface as far as every tet keeps a quarter of its volume
and every surface vertex stays inside the mesh; flat tets at the surface
that hold no vertex are dropped.  A closed surface keeps its volume within a
percent or two where the lattice is finer than the surface's vertices, and
gains up to about 5% where the vertices are denser (the tets that hold them
bulge a little past convex parts).  Everything is integer lattice
arithmetic, exact predicates and stable sorts: identical input gives
bit-identical output.  Pure numpy/scipy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.ndimage import uniform_filter
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from ..errors import MeshError
from .embedding import barycentric, point_chunks
from .primitives import CUBE_TETS
from .surface import closest_points_on_triangles, closest_surface_points, face_parts, part_volumes, triangle_areas
from .tetmesh import boundary_faces, compact_unreferenced, face_adjacency, signed_volumes
from .winding import column_winding_numbers

# A snapped tet must keep at least this fraction of its lattice volume.
MIN_VOLUME_FRACTION = 0.25
SNAP_ROUNDS = 8  # shrinkings of a vertex's move before it stays on the lattice
SNAP_SHRINK = 0.5
# Boundary vertices this close to the surface (in cells) snap: a tet holding a surface vertex reaches sqrt(3).
SNAP_REACH = 2.0
SNAP_PASSES = 3  # snap, drop flat tets, snap what they exposed, ...
# About 1 GB of lattice bookkeeping.
MAX_CELLS = 3_000_000
PAIR_CHUNK = 1_000_000  # (triangle, cube) candidates tested per numpy pass
# Loose pieces at most this many cubes away (Chebyshev distance between
# cubes: 1 = touching, 2 = one empty cube between) are joined to the body.
JOIN_CELLS = 2
# The lattice is shifted off the bounding box by an irrational fraction of a
# cell per axis, so surfaces aligned with the box (a cube, a symmetric
# character) do not fall onto lattice planes or tet centroids.
ORIGIN_SHIFT = np.array([np.sqrt(2.0) - 1.0, np.sqrt(3.0) - 1.0, np.sqrt(5.0) - 2.0]) / 7.0
# An open part enclosing less than this times its area times the cell is a card: shelled, not filled.
THIN_OPEN = 0.25
# Below this fraction of inside tets in its 3x3x3 block, an uncovered cube gets a shell.
SHELL_FRACTION = 0.15
# Depths (in cells) on either side of a triangle probed for inside tets.
COVER_DEPTHS = (0.25, 0.5, 0.75)
# Surface vertices may end this far outside the mesh (barycentric): round-off only.
CONTAIN_TOL = 1e-12

CORNERS = np.array([[c & 1, (c >> 1) & 1, (c >> 2) & 1] for c in range(8)], dtype=np.int64)
# Tet centroids in quarter cells from the cube's corner: permutations of (1, 2, 3).
CENTROIDS_Q = CORNERS[CUBE_TETS].sum(axis=1)

BODY, JOINED, SKIPPED = 0, 1, 2


@dataclass(frozen=True)
class Lattice:
    """A block of dims (3,) cubes of edge ``cell`` starting at ``origin`` (3,).

    Cube (i, j, k) has id (i ny + j) nz + k; its tets are 6 id .. 6 id + 5
    (CUBE_TETS order); lattice vertex (i, j, k) has id (i (ny+1) + j) (nz+1) + k.
    """

    origin: np.ndarray
    cell: float
    dims: np.ndarray

    @property
    def cubes(self) -> int:
        return int(np.prod(self.dims))

    def cube_ids(self, ijk: np.ndarray) -> np.ndarray:
        """Ids (k,) of cubes at integer coordinates ijk (k, 3)."""
        return (ijk[:, 0] * self.dims[1] + ijk[:, 1]) * self.dims[2] + ijk[:, 2]

    def cube_ijk(self, ids: np.ndarray) -> np.ndarray:
        """Integer coordinates (k, 3) of cubes ``ids`` (k,)."""
        ny, nz = int(self.dims[1]), int(self.dims[2])
        return np.stack([ids // (ny * nz), (ids // nz) % ny, ids % nz], axis=1)

    def vertex_ids(self, ijk: np.ndarray) -> np.ndarray:
        """Ids of lattice vertices at integer coordinates ijk (..., 3)."""
        return (ijk[..., 0] * (self.dims[1] + 1) + ijk[..., 1]) * (self.dims[2] + 1) + ijk[..., 2]

    def vertex_positions(self, ids: np.ndarray) -> np.ndarray:
        """Positions (k, 3) of lattice vertices ``ids`` (k,)."""
        ny, nz = int(self.dims[1]) + 1, int(self.dims[2]) + 1
        ijk = np.stack([ids // (ny * nz), (ids // nz) % ny, ids % nz], axis=1)
        return self.origin + ijk * self.cell

    def tet_vertices(self, tets: np.ndarray) -> np.ndarray:
        """Lattice vertex ids (t, 4) of tets ``tets`` (t,), positively oriented."""
        ijk = self.cube_ijk(tets // 6)
        return self.vertex_ids(ijk[:, None, :] + CORNERS[CUBE_TETS[tets % 6]])

    def locate(self, P: np.ndarray) -> np.ndarray:
        """Id (k,) of the tet containing each point P (k, 3) (clamped into the block).

        In a cube with local coordinates f, the Freudenthal tet that holds f
        is the one whose path from corner 0 to corner 7 steps along the axes
        in order of decreasing f.
        """
        f = (P - self.origin) / self.cell
        ijk = np.clip(np.floor(f).astype(np.int64), 0, self.dims - 1)
        local = f - ijk
        o = np.argsort(-local, axis=1, kind="stable")
        perm = 2 * o[:, 0] + (o[:, 1] > o[:, 2])  # index in itertools.permutations order
        return 6 * self.cube_ids(ijk) + perm


def cover_box(lo: np.ndarray, hi: np.ndarray, cell: float) -> Lattice:
    """The lattice of cubes of edge ``cell`` covering [lo, hi] (3,) with at least one cube to spare."""
    origin = lo - cell * (1.0 + ORIGIN_SHIFT)
    dims = np.maximum(1, np.ceil((hi + cell - origin) / cell).astype(np.int64))
    return Lattice(origin=origin, cell=float(cell), dims=dims)


def triangle_cube_pairs(lat: Lattice, V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (triangle (p,), cube (p,)) pair where the triangle meets the closed cube.

    Separating-axis test (Akenine-Moller): the cube's three axes (the
    triangle's bounding box gives those), the triangle's normal and the nine
    cross products of cube axes with triangle edges.  Cubes are enlarged by a
    hair, so touching counts.
    """
    tri = V[F]
    lo = np.clip(np.floor((tri.min(axis=1) - lat.origin) / lat.cell).astype(np.int64), 0, lat.dims - 1)
    hi = np.clip(np.floor((tri.max(axis=1) - lat.origin) / lat.cell).astype(np.int64), 0, lat.dims - 1)
    n = hi - lo + 1
    count = n.prod(axis=1)
    # Chunks of triangles with at most PAIR_CHUNK candidate cubes (one huge triangle may exceed it alone).
    start = np.searchsorted(np.cumsum(count), np.arange(1, int(count.sum()) // PAIR_CHUNK + 1) * PAIR_CHUNK)
    bounds = np.unique(np.r_[0, start, len(F)])
    parts = [_sat_pairs(lat, tri, lo, n, np.arange(a, b)) for a, b in itertools.pairwise(bounds)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _sat_pairs(
    lat: Lattice, tri: np.ndarray, lo: np.ndarray, n: np.ndarray, which: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """triangle_cube_pairs for triangles ``which`` (w,) of tri (f, 3, 3), boxes from cube lo (f, 3), n (f, 3) wide."""
    count = n[which].prod(axis=1)
    t = np.repeat(which, count)
    k = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    nt = n[t]
    ijk = lo[t] + np.stack([k // (nt[:, 1] * nt[:, 2]), (k // nt[:, 2]) % nt[:, 1], k % nt[:, 2]], axis=1)
    centre = lat.origin + (ijk + 0.5) * lat.cell
    half = 0.5 * lat.cell * (1.0 + 1e-9)
    v = tri[t] - centre[:, None, :]  # (p, 3, 3)
    f = v[:, [1, 2, 0]] - v  # edges
    normal = np.cross(f[:, 0], f[:, 1])
    keep = np.abs(np.einsum("pi,pi->p", normal, v[:, 0])) <= half * np.abs(normal).sum(axis=1)
    for axis in range(3):
        for j in range(3):
            # a = e_axis x f_j, written out per axis.
            a = np.zeros((len(t), 3))
            a[:, (axis + 1) % 3] = -f[:, j, (axis + 2) % 3]
            a[:, (axis + 2) % 3] = f[:, j, (axis + 1) % 3]
            p = np.einsum("pki,pi->pk", v, a)
            r = half * np.abs(a).sum(axis=1)
            keep &= (p.min(axis=1) <= r) & (p.max(axis=1) >= -r)
    return t[keep], lat.cube_ids(ijk[keep])


def volume_faces(V: np.ndarray, F: np.ndarray, cell: float) -> np.ndarray:
    """(f,) True for the faces of parts that enclose volume: closed parts, and open ones not thinner than a cell.

    An open part whose capped volume is under THIN_OPEN times its area times
    the cell (a card, a fin, a hair strip: under about half a cell thick)
    gets a shell instead; left in, each would add caps to the winding number
    (the cost grows with their count) and only ever give slivers of
    |w| > 0.5 on its concave side.
    """
    part = face_parts(F, len(V))
    volume, holed = part_volumes(V, F, part)
    area = np.bincount(part, weights=triangle_areas(V, F), minlength=len(volume))
    thin = holed & (volume < THIN_OPEN * area * cell)
    return ~thin[part]


def inside_tets(lat: Lattice, V: np.ndarray, F: np.ndarray, touched: np.ndarray) -> np.ndarray:
    """(6 cubes,) True where |w| > 0.5 at the tet centroid.

    A cube no triangle touches is judged once, at its centre, for its six
    tets: w varies smoothly there (it only jumps across the surface).  All
    query points lie on lattice columns a quarter cell apart, where the
    winding number is an exact crossing count plus the caps' correction.
    """
    if not len(F):
        return np.zeros(6 * lat.cubes, dtype=bool)
    ids = np.arange(lat.cubes)
    ijk4 = 4 * lat.cube_ijk(ids)
    q_touched = (ijk4[touched][:, None, :] + CENTROIDS_Q).reshape(-1, 3)
    q_free = ijk4[~touched] + 2
    q = np.vstack([q_touched, q_free])
    step = lat.cell / 4.0
    w = column_winding_numbers(V, F, lat.origin, step, q[:, :2], lat.origin[2] + q[:, 2] * step)
    inside = np.abs(w) > 0.5
    out = np.empty((lat.cubes, 6), dtype=bool)
    out[touched] = inside[: len(q_touched)].reshape(-1, 6)
    out[~touched] = inside[len(q_touched) :, None]
    return out.ravel()


def uncovered_pairs(
    lat: Lattice, V: np.ndarray, F: np.ndarray, tri: np.ndarray, cube: np.ndarray, inside: np.ndarray
) -> np.ndarray:
    """(p,) True where triangle tri[i] crosses cube cube[i] with no inside tet close behind or in front of it.

    Probes the points COVER_DEPTHS cells off the triangle along its normal,
    on both sides, from the triangle's point nearest the cube centre.  A
    closed part at least a cell thick has inside tets on one side; an open
    fin or card has none on either, and neither has a part thinner than
    about a quarter cell.
    """
    A, B, C = (V[F[tri, k]] for k in range(3))
    centre = lat.origin + (lat.cube_ijk(cube) + 0.5) * lat.cell
    bary = closest_points_on_triangles(centre, A, B, C)
    p = bary[:, :1] * A + bary[:, 1:2] * B + bary[:, 2:] * C
    n = np.cross(B - A, C - A)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    covered = np.zeros(len(tri), dtype=bool)
    for depth in COVER_DEPTHS:
        for side in (-1.0, 1.0):
            covered |= inside[lat.locate(p + (side * depth * lat.cell) * n)]
    return ~covered


def shell_cubes(lat: Lattice, candidates: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """The cubes (sorted ids) among ``candidates`` whose 3x3x3 block is less than SHELL_FRACTION inside.

    A sharp edge of a thick part has uncovered triangles too (the probes run
    along the other face), but a quarter of its block is inside; an open
    fin or a part thinner than about a third of a cell has almost nothing.
    """
    counts = inside.reshape(-1, 6).sum(axis=1).reshape(tuple(int(d) for d in lat.dims)).astype(np.float64)
    block = uniform_filter(counts, size=3, mode="constant").ravel() / 6.0  # mean tets per cube / 6
    candidates = np.unique(candidates)
    return candidates[block[candidates] < SHELL_FRACTION]


def cube_path(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer cube coordinates (k, 3) of a face-connected path from cube a (3,) to cube b (3,), both included.

    Steps along x, then y, then z.
    """
    path = [a.copy()]
    cur = a.copy()
    for axis in range(3):
        while cur[axis] != b[axis]:
            cur[axis] += 1 if b[axis] > cur[axis] else -1
            path.append(cur.copy())
    return np.array(path, dtype=np.int64)


def tet_components(lat: Lattice, tets: np.ndarray) -> np.ndarray:
    """Face-connected component label (t,) of lattice tets ``tets`` (t,)."""
    a, b = face_adjacency(lat.tet_vertices(tets))
    graph = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(len(tets), len(tets)))
    return connected_components(graph, directed=False)[1]


@dataclass
class LatticeMesh:
    """X (n, 3), T (t, 4) positively oriented; how the surface vertices sit in it.

    vertex_tet: (k,) the tet of T holding each surface vertex (-1 when its
    piece was dropped); vertex_status: (k,) BODY, JOINED (its piece was joined
    to the body through bridging cubes) or SKIPPED (its piece was too far and
    was dropped).  shell_cubes: cubes added around open or thin surfaces;
    bridge_cubes: cubes added to join pieces; inside_tets: tets kept by the
    winding number alone.
    """

    X: np.ndarray
    T: np.ndarray
    vertex_tet: np.ndarray
    vertex_status: np.ndarray
    cell: float
    shell_cubes: int = 0
    bridge_cubes: int = 0
    inside_tets: int = 0


def lattice_mesh(
    V: np.ndarray, F: np.ndarray, cell: float, join_cells: int = JOIN_CELLS, snap: bool = True
) -> LatticeMesh:
    """Tet mesh of the volume of surface (V (k, 3), F (f, 3)) at lattice spacing ``cell``, one connected body.

    join_cells: loose pieces this many cubes or fewer from the body are
    joined to it (0: none are; they are dropped, their vertices SKIPPED).
    """
    V = np.asarray(V, dtype=np.float64)
    F = np.asarray(F, dtype=np.int64)
    used = np.zeros(len(V), dtype=bool)
    used[F.ravel()] = True
    lat = cover_box(V[used].min(axis=0), V[used].max(axis=0), cell)
    if float(lat.cubes) > MAX_CELLS:
        raise MeshError(f"a lattice of {lat.cubes:.3g} cells would not fit in memory; lower the tet resolution")
    kept, inside, shell = kept_tets(lat, V, F, used)
    vertex_tet = lat.locate(V)
    tets, status, bridges = one_body(lat, kept, F, used, vertex_tet, join_cells)
    vt = np.full(len(V), -1, dtype=np.int64)
    vt[used] = index_in(tets, vertex_tet[used])

    vids, T = np.unique(lat.tet_vertices(tets), return_inverse=True)
    T = T.reshape(-1, 4)
    X = lat.vertex_positions(vids)
    if snap:
        # Shells and bridges keep their thickness: their corners stay on the lattice.
        fixed_cubes = lat.cube_ijk(np.concatenate([shell, bridges]))
        fixed = np.isin(vids, lat.vertex_ids(fixed_cubes[:, None, :] + CORNERS))
        held = vt >= 0
        X, keep = snap_to_surface(X, T, V, F, ~fixed, V[held], vt[held], cell)
        if not keep.all():
            vt[held] = index_in(np.flatnonzero(keep), vt[held])
            X, T, _ = compact_unreferenced(X, T[keep])
        vt[held] = holding_tets(X, T, V[held], vt[held])
    return LatticeMesh(
        X=X,
        T=T,
        vertex_tet=vt,
        vertex_status=status,
        cell=float(cell),
        shell_cubes=len(shell),
        bridge_cubes=len(np.setdiff1d(bridges, shell)),
        inside_tets=int(inside),
    )


def kept_tets(lat: Lattice, V: np.ndarray, F: np.ndarray, used: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Which lattice tets (6 cubes,) hold volume: inside ones, shells, and each used vertex's (k,) tet.

    Returns the mask, how many were inside by winding number, and the shell cube ids.
    """
    tri, cube = triangle_cube_pairs(lat, V, F)
    touched = np.zeros(lat.cubes, dtype=bool)
    touched[cube] = True
    inside = inside_tets(lat, V, F[volume_faces(V, F, lat.cell)], touched)
    kept = inside.copy()
    shell = shell_cubes(lat, cube[uncovered_pairs(lat, V, F, tri, cube, inside)], inside)
    kept.reshape(-1, 6)[shell] = True
    kept[lat.locate(V[used])] = True
    return kept, int(inside.sum()), shell


def one_body(
    lat: Lattice, kept: np.ndarray, F: np.ndarray, used: np.ndarray, vertex_tet: np.ndarray, join_cells: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kept tets made one face-connected body: (tet ids (t,), vertex status (k,), bridge cube ids (c,)).

    The largest component is the body.  A piece holding vertices of a part
    that is partly in the body (a vertex's tet touching it only along an
    edge) is always joined; a piece of loose parts is joined when within
    ``join_cells`` cubes (``join_components``); the rest are dropped and
    their vertices are SKIPPED.  Vertices of joined loose parts are JOINED.
    """
    tets = np.flatnonzero(kept)
    comp = tet_components(lat, tets)
    body = int(np.argmax(np.bincount(comp)))
    comp_of_vertex = np.full(len(vertex_tet), -1, dtype=np.int64)
    comp_of_vertex[used] = comp[index_in(tets, vertex_tet[used])]
    part = np.zeros(len(vertex_tet), dtype=np.int64)
    part[F.ravel()] = np.repeat(face_parts(F, len(vertex_tet)), 3)
    body_parts = np.unique(part[used & (comp_of_vertex == body)])
    attached = np.unique(comp_of_vertex[used & np.isin(part, body_parts)])
    joined, bridges = join_components(lat, tets, comp, body, join_cells, attached)
    kept = kept.copy()
    kept.reshape(-1, 6)[bridges] = True
    kept[tets[~((comp == body) | np.isin(comp, joined))]] = False
    tets = np.flatnonzero(kept)
    final = tet_components(lat, tets)
    if final.max() > 0:  # one component by construction; a safety net so no island can exist
        tets = tets[final == np.argmax(np.bincount(final))]
    status = np.full(len(vertex_tet), BODY, dtype=np.int8)
    status[np.isin(comp_of_vertex, np.setdiff1d(joined, attached))] = JOINED
    status[used & (index_in(tets, vertex_tet) < 0)] = SKIPPED
    return tets, status, bridges


def index_in(sorted_ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position (k,) of each value in the sorted array ``sorted_ids``, -1 where absent."""
    pos = np.searchsorted(sorted_ids, values)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == values, pos, -1)


def join_components(
    lat: Lattice, tets: np.ndarray, comp: np.ndarray, body: int, join_cells: int, attached: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Components joined to the body (j,) and the cube ids (c,) of the whole cubes that join them.

    Rounds: every component within ``join_cells`` (Chebyshev distance
    between cube coordinates) of the body as it stands, or within JOIN_CELLS
    if it is ``attached`` (component ids), is joined along a straight cube
    path from its nearest cube to the body's; joined pieces are body for the
    next round, so chains of near pieces join too.
    """
    cubes = tets // 6
    pair = np.unique(comp.astype(np.int64) * lat.cubes + cubes)  # (component, cube), sorted
    key = np.stack([pair // lat.cubes, pair % lat.cubes], axis=1)
    body_cubes = key[key[:, 0] == body, 1]
    rest = key[key[:, 0] != body]
    joined: list[int] = []
    bridges: list[np.ndarray] = []
    while len(rest):
        dist, idx = cKDTree(lat.cube_ijk(body_cubes)).query(lat.cube_ijk(rest[:, 1]), p=np.inf)
        # Nearest cube of each component (first in cube order on ties).
        order = np.lexsort((dist, rest[:, 0]))
        first = order[np.r_[True, rest[order[1:], 0] != rest[order[:-1], 0]]]
        reach = np.where(np.isin(rest[first, 0], attached), max(join_cells, JOIN_CELLS), join_cells)
        near = first[dist[first] <= reach]
        if not len(near):
            break
        for i in near:
            a = lat.cube_ijk(rest[i : i + 1, 1])[0]
            b = lat.cube_ijk(body_cubes[idx[i] : idx[i] + 1])[0]
            bridges.append(lat.cube_ids(cube_path(a, b)))
        comps = rest[near, 0]
        joined.extend(int(c) for c in comps)
        moving = np.isin(rest[:, 0], comps)
        body_cubes = np.unique(np.concatenate([body_cubes, rest[moving, 1], *bridges[-len(near) :]]))
        rest = rest[~moving]
    all_bridges = np.unique(np.concatenate(bridges)) if bridges else np.zeros(0, dtype=np.int64)
    return np.array(sorted(joined), dtype=np.int64), all_bridges


def snap_to_surface(
    X: np.ndarray,
    T: np.ndarray,
    V: np.ndarray,
    F: np.ndarray,
    movable: np.ndarray,
    P: np.ndarray,
    P_tet: np.ndarray,
    cell: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Boundary vertices of lattice tet mesh (X (n, 3), T (t, 4)) moved toward their closest surface points.

    Returns the moved X and which tets are kept (t,).  Points P (k, 3) (the
    surface vertices) stay inside their tets P_tet (k,) and every tet keeps
    MIN_VOLUME_FRACTION of its lattice volume (``_constrained_move``).  A
    tet whose four corners would all land on the surface is flat: unless it
    holds a point of P, it is dropped, which exposes faces whose corners are
    on the surface already, and the vertices it exposes are snapped in the
    next pass (SNAP_PASSES).  If dropping would split the mesh, nothing is
    dropped.  Only ``movable`` vertices move, and only those within a cell
    of the surface (not the mouth of a hole).
    """
    vol0 = cell**3 / 6.0
    kept = np.ones(len(T), dtype=bool)
    holds = np.zeros(len(T), dtype=bool)
    holds[P_tet] = True
    target = X.copy()
    tried = ~movable
    on_surface = np.zeros(len(X), dtype=bool)
    for _ in range(SNAP_PASSES):
        bnd = np.unique(boundary_faces(T[kept]))
        bnd = bnd[~tried[bnd]]
        if not len(bnd):
            break
        tried[bnd] = True
        p, _, _ = closest_surface_points(V, F, X[bnd])
        near = np.linalg.norm(p - X[bnd], axis=1) <= SNAP_REACH * cell
        target[bnd[near]] = p[near]
        on_surface[bnd[near]] = True
        idx = np.flatnonzero(kept & ~holds)
        vol = signed_volumes(target, T[idx])
        flat = (np.abs(vol) < MIN_VOLUME_FRACTION * vol0) & on_surface[T[idx]].all(axis=1)
        kept[idx[flat]] = False
    kept = _restore_connectivity(T, kept)
    moved = np.flatnonzero(on_surface)
    remap = np.cumsum(kept) - 1
    Xs = _constrained_move(X, T[kept], moved, target[moved] - X[moved], vol0, P, remap[P_tet])
    return Xs, kept


def _restore_connectivity(T: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """``kept`` (t,) with dropped tets put back where dropping split the mesh into pieces.

    Dropped tets that share a face with a piece other than the largest come
    back, a few rounds; if the mesh is still split, every dropped tet does.
    """
    a_all, b_all = face_adjacency(T)
    for _ in range(4):
        idx = np.flatnonzero(kept)
        pos = np.full(len(T), -1, dtype=np.int64)
        pos[idx] = np.arange(len(idx))
        both = kept[a_all] & kept[b_all]
        a, b = pos[a_all[both]], pos[b_all[both]]
        n = len(idx)
        ncomp, label = connected_components(sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
        if ncomp == 1:
            return kept
        minor = np.zeros(len(T), dtype=bool)
        minor[idx] = label != np.argmax(np.bincount(label))
        back = (minor[a_all] & ~kept[b_all]) | (minor[b_all] & ~kept[a_all])
        kept[np.where(minor[a_all[back]], b_all[back], a_all[back])] = True
    kept[:] = True
    return kept


def holding_tets(X: np.ndarray, T: np.ndarray, P: np.ndarray, P_tet: np.ndarray) -> np.ndarray:
    """The tet (k,) that holds each point P (k, 3): P_tet (k,) if it does, else the first around it that does.

    After snapping a point may have passed from its tet into one around it
    (``_constrained_move`` allows that); P_tet where none holds it.
    """
    out = P_tet.copy()
    idx = np.flatnonzero(barycentric(X, T, P_tet, P).min(axis=1) < -CONTAIN_TOL)
    if len(idx):
        c = tet_stars(T, P_tet[idx])
        found = least_coordinates(X, T, c, P[idx]) >= -CONTAIN_TOL
        first = np.argmax(found, axis=1)
        ok = found.any(axis=1)
        out[idx[ok]] = c[ok, first[ok]]
    return out


def least_coordinates(X: np.ndarray, T: np.ndarray, tets: np.ndarray, P: np.ndarray) -> np.ndarray:
    """(q, s) the smallest barycentric coordinate of each point P[i] (P: (q, 3)) in each tet tets[i, j] (q, s).

    Evaluated in :func:`point_chunks`: a surface of 80k points with stars of ~100 tets is 8M pairs, whose
    temporaries at once took 1.9 GB (issue 41); chunked, the same numbers in bounded memory.
    """
    q, s = tets.shape
    out = np.empty((q, s))
    for a, b in point_chunks(q, s):  # chunks of points, not a loop over them
        out[a:b] = barycentric(X, T, tets[a:b].ravel(), np.repeat(P[a:b], s, axis=0)).min(axis=1).reshape(b - a, s)
    return out


def tet_stars(T: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """The tets (k, m) sharing a vertex with each of ``tets`` (k,) in mesh T (t, 4), padded with the tet itself."""
    inc = sp.csr_matrix(
        (np.ones(T.size), (T.ravel(), np.repeat(np.arange(len(T)), 4))), shape=(int(T.max()) + 1, len(T))
    )
    star = (
        sp.csr_matrix(
            (np.ones(4 * len(tets)), (np.repeat(np.arange(len(tets)), 4), T[tets].ravel())),
            shape=(len(tets), inc.shape[0]),
        )
        @ inc
    ).tocsr()
    star.sort_indices()
    counts = np.diff(star.indptr)
    width = int(counts.max()) if len(counts) else 1
    out = np.repeat(tets[:, None], width, axis=1)
    rows = np.repeat(np.arange(len(tets)), counts)
    cols = np.arange(len(star.indices)) - np.repeat(star.indptr[:-1], counts)
    out[rows, cols] = star.indices
    return out


def _constrained_move(
    X: np.ndarray,
    T: np.ndarray,
    verts: np.ndarray,
    move: np.ndarray,
    vol0: float,
    P: np.ndarray,
    P_tet: np.ndarray,
) -> np.ndarray:
    """X with vertices ``verts`` (m,) moved by ``move`` (m, 3), each shrunk as needed to keep the mesh valid.

    Valid: every tet keeps MIN_VOLUME_FRACTION of the lattice volume
    ``vol0``, and every point P (k, 3) stays inside its tet P_tet (k,) or a
    tet around it.  The moves of an offending tet's vertices shrink by
    SNAP_SHRINK per round and are cancelled after SNAP_ROUNDS rounds, so the
    result is never worse than X (the lattice, where both hold).
    """
    where = np.full(len(X), -1, dtype=np.int64)
    where[verts] = np.arange(len(verts))
    stars = tet_stars(T, P_tet) if len(P) else np.zeros((0, 1), dtype=np.int64)

    def at(step: np.ndarray) -> np.ndarray:
        Y = X.copy()
        Y[verts] = X[verts] + step[:, None] * move
        return Y

    def offenders(step: np.ndarray) -> np.ndarray:
        """Indices into verts of the moving vertices of every invalid tet."""
        Y = at(step)
        bad = signed_volumes(Y, T) < MIN_VOLUME_FRACTION * vol0
        if len(P):
            idx = np.flatnonzero(barycentric(Y, T, P_tet, P).min(axis=1) < -CONTAIN_TOL)
            if len(idx):
                lam = least_coordinates(Y, T, stars[idx], P[idx])
                bad[P_tet[idx[(lam < -CONTAIN_TOL).all(axis=1)]]] = True
        off = where[T[bad].ravel()]
        return np.unique(off[off >= 0])

    step = np.ones(len(verts))
    for round_ in range(4 * SNAP_ROUNDS):
        off = offenders(step)
        if not len(off):
            return at(step)
        step[off] = SNAP_SHRINK * step[off] if round_ < SNAP_ROUNDS else 0.0
    return X


def lattice_tet_mesh(V: np.ndarray, F: np.ndarray, cell: float, snap: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Tets (X (n, 3), T (t, 4)) filling surface (V, F) at lattice spacing ``cell``: :func:`lattice_mesh`'s arrays."""
    mesh = lattice_mesh(V, F, cell, snap=snap)
    return mesh.X, mesh.T
