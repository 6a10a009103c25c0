"""Tetrahedralising a character's rest surface: fTetWild (wildmeshing) with a lattice fallback.

Mesher choice.  ``wildmeshing`` (MPL-2.0, compatible with GPL-3.0-or-later,
4 MB, wheels for CPython 3.11/3.13 on Linux x64, macOS arm64 and macOS x64)
is the fTetWild family's Python binding: robust to self-intersections and
holes, follows the surface, no heavy dependencies.  ``pytetwild`` pulls in
pyvista/vtk (566 MB) on import; TetGen wrappers are AGPL.  wildmeshing has no
Windows wheel, so there (or if it fails on some input) the built-in lattice
mesher (``lattice.py``, pure numpy/scipy, never fails) takes over and says so.

Resolution is one setting, the target tet count.  The simulation only needs
a coarse volume (render vertices are embedded, so the surface's detail never
reaches the solver), so the envelope tolerance of fTetWild is tied to the
target edge length: meshes land near the target instead of being dominated by
surface detail (within 1% of the volume, see ENVELOPE_DIVISOR).

Separate parts: parts whose volumes overlap or nest (eyes in a head, a tail
through a body) form one body and are meshed together.  Parts outside every
other volume are *loose*: reported, then either given their own volume or
skipped (their vertices then follow the rig only).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .errors import MeshError
from .lattice import lattice_tet_mesh
from .surface import CleanSurface, clean_surface, enclosed_volume
from .tetmesh import dihedral_angles, signed_volumes
from .winding import winding_numbers

DEFAULT_TARGET_TETS = 15_000
# Beyond this the simulation mesh no longer fits the "real time" brief and a
# 24 GB machine starts to suffer in the eigensolve: refuse before meshing.
MAX_TETS = 2_000_000
# Measured on fTetWild output: tets ~= TETWILD_SHAPE * volume / edge^3.
TETWILD_SHAPE = 6.3
LATTICE_TETS_PER_CELL = 6.0
MAX_PART_CHECKS = 64  # more parts than this are all treated as one body


@dataclass
class TetResult:
    """A tet mesh of the character and how it was made.

    X (n, 3) metres, T (t, 4) positively oriented.  method: "wildmeshing",
    "lattice" or "given".  skipped_vertices: (k,) True for input surface
    vertices of loose parts that were skipped (None if none were).
    """

    X: np.ndarray
    T: np.ndarray
    method: str
    seconds: float = 0.0
    min_dihedral_deg: float = 0.0
    parts: int = 1
    body_parts: int = 1
    loose_parts: list[int] = field(default_factory=list)
    skipped_vertices: np.ndarray | None = None
    messages: list[str] = field(default_factory=list)

    @classmethod
    def from_arrays(cls, X: np.ndarray, T: np.ndarray, method: str = "given") -> TetResult:
        X = np.asarray(X, dtype=np.float64)
        T = np.asarray(T, dtype=np.int64)
        return cls(X=X, T=T, method=method, min_dihedral_deg=float(dihedral_angles(X, T).min()))

    @property
    def tets(self) -> int:
        return len(self.T)


def wildmeshing_available() -> tuple[bool, str]:
    """Whether fTetWild can be used here, and if not, one line saying why."""
    try:
        import wildmeshing  # noqa: F401
    except ImportError as exc:
        return (
            False,
            f"fTetWild (wildmeshing) is not available on this platform ({exc}); using the built-in lattice mesher",
        )
    return True, ""


# Run in a child process: fTetWild is native code that can crash (a segfault
# seen here on a plain UV sphere) and prints from C++ whatever its log level;
# neither may take Blender down or reach the user's console.  It also writes
# ``__tracked_surface.stl`` into its working folder, here a scratch folder.
_CHILD = """
import sys, numpy as np, wildmeshing as wm
d = np.load(sys.argv[1])
tw = wm.Tetrahedralizer(stop_quality=10, epsilon=float(d["eps"]), edge_length_r=float(d["edge"]), coarsen=True,
                        max_threads=int(d["threads"]))
