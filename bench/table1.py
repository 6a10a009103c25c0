"""Section 4: the seed's Table 1 — 10 skinning modes against 120 displacement modes.

Same eigensolver (shift-invert Lanczos, SuperLU with nested dissection), same
mesh, same complementarity constraint (a 3-bone rig with the default leak
field).  Skinning modes solve an n x n problem for 10 vectors; displacement
modes a 3n x 3n one for 120.  The CHOLMOD path (scikit-sparse, bench-only
environment) runs the same skinning eigensolve with CHOLMOD as the
factorisation.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.subspace.skinning_modes import skinning_eigenmodes
from core.validation.displacement_modes import displacement_modes
from core.validation.scenes import grid_scene

from .common import Context, run_peer

PAPER = [
    ("Elephant", 7842, 0.782, 0.135),
    ("Bulldog", 31368, 6.76, 0.830),
    ("XYZ Dragon", 99813, 62.3, 5.14),
    ("King Ghidora", 294033, 143.4, 14.07),
]


def run(ctx: Context, full: bool = False) -> dict:
    # Vertices per axis: 2.2k, 8k, 22k, 50k; skinning modes also at 104k.  The
    # displacement baseline at 104k takes ~10 minutes here: only with --full.
    sizes = [9, 12] if ctx.quick else [13, 20, 28, 37, 47]
    disp_max = 10**9 if full else (12**3 if ctx.quick else 37**3)
    rows = []
    for v in sizes:
        scene = grid_scene(v, bones=3)
        mat = Material.uniform(scene.mesh.t, 1e4, 0.3, 1000.0)
        masses = lumped_mass(scene.mesh, mat.density)
        leak = default_leak_field(scene.mesh)
        skin = skinning_eigenmodes(scene.mesh, mat, masses, scene.rig, leak, 10)
        row: dict = {"vertices": scene.mesh.n, "tets": scene.mesh.t, "skinning_s": skin.seconds}
        if scene.mesh.n <= disp_max:
            disp = displacement_modes(scene.mesh, mat, masses, scene.rig, leak, 120)
            row["displacement_s"] = disp.seconds
            row["ratio"] = disp.seconds / skin.seconds
        if ctx.peer_python and not ctx.quick:
            row["skinning_cholmod_s"] = _cholmod(ctx, scene.mesh.X, scene.mesh.T, scene.rig.weights)
        rows.append(row)
        ctx.log(
            "  table1 n={vertices}: skinning {skinning_s:.2f} s, displacement {d}".format(
                d=f"{row['displacement_s']:.1f} s" if "displacement_s" in row else "skipped", **row
            )
        )
    return {"rows": rows, "paper": PAPER}


def _cholmod(ctx: Context, X: np.ndarray, T: np.ndarray, W: np.ndarray) -> float | None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.npz"
        np.savez(path, X=X, T=T, W=W)
        try:
            res = run_peer(ctx.peer_python or "", "cholmod_runner.py", str(path))
        except Exception as exc:
            ctx.log(f"  CHOLMOD path unavailable: {exc}")
            return None
    return float(res["cholmod_s"])
