"""Tetrahedralising a character's rest surface: the lattice mesher by default, fTetWild on request.

Mesher choice.  "auto" (the default) and "lattice" use the built-in lattice
mesher (``lattice.py``, pure numpy/scipy): deterministic (identical input,
bit-identical tets, so the same file gives the same jiggle on every
machine), fast, and it puts every surface vertex inside the volume, open fins and
cards included.  "wildmeshing" runs fTetWild (MPL-2.0, 4 MB wheels for
CPython 3.11/3.13 on Linux x64 and macOS; none for Windows), which follows
the surface more closely but is neither deterministic from run to run nor
fast (on a humanoid it is most of the preparation time), and leaves open fins outside its volume:
it is an explicit choice for quality.

Resolution is one setting, the target tet count.  The simulation only needs
a coarse volume (render vertices are embedded, so the surface's detail never
reaches the solver).

Loose parts.  Surface parts that overlap or nest (eyes in a head, a tail
through a body) are one body.  The returned mesh is always one
face-connected body: no island of tets exists that nothing ties to the rig.
With ``loose_parts="join"`` (the default; "own_volume" is its former name)
a part whose volume lies within JOIN_CELLS lattice cells of the body is
joined to it through a few bridging cells, and a part farther away is
dropped: its vertices follow the rig only (``TetResult.skipped_vertices``).
With ``"skip"`` every part whose volume does not touch the body's is
dropped that way.  Each joined or dropped part gets one line in
``TetResult.messages``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..errors import MeshError
from .embedding import embed_points
from .lattice import BODY, JOIN_CELLS, SKIPPED, LatticeMesh, lattice_mesh
from .surface import CleanSurface, clean_surface, part_volumes
from .tetmesh import (
    check_volumes,
    compact_unreferenced,
    dihedral_angles,
    face_adjacency,
    signed_volumes,
    validate_arrays,
)

DEFAULT_TARGET_TETS = 15_000
# Beyond this the simulation mesh no longer fits the "real time" brief and a
# 24 GB machine starts to suffer in the eigensolve: refuse before meshing.
MAX_TETS = 2_000_000
# The fewest tets a mesh is built with: below, no shape keeps its volume.
MIN_TETS = 100
# Measured on fTetWild output: tets ~= TETWILD_SHAPE * volume / edge^3.
TETWILD_SHAPE = 6.3
LATTICE_TETS_PER_CELL = 6.0
# A lattice result this close to the target is kept; otherwise one more pass.
TARGET_SLACK = (0.8, 1.25)
# At most this many per-part lines; the rest are summed up in one.
MAX_PART_MESSAGES = 10
METHODS = ("auto", "lattice", "wildmeshing")
LOOSE_POLICIES = ("join", "own_volume", "skip")


@dataclass
class TetResult:
    """A tet mesh of the character and how it was made.

    X (n, 3) metres, T (t, 4) positively oriented, one face-connected body.
    method: "lattice", "wildmeshing" or "given".  skipped_vertices: (k,) True
    for input surface vertices of parts that were dropped (None if none
    were): they follow the rig only.  joined_parts / skipped_parts: surface
    part numbers (``clean_surface`` labels) joined to the body or dropped;
    loose_parts: both.  messages: one line per thing the user should know.
    """

    X: np.ndarray
    T: np.ndarray
    method: str
    seconds: float = 0.0
    min_dihedral_deg: float = 0.0
    parts: int = 1
    body_parts: int = 1
    loose_parts: list[int] = field(default_factory=list)
    joined_parts: list[int] = field(default_factory=list)
    skipped_parts: list[int] = field(default_factory=list)
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

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to rebuild this result, as arrays for ``np.savez`` (no pickling)."""
        k = -1 if self.skipped_vertices is None else len(self.skipped_vertices)
        return {
            "X": self.X,
            "T": self.T,
            "method": np.asarray(self.method, dtype=np.str_),
            "seconds": np.asarray(self.seconds, dtype=np.float64),
            "counts": np.array([self.parts, self.body_parts, k], dtype=np.int64),
            "joined_parts": np.asarray(self.joined_parts, dtype=np.int64),
            "skipped_parts": np.asarray(self.skipped_parts, dtype=np.int64),
            "skipped_vertices": np.zeros(0, bool) if self.skipped_vertices is None else self.skipped_vertices,
            "messages": np.asarray(self.messages, dtype=np.str_),
        }

    @classmethod
    def from_saved(cls, data: Mapping[str, np.ndarray]) -> TetResult:
        """The result :meth:`to_arrays` wrote (``data``: an ``np.load`` of it).

        Checked as a mesher's output is (finite positions, indices in range,
        every tet positively oriented): a :class:`MeshError` says the file
        is damaged, and the caller discards it, never the character.
        """
        X, T = validate_arrays(data["X"], data["T"])
        check_volumes(X, T)
        res = cls.from_arrays(X, T, method=str(data["method"]))
        parts, body_parts, k = (int(c) for c in data["counts"])
        res.seconds = float(data["seconds"])
        res.parts, res.body_parts = parts, body_parts
        res.joined_parts = [int(p) for p in data["joined_parts"]]
        res.skipped_parts = [int(p) for p in data["skipped_parts"]]
        res.loose_parts = sorted(res.joined_parts + res.skipped_parts)
        res.skipped_vertices = None if k < 0 else np.asarray(data["skipped_vertices"], dtype=bool)
        res.messages = [str(m) for m in data["messages"]]
        return res


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
    X, T, _ = compact_unreferenced(X, T)
    return X, T


