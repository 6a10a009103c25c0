"""Cleaning and checking a character's rest surface before tetrahedralisation.

Real characters arrive with duplicate vertices, zero-area faces, flipped
normals, separate parts (eyes, teeth, buttons) and holes.  Cleaning welds
what is coincident and drops what is degenerate; orientation and holes are
left to the winding-number machinery, which does not need them fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..errors import MeshError
from .tetmesh import compact_unreferenced

# Relative to the bounding-box diagonal: points closer than this are one point.
WELD_RTOL = 1e-9
# A surface thinner than this fraction of its extent is flat (a plane, a card).
FLAT_RTOL = 1e-6


def validate_surface(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Check a triangle surface: V (n, 3) finite, F (f, 3) valid, not empty, not flat.

    Returns float64 V and int64 F; raises a one-line MeshError otherwise.
    """
    V = np.asarray(V, dtype=np.float64)
    F = np.asarray(F)
    if F.size == 0 or V.size == 0:
        raise MeshError("the mesh is empty; it needs faces that enclose a volume")
    if V.ndim != 2 or V.shape[1] != 3 or F.ndim != 2 or F.shape[1] != 3:
        raise MeshError(f"expected vertices (n, 3) and triangles (f, 3), got {V.shape} and {F.shape}")
    if not np.isfinite(V).all():
        raise MeshError("the mesh has NaN or infinite vertex positions; fix them before simulating")
    F = F.astype(np.int64)
    if F.min() < 0 or F.max() >= len(V):
        raise MeshError("triangle indices point outside the vertex list; the mesh is corrupt")
    used = V[np.unique(F)]
    extent = float(np.linalg.norm(used.max(axis=0) - used.min(axis=0)))
    if extent == 0.0:
        raise MeshError("all vertices are at one point; the mesh has no size")
    centred = used - used.mean(axis=0)
    sv = np.linalg.svd(centred[:: max(1, len(centred) // 20000)], compute_uv=False)
    if sv[-1] <= FLAT_RTOL * sv[0]:
        raise MeshError("the mesh is flat (a plane); give it thickness with a Solidify modifier or pick a closed mesh")
    return V, F


@dataclass(frozen=True)
class CleanSurface:
    """V (n, 3), F (f, 3) after welding and dropping degenerate faces.

    vertex_map: (n_in,) index of each input vertex in V; part: (f,) connected
    part of each face (parts share no vertex).
    """

    V: np.ndarray
    F: np.ndarray
    vertex_map: np.ndarray
    part: np.ndarray

    @property
    def parts(self) -> int:
        return int(self.part.max()) + 1 if len(self.part) else 0


def triangle_areas(V: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Area of every triangle: (f,)."""
    return 0.5 * np.linalg.norm(np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), axis=1)


def face_parts(F: np.ndarray, n: int) -> np.ndarray:
    """Connected part label (f,) of each face (faces sharing a vertex are connected)."""
    f = len(F)
    rows = np.repeat(np.arange(f), 3)
    inc = sp.csr_matrix((np.ones(3 * f), (rows, F.ravel())), shape=(f, n))
    _, labels = connected_components(inc @ inc.T, directed=False)
    return labels


def clean_surface(V: np.ndarray, F: np.ndarray) -> CleanSurface:
    """Weld coincident vertices, drop degenerate faces and unreferenced vertices, label parts."""
    V, F = validate_surface(V, F)
    diag = float(np.linalg.norm(V.max(axis=0) - V.min(axis=0)))
    key = np.round((V - V.min(axis=0)) / (WELD_RTOL * diag)).astype(np.int64)
    _, first, weld = np.unique(key, axis=0, return_index=True, return_inverse=True)
    weld = weld.ravel()
    Vw = V[first]
    Fw = weld[F]
    distinct = (Fw[:, 0] != Fw[:, 1]) & (Fw[:, 1] != Fw[:, 2]) & (Fw[:, 0] != Fw[:, 2])
    Fw = Fw[distinct]
    Fw = Fw[triangle_areas(Vw, Fw) > (WELD_RTOL * diag) ** 2]
    if len(Fw) == 0:
        raise MeshError("every face of the mesh is degenerate (zero area); the mesh has no surface")
    Vc, Fc, remap = compact_unreferenced(Vw, Fw)
    vmap = remap[weld]
    return CleanSurface(V=Vc, F=Fc, vertex_map=vmap, part=face_parts(Fc, len(Vc)))


def boundary_chain(F: np.ndarray) -> np.ndarray:
    """Directed edges (e, 2) where the surface is open, one row per unit of multiplicity.

    Every face (a, b, c) contributes a->b, b->c, c->a; an edge used once in
    each direction cancels.  What is left is the boundary of the surface as an
    oriented chain: the rims of holes, fins and cards, plus the seams of
    flipped or non-manifold patches (an edge used twice the same way is a rim
    of multiplicity two).  It is empty for a closed, consistently oriented
    surface, and it is always a union of closed loops.
    """
    d = np.asarray(F, dtype=np.int64)[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    lo, hi = d.min(axis=1), d.max(axis=1)
    sign = np.where(d[:, 0] < d[:, 1], 1, -1)
    n = int(d.max()) + 1 if len(d) else 1
    key, inv = np.unique(lo * n + hi, return_inverse=True)  # one integer per undirected edge
    net = np.bincount(inv.ravel(), weights=sign, minlength=len(key)).astype(np.int64)
    open_ = net != 0
    key, net = key[open_], net[open_]
    pairs = np.stack([key // n, key % n], axis=1)
    edges = np.where((net > 0)[:, None], pairs, pairs[:, ::-1])
    return np.repeat(edges, np.abs(net), axis=0)


def closing_caps(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangles that close every hole of surface (V (n, 3), F (f, 3)): (Vc (n + c, 3), caps (g, 3)).

    Each connected loop system of the boundary chain gets a fan from the mean
    of its vertices (appended to V), with triangle (b, a, centre) for each
    boundary edge a->b.  The spokes of a loop cancel, so F plus the caps has
    no boundary: its winding number is an integer everywhere off the surface,
    and the winding number of F is that integer minus the caps' own.
    """
    edges = boundary_chain(F)
    if len(edges) == 0:
        return np.asarray(V, dtype=np.float64), np.zeros((0, 3), dtype=np.int64)
    verts, local = np.unique(edges, return_inverse=True)
    local = local.reshape(-1, 2)
    graph = sp.coo_matrix((np.ones(len(local)), (local[:, 0], local[:, 1])), shape=(len(verts), len(verts)))
    ncomp, comp = connected_components(graph, directed=False)
    counts = np.bincount(comp, minlength=ncomp)
    sums = np.stack([np.bincount(comp, weights=V[verts, i], minlength=ncomp) for i in range(3)], axis=1)
    centres = sums / counts[:, None]
    Vc = np.vstack([np.asarray(V, dtype=np.float64), centres])
    caps = np.stack([edges[:, 1], edges[:, 0], len(V) + comp[local[:, 0]]], axis=1)
    return Vc, caps


def part_volumes(V: np.ndarray, F: np.ndarray, part: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Volume each surface part encloses once its holes are capped, and whether it had holes: (p,), (p,).

    Volumes are |signed volume| per part (divergence theorem over the part
    and its caps), so a flipped part counts fully and a single-sided card
    encloses nothing.  V (n, 3), F (f, 3), part (f,) labels 0..p-1.
    """
    Vc, caps = closing_caps(V, F)
    n_parts = int(part.max()) + 1 if len(part) else 0
    vertex_part = np.zeros(len(Vc), dtype=np.int64)
    vertex_part[F.ravel()] = np.repeat(part, 3)
    tri = np.vstack([F, caps])
    label = np.concatenate([part, vertex_part[caps[:, 0]]])
    a, b, c = Vc[tri[:, 0]], Vc[tri[:, 1]], Vc[tri[:, 2]]
    vol = np.einsum("ij,ij->i", np.cross(a, b), c) / 6.0
    volumes = np.abs(np.bincount(label, weights=vol, minlength=n_parts))
    holed = np.bincount(vertex_part[caps[:, 0]], minlength=n_parts) > 0
    return volumes, holed


def enclosed_volume(V: np.ndarray, F: np.ndarray) -> float:
    """Signed volume enclosed by a closed, consistently oriented surface (divergence theorem)."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return float(np.einsum("ij,ij->i", np.cross(a, b), c).sum() / 6.0)


def closest_points_on_triangles(P: np.ndarray, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Barycentric coordinates (k, 3) of the closest point to P[i] on triangle (A[i], B[i], C[i]).

    Ericson's region test (Real-Time Collision Detection 5.1.5), vectorised:
    every point picks the vertex, edge or face region that contains its projection.
    """
    ab, ac, ap = B - A, C - A, P - A
    d1, d2 = np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)
    bp = P - B
    d3, d4 = np.einsum("ij,ij->i", ab, bp), np.einsum("ij,ij->i", ac, bp)
    cp = P - C
    d5, d6 = np.einsum("ij,ij->i", ab, cp), np.einsum("ij,ij->i", ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v_face = vb / denom
        w_face = vc / denom
        v_ab = d1 / (d1 - d3)
        w_ac = d2 / (d2 - d6)
        w_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    bary = np.stack([1.0 - v_face - w_face, v_face, w_face], axis=1)
    # Later assignments take precedence, so go from the most general region to vertices.
    regions = [
        ((va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0), np.stack([np.zeros_like(w_bc), 1 - w_bc, w_bc], 1)),
        ((vb <= 0) & (d2 >= 0) & (d6 <= 0), np.stack([1 - w_ac, np.zeros_like(w_ac), w_ac], 1)),
        ((vc <= 0) & (d1 >= 0) & (d3 <= 0), np.stack([1 - v_ab, v_ab, np.zeros_like(v_ab)], 1)),
        ((d6 >= 0) & (d5 <= d6), np.tile([0.0, 0.0, 1.0], (len(P), 1))),
        ((d3 >= 0) & (d4 <= d3), np.tile([0.0, 1.0, 0.0], (len(P), 1))),
        ((d1 <= 0) & (d2 <= 0), np.tile([1.0, 0.0, 0.0], (len(P), 1))),
    ]
    for mask, value in regions:
        bary[mask] = value[mask]
    # Degenerate triangles (denom 0) fall back to their first vertex.
    bad = ~np.isfinite(bary).all(axis=1)
    bary[bad] = [1.0, 0.0, 0.0]
    return bary


def closest_surface_points(
    V: np.ndarray, F: np.ndarray, P: np.ndarray, candidates: int = 16
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest point on the surface for each P (k, 3): (points (k, 3), face (k,), barycentric (k, 3)).

    Candidate triangles are the ``candidates`` nearest by centroid (a k-d tree);
    among them the exact closest point wins.  Exact for points near the
    surface, which is where it is used (tet-mesh boundaries).
    """
    from scipy.spatial import cKDTree

    cent = V[F].mean(axis=1)
    k = int(min(candidates, len(F)))
    _, cand = cKDTree(cent).query(P, k=k)
    cand = cand.reshape(len(P), k)
    flat = cand.ravel()
    Pr = np.repeat(P, k, axis=0)
    bary = closest_points_on_triangles(Pr, V[F[flat, 0]], V[F[flat, 1]], V[F[flat, 2]])
    pts = np.einsum("ij,ijk->ik", bary, V[F[flat]])
    d = np.linalg.norm(pts - Pr, axis=1).reshape(len(P), k)
    best = np.argmin(d, axis=1)
    sel = np.arange(len(P)) * k + best
    return pts[sel], flat[sel], bary[sel]
