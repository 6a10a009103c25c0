"""Triangle surfaces built with numpy for the meshing tests (closed, open, broken on purpose)."""

from __future__ import annotations

import numpy as np


def uv_sphere(n: int = 24, radius: float = 1.0, centre=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """A closed, outward-oriented UV sphere."""
    rings = n // 2
    th = np.linspace(0, np.pi, rings + 1)[1:-1]
    ph = np.linspace(0, 2 * np.pi, n, endpoint=False)
    T, P = np.meshgrid(th, ph, indexing="ij")
    V = np.c_[np.sin(T).ravel() * np.cos(P).ravel(), np.sin(T).ravel() * np.sin(P).ravel(), np.cos(T).ravel()]
    V = np.vstack([V, [[0, 0, 1], [0, 0, -1]]]) * radius + np.asarray(centre, dtype=float)
    j = np.arange(n)
    F = []
    for i in range(rings - 2):
        a, b = i * n + j, i * n + (j + 1) % n
        F += np.stack([a, a + n, b + n], 1).tolist() + np.stack([a, b + n, b], 1).tolist()
    top, bot, last = len(V) - 2, len(V) - 1, (rings - 2) * n
    F += np.stack([np.full(n, top), j, (j + 1) % n], 1).tolist()
    F += np.stack([np.full(n, bot), last + (j + 1) % n, last + j], 1).tolist()
    return V, np.array(F)


def torus(n: int = 32, m: int = 16, R: float = 1.0, r: float = 0.35) -> tuple[np.ndarray, np.ndarray]:
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)
    U, W = np.meshgrid(u, v, indexing="ij")
    V = np.c_[
        ((R + r * np.cos(W)) * np.cos(U)).ravel(), ((R + r * np.cos(W)) * np.sin(U)).ravel(), (r * np.sin(W)).ravel()
    ]
    i, k = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a = (i * m + k).ravel()
    b = (((i + 1) % n) * m + k).ravel()
    c = (((i + 1) % n) * m + (k + 1) % m).ravel()
    d = (i * m + (k + 1) % m).ravel()
    F = np.vstack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return V, F


def box(size=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    V = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], dtype=float) * np.asarray(size)
    F = np.array(
        [
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ]
    )
    return V, F


def join(*parts):
    Vs, Fs, o = [], [], 0
    for V, F in parts:
        Vs.append(V)
        Fs.append(F + o)
        o += len(V)
    return np.vstack(Vs), np.vstack(Fs)


def signed_volume(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return float(np.einsum("ij,ij->i", np.cross(a, b), c).sum() / 6)


def card(nu: int = 10, nv: int = 4, origin=(0.0, 0.0, 0.0), du=(1.0, 0.0, 0.0), dv=(0.0, 1.0, 0.0)):
    """An open, single-sided quad strip (a fin or a card): a grid of nu x nv quads, two triangles each."""
    u, v = np.meshgrid(np.arange(nu + 1) / nu, np.arange(nv + 1) / nv, indexing="ij")
    V = (
        np.asarray(origin, float)
        + u.ravel()[:, None] * np.asarray(du, float)
        + v.ravel()[:, None] * np.asarray(dv, float)
    )
    i, j = (a.ravel() for a in np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij"))
    a, b, c, d = i * (nv + 1) + j, (i + 1) * (nv + 1) + j, (i + 1) * (nv + 1) + j + 1, i * (nv + 1) + j + 1
    return V, np.vstack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def suzanne_like(n: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """An open head like Blender's Suzanne, built without Blender: a sphere with two eye sockets and a neck
    cut open, two separate closed eyeballs sitting in the sockets, and an open ear card on each side."""
    V, F = uv_sphere(n)
    centroid = V[F].mean(axis=1)
    eyes = [np.array([0.45, -0.8, 0.35]), np.array([-0.45, -0.8, 0.35])]
    holes = np.zeros(len(F), dtype=bool)
    for e in eyes:
        holes |= np.linalg.norm(centroid - e / np.linalg.norm(e), axis=1) < 0.28
    holes |= centroid[:, 2] < -0.85  # the neck
    head = (V, F[~holes])
    balls = [uv_sphere(12, 0.2, e / np.linalg.norm(e) * 0.88) for e in eyes]
    ears = [card(6, 4, (s * 0.95, -0.2, 0.1), (s * 0.6, 0.1, 0.3), (0.0, 0.5, 0.1)) for s in (1.0, -1.0)]
    V, F = join(head, *balls, *ears)
    used = np.unique(F)  # the cut-away sphere vertices belong to no face any more
    remap = np.full(len(V), -1)
    remap[used] = np.arange(len(used))
    return V[used], remap[F]
