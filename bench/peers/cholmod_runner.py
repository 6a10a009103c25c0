"""Time skinmodes' skinning eigensolve with CHOLMOD as the factorisation (bench-only interpreter).

    python bench/peers/cholmod_runner.py IN.npz

IN.npz: X (n,3), T (t,4), W (n,b) rig weights.  Same problem as Table 1's
skinning column (E = 1e4, nu = 0.3, rho = 1000, default leak field, 10 modes);
only the sparse factorisation differs (scikit-sparse's CHOLMOD instead of
SuperLU with nested dissection).  Prints one JSON line.
"""

from __future__ import annotations

import json
import sys

import numpy as np


def main(argv: list[str]) -> int:
    from core.geometry.tetmesh import TetMesh
    from core.model.fem import lumped_mass
    from core.model.leak import default_leak_field
    from core.model.materials import Material
    from core.model.rig import LBSRig
    from core.subspace.skinning_modes import skinning_eigenmodes

    d = np.load(argv[0])
    mesh = TetMesh.from_arrays(d["X"], d["T"])
    mat = Material.uniform(mesh.t, 1e4, 0.3, 1000.0)
    masses = lumped_mass(mesh, mat.density)
    res = skinning_eigenmodes(
        mesh, mat, masses, LBSRig.from_weights(d["W"]), default_leak_field(mesh), 10, backend="cholmod"
    )
    print(json.dumps({"cholmod_s": res.seconds, "backend": res.backend}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
