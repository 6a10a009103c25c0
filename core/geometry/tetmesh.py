"""A validated tetrahedral mesh with its rest-shape geometry.

Conventions used throughout ``core``:

* ``X`` is ``(n, 3)`` float64 rest positions in metres, ``T`` is ``(t, 4)``
  int64 vertex indices.  A tet is positively oriented when
  ``det[x1-x0, x2-x0, x3-x0] > 0``.
* ``G[e, a, :]`` is the gradient of vertex ``a``'s barycentric (hat) function
  inside tet ``e``; the deformation gradient of a displacement ``u`` (n, 3) is
  ``F_e = sum_a u[T[e, a]] outer G[e, a]``, i.e. ``F[i, j] = sum_a u_ai G_aj``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import MeshError

# A tet whose volume is below this fraction of its (mean edge length)^3 is
# degenerate: its shape gradients blow up and the stiffness becomes singular.
DEGENERATE_REL_VOLUME = 1e-10


def signed_volumes(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Signed volume of every tet.

    X: (n, 3), T: (t, 4) -> (t,); positive for positively oriented tets.
    """
    d1 = X[T[:, 1]] - X[T[:, 0]]
    d2 = X[T[:, 2]] - X[T[:, 0]]
    d3 = X[T[:, 3]] - X[T[:, 0]]
    return np.einsum("ij,ij->i", np.cross(d1, d2), d3) / 6.0


