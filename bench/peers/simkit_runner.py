"""Run simkit's constrained skinning eigenmodes on given inputs (bench-only interpreter).

    python bench/peers/simkit_runner.py IN.npz

IN.npz: X (n,3), T (t,4), Aeq (c, n) weight-space constraint, mu (t,) per-tet
stiffness, k modes.  Writes IN.npz.out.npz with W (n, k) and E (k,), ascending, and prints one JSON
line with the seconds simkit took (Laplacian, mass matrix, saddle-point
eigensolve with ARPACK shift-invert, as simkit does it).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import scipy.sparse as sp


def main(argv: list[str]) -> int:
    d = np.load(argv[0])
    import simkit

    X, T, mu, k = d["X"], d["T"].astype(np.int64), d["mu"], int(d["k"])
    Aeq = sp.csr_matrix(d["Aeq"])
    t0 = time.perf_counter()
    W, E, _ = simkit.skinning_eigenmodes(X, T, k, mu=mu.reshape(-1, 1), Aeq=Aeq)
    seconds = time.perf_counter() - t0
    order = np.argsort(E)
    np.savez(argv[0] + ".out.npz", W=np.asarray(W)[:, order], E=np.asarray(E)[order])
    print(json.dumps({"seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
