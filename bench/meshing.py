"""Mesh preparation: tetrahedralising a production-sized character surface.

The demo creature's surface (belly, tail and two eyes: four closed parts that
overlap, the way characters are modelled) at about 73k triangles, meshed with
fTetWild (wildmeshing, the default) and with the lattice fallback, at the
add-on's default target of 15k tets and at 40k.
"""

from __future__ import annotations

import numpy as np

from core.geometry.tetrahedralize import tetrahedralize

from .common import Context


def creature_surface(detail: int) -> tuple[np.ndarray, np.ndarray]:
    """The demo creature's parts as one triangle soup: V (k, 3), F (f, 3)."""
    from testkit.creature import tube, uv_sphere  # imports bpy: only when this section runs

    parts = [
        uv_sphere(detail, detail // 2 + 2, (0.42, 0.5, 0.4), (0.0, 0.1, 0.45)),
        tube(max(8, detail // 2), max(6, detail // 2), 1.2, 0.16, 0.05, (0.0, -0.15, 0.45)),
        uv_sphere(max(8, detail // 3), max(6, detail // 4), (0.07, 0.07, 0.07), (0.17, 0.52, 0.68)),
        uv_sphere(max(8, detail // 3), max(6, detail // 4), (0.07, 0.07, 0.07), (-0.17, 0.52, 0.68)),
    ]
    Vs, Fs, offset = [], [], 0
    for V, faces in parts:
        for f in faces:  # fan-triangulate quads (a few thousand faces: set-up, not a hot path)
            Fs.extend([offset + f[0], offset + f[i], offset + f[i + 1]] for i in range(1, len(f) - 1))
        Vs.append(V)
        offset += len(V)
    return np.vstack(Vs), np.asarray(Fs, dtype=np.int64)


def run(ctx: Context) -> dict:
    detail = 24 if ctx.quick else 200
    V, F = creature_surface(detail)
    rows = []
    for method in ("wildmeshing", "lattice"):
        for target in [2000] if ctx.quick else [15_000, 40_000]:
            try:
                res = tetrahedralize(V, F, target_tets=target, method=method)
            except Exception as exc:  # e.g. wildmeshing missing on this platform: say so, keep going
                rows.append({"method": method, "target_tets": target, "error": str(exc)})
                ctx.log(f"  meshing {method} {target}: failed: {exc}")
                continue
            rows.append(
                {
                    "method": res.method,
                    "target_tets": target,
                    "tets": res.tets,
                    "vertices": len(res.X),
                    "seconds": res.seconds,
                    "min_dihedral_deg": res.min_dihedral_deg,
                    "parts": res.parts,
                }
            )
            ctx.log(
                f"  meshing {res.method}: {len(F)} triangles -> {res.tets} tets (target {target}) "
                f"in {res.seconds:.1f} s, min dihedral {res.min_dihedral_deg:.1f} deg"
            )
    return {"triangles": len(F), "surface_vertices": len(V), "rows": rows}