def mean_edge_lengths(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Mean of the six edge lengths of every tet. X: (n, 3), T: (t, 4) -> (t,)."""
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    e = X[T[:, pairs[:, 0]]] - X[T[:, pairs[:, 1]]]  # (t, 6, 3)
    return np.linalg.norm(e, axis=2).mean(axis=1)


def _describe(indices: np.ndarray, values: np.ndarray, limit: int = 3) -> str:
    shown = ", ".join(f"tet {i} ({v:.3g} m^3)" for i, v in zip(indices[:limit], values[:limit]))
    return shown + (", ..." if len(indices) > limit else "")


def check_volumes(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Signed volumes, raising :class:`MeshError` naming inverted or degenerate tets.

    X: (n, 3), T: (t, 4) -> (t,) strictly positive volumes.
    """
    vol = signed_volumes(X, T)
    scale = mean_edge_lengths(X, T) ** 3
    bad = np.flatnonzero(~(vol > DEGENERATE_REL_VOLUME * scale))
    if bad.size:
        inverted = bad[vol[bad] < 0]
        kind = "inverted" if inverted.size == bad.size else "inverted or degenerate"
        raise MeshError(
            f"{bad.size} of {len(T)} tets are {kind} ({_describe(bad, vol[bad])}); "
            "re-tetrahedralize the mesh or fix the orientation of its tets"
        )
    return vol


def validate_arrays(X: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Check shapes, finiteness, index range and unreferenced vertices.

    Returns float64 ``X`` (n, 3) and int64 ``T`` (t, 4).
    """
    X = np.asarray(X, dtype=np.float64)
    T = np.asarray(T)
    if X.ndim != 2 or X.shape[1] != 3 or len(X) < 4:
        raise MeshError(f"rest positions must be an (n, 3) array with n >= 4, got shape {X.shape}")
    if T.ndim != 2 or T.shape[1] != 4 or len(T) == 0:
        raise MeshError(f"tets must be a non-empty (t, 4) index array, got shape {T.shape}")
    if not np.issubdtype(T.dtype, np.integer):
        raise MeshError(f"tet indices must be integers, got {T.dtype}")
    T = T.astype(np.int64, copy=False)
    if not np.isfinite(X).all():
        raise MeshError("rest positions contain NaN or infinite values; fix the mesh before simulating")
    if T.min() < 0 or T.max() >= len(X):
        raise MeshError(f"tet indices must lie in [0, {len(X) - 1}], found [{T.min()}, {T.max()}]")
    used = np.zeros(len(X), dtype=bool)
    used[T.ravel()] = True
    if not used.all():
        unused = np.flatnonzero(~used)
        raise MeshError(
            f"{unused.size} vertices belong to no tet (first: {unused[:3].tolist()}); "
            "remove unreferenced vertices before building the simulation mesh"
        )
    if (np.sort(T, axis=1)[:, 1:] == np.sort(T, axis=1)[:, :-1]).any():
        raise MeshError("some tets repeat a vertex; re-tetrahedralize the mesh")
    return X, T


def compact_unreferenced(X: np.ndarray, E: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop the vertices no element uses and renumber the elements.

    X: (n, d) vertex rows, E: (e, c) element indices (tets, triangles) into X.
    Returns X[used] (u, d), E renumbered (e, c) int64, and remap (n,) int64:
    the new index of each old vertex, -1 for dropped ones.  Kept vertices keep
    their relative order (new index = rank among the used ones), the same
    numbering as ``np.unique(E, return_inverse=True)``, so meshes built
    either way are identical bit for bit.
    """
    E = np.asarray(E)
    used = np.zeros(len(X), dtype=bool)
    used[E.ravel()] = True
    remap = np.full(len(X), -1, dtype=np.int64)
    remap[used] = np.arange(int(used.sum()), dtype=np.int64)
    return X[used], remap[E], remap


def shape_gradients(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Gradients of the four hat functions in every tet.

    X: (n, 3), T: (t, 4) -> G: (t, 4, 3) with ``G[e].sum(axis=0) == 0``.
    """
    Dm = np.stack([X[T[:, k]] - X[T[:, 0]] for k in (1, 2, 3)], axis=2)  # columns are edges
    Dinv = np.linalg.inv(Dm)  # (t, 3, 3); row k = grad of hat function k+1
    G = np.empty((len(T), 4, 3))
    G[:, 1:, :] = Dinv
    G[:, 0, :] = -Dinv.sum(axis=1)
    return G


# Face k of a tet is opposite vertex k; these orderings are outward for positive tets.
_FACES = np.array([[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]])


def face_keys(T: np.ndarray) -> np.ndarray:
    """One int64 per tet face (4 t,), equal exactly for faces with the same three vertices. T: (t, 4).

    The sorted vertex triple packed into 21 bits each (vertex ids are
    renumbered first where they do not fit): a sort of integers instead of
    rows, several times faster.
    """
    faces = np.sort(T[:, _FACES].reshape(-1, 3), axis=1)
    if faces.size and faces.max() >= 1 << 21:
        _, faces = np.unique(faces, return_inverse=True)
        faces = faces.reshape(-1, 3)
    faces = faces.astype(np.int64)
    return (faces[:, 0] << 42) | (faces[:, 1] << 21) | faces[:, 2]


def boundary_faces(T: np.ndarray) -> np.ndarray:
    """Faces that belong to exactly one tet, oriented outwards.

    T: (t, 4) -> (f, 3) vertex indices.
    """
    key = face_keys(T)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    single = np.ones(len(ks), dtype=bool)
    same = ks[1:] == ks[:-1]
    single[1:] &= ~same
    single[:-1] &= ~same
    return T[:, _FACES].reshape(-1, 3)[np.sort(order[single])]


def face_adjacency(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of tets that share a face. T: (t, 4) -> (a, b) each (p,), a < b."""
    key = face_keys(T)
    owner = np.repeat(np.arange(len(T)), 4)
    order = np.argsort(key, kind="stable")
    ks, os_ = key[order], owner[order]
    same = ks[1:] == ks[:-1]
    return os_[:-1][same], os_[1:][same]


@dataclass(frozen=True)
class TetMesh:
    """A validated tet mesh with rest volumes and shape gradients.

    X: (n, 3) float64, T: (t, 4) int64, volumes: (t,), gradients: (t, 4, 3).
    """

    X: np.ndarray
    T: np.ndarray
    volumes: np.ndarray
    gradients: np.ndarray

    @classmethod
    def from_arrays(cls, X: np.ndarray, T: np.ndarray) -> TetMesh:
        X, T = validate_arrays(X, T)
        vol = check_volumes(X, T)
        return cls(X=X, T=T, volumes=vol, gradients=shape_gradients(X, T))

    @property
    def n(self) -> int:
        return len(self.X)

    @property
    def t(self) -> int:
        return len(self.T)

    def size(self) -> float:
        """Diagonal of the rest bounding box, in metres."""
        return float(np.linalg.norm(self.X.max(axis=0) - self.X.min(axis=0)))

    def boundary_vertices(self) -> np.ndarray:
        """Sorted indices of vertices on the boundary surface."""
        return np.unique(boundary_faces(self.T))

    def vertex_tet_incidence(self) -> sp.csr_matrix:
        """(n, t) matrix with 1 where vertex a belongs to tet e."""
        rows = self.T.ravel()
        cols = np.repeat(np.arange(self.t), 4)
        return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(self.n, self.t))


def dihedral_angles(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The six interior dihedral angles of every tet, in degrees: (t, 6)."""
    P = X[T]  # (t, 4, 3)
    # Face k is opposite vertex k; its (unnormalised) normal points away from vertex k.
    opp = [(1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)]
    n = np.stack([np.cross(P[:, b] - P[:, a], P[:, c] - P[:, a]) for a, b, c in opp], axis=1)
    n /= np.linalg.norm(n, axis=2, keepdims=True)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    cos = np.stack([-np.einsum("ij,ij->i", n[:, i], n[:, j]) for i, j in pairs], axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