def estimated_volume(V: np.ndarray, F: np.ndarray, part: np.ndarray) -> float:
    """Sum over surface parts of the volume each encloses once its holes are capped (``part_volumes``)."""
    return float(part_volumes(V, F, part)[0].sum())


def _lattice_to_target(Vn: np.ndarray, F: np.ndarray, target: int, volume: float, join_cells: int) -> LatticeMesh:
    """Lattice mesh near ``target`` tets: one pass at the cell the volume suggests, a second if far off.

    The second cell solves n_in (c/c')^3 + n_rest (c/c')^2 = target: inside
    tets scale with the volume, shells and bridges with the surface.
    """
    cell = (LATTICE_TETS_PER_CELL * volume / target) ** (1.0 / 3.0)
    mesh = lattice_mesh(Vn, F, cell, join_cells=join_cells)
    ratio = len(mesh.T) / target
    if not TARGET_SLACK[0] <= ratio <= TARGET_SLACK[1]:
        n_in = float(min(mesh.inside_tets, len(mesh.T)))
        n_rest = float(len(mesh.T)) - n_in
        roots = np.roots([n_in, n_rest, 0.0, -float(target)])
        x = float(max(r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 0))
        mesh = lattice_mesh(Vn, F, cell / x, join_cells=join_cells)
    return mesh


def _wildmesh_body(
    Vn: np.ndarray, F: np.ndarray, target: int, volume: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """fTetWild's mesh reduced to its largest face-connected component, and each surface vertex's status (k,).

    fTetWild gives a loose part its own island; islands cannot be joined
    here, so their vertices are SKIPPED (they follow the rig only).
    """
    edge = (TETWILD_SHAPE * volume / target) ** (1.0 / 3.0)
    X, T = _wildmeshing(Vn, F, edge)
    if not 0.6 <= len(T) / target <= 1.6:  # one correction towards the target
        X, T = _wildmeshing(Vn, F, edge * (len(T) / target) ** (1.0 / 3.0))
    a, b = face_adjacency(T)
    comp = connected_components(sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(len(T), len(T))), directed=False)[1]
    body = int(np.argmax(np.bincount(comp, weights=np.abs(signed_volumes(X, T)))))
    status = np.where(comp[embed_points(X, T, Vn).tet] == body, BODY, SKIPPED).astype(np.int8)
    X, T = _tidy(X, T[comp == body])
    return X, T, status


def part_report(
    surf: CleanSurface, status: np.ndarray, policy: str, method: str
) -> tuple[list[int], list[int], list[str]]:
    """Joined parts, dropped parts and one message line per part (at most MAX_PART_MESSAGES, then a summary).

    status: (n,) BODY / JOINED / SKIPPED per cleaned surface vertex.
    """
    vpart = np.zeros(len(surf.V), dtype=np.int64)
    vpart[surf.F.ravel()] = np.repeat(surf.part, 3)
    n = np.bincount(vpart, minlength=surf.parts)
    skipped = np.bincount(vpart, weights=status == SKIPPED, minlength=surf.parts).astype(np.int64)
    # A part is joined when none of it was in the body's volume to start with.
    body = np.bincount(vpart, weights=status == BODY, minlength=surf.parts).astype(np.int64)
    joined = np.where(body == 0, n - skipped, 0)
    centre = (
        np.stack([np.bincount(vpart, weights=surf.V[:, i], minlength=surf.parts) for i in range(3)], 1) / n[:, None]
    )
    why = {
        "wildmeshing": "fTetWild gave it a volume of its own, which nothing ties to the body",
        "skip": "not connected to the body (loose parts: skip)",
    }.get(method if method == "wildmeshing" else policy, "far from the body")
    dropped, joins, joined_parts, skipped_parts = [], [], [], []
    for p in np.flatnonzero((skipped > 0) | (joined > 0)):
        at = f"part {p} ({n[p]} vertices at ({centre[p, 0]:.3g}, {centre[p, 1]:.3g}, {centre[p, 2]:.3g}))"
        if skipped[p] == n[p]:
            skipped_parts.append(int(p))
            dropped.append(f"{at}: {why}; it follows the rig only")
        elif skipped[p]:
            skipped_parts.append(int(p))
            dropped.append(f"{at}: {skipped[p]} of its vertices are {why}; they follow the rig only")
        else:
            joined_parts.append(int(p))
            joins.append(f"{at}: joined to the body")
    lines = dropped + joins  # what the user must know first: parts that will not jiggle
    if len(lines) > MAX_PART_MESSAGES:
        rest = lines[MAX_PART_MESSAGES - 1 :]
        n_join = sum(line.endswith("joined to the body") for line in rest)
        summary = f"{len(rest)} more parts: {n_join} joined to the body, {len(rest) - n_join} follow the rig only"
        lines = [*lines[: MAX_PART_MESSAGES - 1], summary]
    return joined_parts, skipped_parts, lines