tw.set_log_level(6)
tw.set_mesh(d["V"], d["F"].astype(np.int32))
tw.tetrahedralize()
out = tw.get_tet_mesh()
np.savez(sys.argv[2], X=np.asarray(out[0], dtype=np.float64), T=np.asarray(out[1], dtype=np.int64))
"""
WILDMESHING_TIMEOUT_S = 900
# Envelope tolerance = target edge / this.  Measured at a 4000-tet target:
# /3 loses 3-4.5% of a sphere's and a torus's volume, /10 keeps them within 1%
# at about the same tet count (and /6 crashed fTetWild on a box).
ENVELOPE_DIVISOR = 10.0


def _wildmeshing(V: np.ndarray, F: np.ndarray, edge_r: float) -> tuple[np.ndarray, np.ndarray]:
    with tempfile.TemporaryDirectory(prefix="skinmodes-tetwild-") as scratch:
        src, dst = os.path.join(scratch, "in.npz"), os.path.join(scratch, "out.npz")
        np.savez(
            src,
            V=np.ascontiguousarray(V),
            F=np.ascontiguousarray(F),
            edge=edge_r,
            eps=edge_r / ENVELOPE_DIVISOR,
            threads=max(1, os.cpu_count() or 1),
        )
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, src, dst],
            cwd=scratch,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=WILDMESHING_TIMEOUT_S,
        )
        if proc.returncode != 0 or not os.path.exists(dst):
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
            raise RuntimeError(f"the fTetWild process failed: {tail[0]}")
        with np.load(dst) as out:
            X, T = out["X"], out["T"]
    return _tidy(X, T)


def _tidy(X: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orient every tet positively, drop degenerate ones and unreferenced vertices."""
    vol = signed_volumes(X, T)
    T = np.where((vol < 0)[:, None], T[:, [1, 0, 2, 3]], T)
    scale = np.abs(vol).max() if len(vol) else 1.0
    T = T[np.abs(vol) > 1e-12 * scale]
    used = np.unique(T)
    remap = np.full(len(X), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return X[used], remap[T]


def body_components(surf: CleanSurface) -> np.ndarray:
    """Component (parts,) of each part: parts whose volumes overlap or nest share a component.

    Part p touches part q when one of p's vertices lies inside q (|w_q| > 0.5)
    or the other way round; components of that graph are bodies.
    """
    n = surf.parts
    if n == 1 or n > MAX_PART_CHECKS:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(0)
    faces = [surf.F[surf.part == p] for p in range(n)]
    samples = []
    for f in faces:
        vid = np.unique(f)
        samples.append(surf.V[rng.choice(vid, size=min(len(vid), 64), replace=False)])
    rows, cols = [], []
    for q in range(n):
        for p in range(n):
            if p != q and (np.abs(winding_numbers(surf.V, faces[q], samples[p])) > 0.5).any():
                rows.append(p)
                cols.append(q)
    graph = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def tetrahedralize(
    V: np.ndarray,
    F: np.ndarray,
    target_tets: int = DEFAULT_TARGET_TETS,
    method: str = "auto",
    loose_parts: str = "own_volume",
    max_tets: int = MAX_TETS,
) -> TetResult:
    """Tet mesh of the volume inside surface (V (k, 3), F (f, 3)), about ``target_tets`` tets.

    method: "auto" (fTetWild if available, else lattice), "wildmeshing" or
    "lattice".  loose_parts: "own_volume" or "skip".  Raises MeshError for
    empty/flat surfaces and impossible resolutions before meshing.
    """
    t0 = time.perf_counter()
    if method not in ("auto", "wildmeshing", "lattice"):
        raise MeshError(f"unknown mesher {method!r}; use auto, wildmeshing or lattice")
    if loose_parts not in ("own_volume", "skip"):
        raise MeshError(f"unknown loose-part policy {loose_parts!r}; use own_volume or skip")
    if not (100 <= target_tets <= max_tets):
        raise MeshError(
            f"a target of {target_tets} tets is outside 100..{max_tets}; "
            "lower the tet resolution (a few 10k tets simulate in real time)"
        )
    surf = clean_surface(V, F)
    messages: list[str] = []
    comp = body_components(surf)
    part_volume = np.array([abs(enclosed_volume(surf.V, surf.F[surf.part == p])) for p in range(surf.parts)])
    comp_volume = np.bincount(comp, weights=part_volume)
    main = int(np.argmax(comp_volume))
    loose = [int(p) for p in np.flatnonzero(comp != main)]
    keep_faces = np.ones(len(surf.F), dtype=bool)
    skipped = None
    if loose:
        what = f"{len(loose)} loose part{'s' if len(loose) > 1 else ''} outside the body"
        if loose_parts == "skip":
            keep_faces = comp[surf.part] == main
            skipped_clean = np.ones(len(surf.V), dtype=bool)
            skipped_clean[np.unique(surf.F[keep_faces])] = False
            skipped = np.zeros(len(surf.vertex_map), dtype=bool)
            valid = surf.vertex_map >= 0
            skipped[valid] = skipped_clean[surf.vertex_map[valid]]
            messages.append(f"{what}: skipped, they follow the rig only")
        else:
            messages.append(f"{what}: each gets its own volume")
    Vm, Fm = surf.V, surf.F[keep_faces]

    # Normalised coordinates: the meshers' tolerances behave the same from 1 cm to 50 m.
    lo, hi = Vm[np.unique(Fm)].min(axis=0), Vm[np.unique(Fm)].max(axis=0)
    centre, diag = 0.5 * (lo + hi), float(np.linalg.norm(hi - lo))
    Vn = (Vm - centre) / diag
    vol = abs(enclosed_volume(Vn, Fm))
    box = float(np.prod(np.maximum(hi - lo, 1e-12 * diag))) / diag**3
    if not (0.02 * box < vol <= box):
        vol = 0.4 * box  # open or inconsistently oriented surface: a rough guess, corrected below

    use_wm = method == "wildmeshing" or method == "auto"
    if use_wm:
        ok, why = wildmeshing_available()
        if not ok:
            use_wm = False
            messages.append(why)
    X = T = None
    used = "lattice"
    if use_wm:
        try:
            edge = (TETWILD_SHAPE * vol / target_tets) ** (1.0 / 3.0)
            X, T = _wildmeshing(Vn, Fm, edge)
            if not 0.6 <= len(T) / target_tets <= 1.6:  # one correction towards the target
                X, T = _wildmeshing(Vn, Fm, edge * (len(T) / target_tets) ** (1.0 / 3.0))
            used = "wildmeshing"
        except Exception as exc:
            messages.append(f"fTetWild failed ({type(exc).__name__}: {exc}); used the built-in lattice mesher")
            X = T = None
    if X is None or T is None or len(T) == 0:
        cell = (LATTICE_TETS_PER_CELL * vol / target_tets) ** (1.0 / 3.0)
        X, T = lattice_tet_mesh(Vn, Fm, cell)
        if not 0.6 <= len(T) / target_tets <= 1.6:
            X, T = lattice_tet_mesh(Vn, Fm, cell * (len(T) / target_tets) ** (1.0 / 3.0))
        used = "lattice"
    X = X * diag + centre
    res = TetResult.from_arrays(X, T, method=used)
    res.seconds = time.perf_counter() - t0
    res.parts = surf.parts
    res.body_parts = int((comp == main).sum())
    res.loose_parts = loose
    res.skipped_vertices = skipped
    res.messages = messages
    return res
