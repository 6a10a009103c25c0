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