def tetrahedralize(
    V: np.ndarray,
    F: np.ndarray,
    target_tets: int = DEFAULT_TARGET_TETS,
    method: str = "auto",
    loose_parts: str = "join",
    max_tets: int = MAX_TETS,
) -> TetResult:
    """One face-connected tet mesh holding every vertex of surface (V (k, 3), F (f, 3)), about ``target_tets`` tets.

    method: "auto" or "lattice" (the lattice mesher), or "wildmeshing"
    (fTetWild, falling back to the lattice where it is missing or fails).
    loose_parts: "join" (= "own_volume"): near parts joined, far ones dropped;
    "skip": every part not touching the body dropped.  Dropped parts' vertices
    are flagged in ``skipped_vertices``.  Raises MeshError for empty/flat
    surfaces and impossible resolutions before meshing.
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise MeshError(f"unknown mesher {method!r}; use auto, lattice or wildmeshing")
    if loose_parts not in LOOSE_POLICIES:
        raise MeshError(f"unknown loose-part policy {loose_parts!r}; use join or skip")
    if not (MIN_TETS <= target_tets <= max_tets):
        way = "raise it" if target_tets < MIN_TETS else "lower it (a few 10k tets simulate in real time)"
        raise MeshError(f"a target of {target_tets} tets is outside {MIN_TETS}..{max_tets}; {way}")
    policy = "skip" if loose_parts == "skip" else "join"
    surf = clean_surface(V, F)
    messages: list[str] = []
    # Normalised coordinates: the meshers' tolerances behave the same from 1 cm to 50 m.
    lo, hi = surf.V.min(axis=0), surf.V.max(axis=0)
    centre, diag = 0.5 * (lo + hi), float(np.linalg.norm(hi - lo))
    Vn = (surf.V - centre) / diag
    box = float(np.prod(np.maximum(hi - lo, 1e-12 * diag))) / diag**3
    vol = estimated_volume(Vn, surf.F, surf.part)
    if not (0.02 * box < vol <= box):
        vol = 0.05 * box if vol <= 0.02 * box else box  # mostly open or thin: shells make up the count

    wild: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    if method == "wildmeshing":
        ok, why = wildmeshing_available()
        if not ok:
            messages.append(why)
        else:
            try:
                wild = _wildmesh_body(Vn, surf.F, target_tets, vol)
            except Exception as exc:
                messages.append(f"fTetWild failed ({type(exc).__name__}: {exc}); used the built-in lattice mesher")
    if wild is not None:
        X, T, status = wild
        used = "wildmeshing"
    else:
        mesh = _lattice_to_target(Vn, surf.F, target_tets, vol, 0 if policy == "skip" else JOIN_CELLS)
        X, T, status = mesh.X, mesh.T, mesh.vertex_status
        used = "lattice"
        if mesh.shell_cubes:
            messages.append(
                f"open or thin surfaces (fins, cards) got a one-cell shell of volume ({mesh.shell_cubes} cells)"
            )
    joined, skipped_parts, lines = part_report(surf, status, policy, used)
    messages.extend(lines)
    skipped = None
    if bool(np.any(status == SKIPPED)):
        skipped = np.zeros(len(surf.vertex_map), dtype=bool)
        valid = surf.vertex_map >= 0
        skipped[valid] = status[surf.vertex_map[valid]] == SKIPPED
    res = TetResult.from_arrays(X * diag + centre, T, method=used)
    res.seconds = time.perf_counter() - t0
    res.parts = surf.parts
    res.joined_parts, res.skipped_parts = joined, skipped_parts
    res.loose_parts = sorted(joined + skipped_parts)
    res.body_parts = surf.parts - len(res.loose_parts)
    res.skipped_vertices = skipped
    res.messages = messages
    return res
