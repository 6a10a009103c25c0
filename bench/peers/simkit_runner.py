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


def step_timing(path: str) -> dict:
    import scipy.linalg as sla
    from simkit.cluster_grouping_matrices import cluster_grouping_matrices
    from simkit.deformation_jacobian import deformation_jacobian
    from simkit.lbs_jacobian import lbs_jacobian
    from simkit.massmatrix import massmatrix
    from simkit.polar_svd import polar_svd
    from simkit.solvers import block_coord
    from simkit.volume import volume

    d = np.load(path)
    X, T, W, labels, Wr = d["X"], d["T"].astype(np.int64), d["W"], d["labels"].astype(np.int64), d["Wrig"]
    Xrig, mu, rho, h, iters = d["Xrig"], float(d["mu"]), float(d["rho"]), float(d["h"]), int(d["iters"])
    dim = 3
    Mv = sp.kron(massmatrix(X, T, rho=rho), sp.identity(dim)).tocsc()
    G = deformation_jacobian(X, T)
    vol = volume(X, T)
    AMu = sp.diags((mu * vol).flatten())
    AMue = sp.kron(AMu, sp.identity(dim * dim))
    L = (G.T @ AMue @ G).tocsc()
    J = lbs_jacobian(X, Wr)
    B = lbs_jacobian(X, W)
    P, _ = cluster_grouping_matrices(labels, X, T)
    PAMue = sp.kron(P @ AMu, sp.identity(dim * dim))
    AMuPGB = np.asarray((PAMue @ G) @ B)
    AMuPGJ = np.asarray((PAMue @ G) @ J)
    BMB = np.asarray(B.T @ Mv @ B)
    BMJ = np.asarray(B.T @ Mv @ J)
    BLJ = np.asarray(B.T @ L @ J)
    chol = sla.cho_factor(np.asarray(B.T @ L @ B) + BMB / h**2)
    # Rig parameters in simkit's layout: least-squares fits of the rig positions.
    Jd = np.asarray(J.todense()) if sp.issparse(J) else np.asarray(J)
    ps = np.linalg.lstsq(Jd, Xrig.reshape(len(Xrig), -1).T, rcond=None)[0].T[:, :, None]

    def local(zv, p_next):
        c = AMuPGB @ zv + AMuPGJ @ p_next
        return polar_svd(c.reshape(-1, dim, dim))[0].reshape(-1, 1)

    def global_(r, y, q, p_next):
        rhs = BMB @ y / h**2 - BMJ @ q / h**2 + AMuPGB.T @ r - BLJ @ p_next
        return sla.cho_solve(chol, rhs)

    z = np.zeros((B.shape[1], 1))
    z_dot = np.zeros_like(z)
    p = ps[0]
    p_dot = (ps[1] - ps[0]) / h
    times = []
    for k in range(1, len(ps)):
        t0 = time.perf_counter()
        p_next = ps[k]
        y = z + h * z_dot
        q = p_next - (p + h * p_dot)
        z_next = block_coord(
            z.copy(),
            lambda zv, r, y=y, q=q, pn=p_next: global_(r, y, q, pn),
            lambda zv, pn=p_next: local(zv, pn),
            tolerance=0.0,
            max_iter=iters,
        )
        z_dot = (z_next - z) / h
        p_dot = (p_next - p) / h
        z, p = z_next, p_next
        times.append(time.perf_counter() - t0)
    return {
        "step_median_s": float(np.median(times)),
        "step_min_s": float(np.min(times)),
        "step_max_s": float(np.max(times)),
        "steps": len(times),
    }


def main(argv: list[str]) -> int:
    if argv[0] == "--step":
        print(json.dumps(step_timing(argv[1])))
        return 0
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
