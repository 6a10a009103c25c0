"""simkit beside skinmodes (bench-only interpreter): its constrained skinning eigenmodes, and
its tutorial simulator as a side of the paired measurement (:class:`Side`, run by ``worker.py``).

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


class Side:
    """simkit's tutorial Fast CoDy simulator as one side of a paired measurement (``worker.py``).

    simkit 0.1.8 ships no complementary-dynamics simulator; its repository's
    tutorial builds one from library calls (reduced products, ``block_coord``
    with a ``polar_svd`` local step and a Cholesky global step).  ``load``
    expresses that recipe in 3D on given modes, clusters and rig (untimed);
    ``steps`` times the solve.  Its rig parameters are least-squares fits of
    the same rig positions (its layout differs from ours).
    """

    name = "simkit"

    def load(self, d: dict) -> dict:
        import scipy.linalg as sla
        from simkit.cluster_grouping_matrices import cluster_grouping_matrices
        from simkit.deformation_jacobian import deformation_jacobian
        from simkit.lbs_jacobian import lbs_jacobian
        from simkit.massmatrix import massmatrix
        from simkit.polar_svd import polar_svd
        from simkit.solvers import block_coord
        from simkit.volume import volume

        X, T, W = np.asarray(d["X"]), np.asarray(d["T"]).astype(np.int64), np.asarray(d["W"])
        labels, Wr = np.asarray(d["labels"]).astype(np.int64), np.asarray(d["Wrig"])
        mu, rho, h, iters = float(d["E"]) / 2.0, float(d["rho"]), float(d["h"]), int(d["iters"])
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
        # The same rig positions as the other sides (skinmodes' p[12 b + 4 i + k] = A_b[i, k]),
        # then simkit's parameters as least-squares fits of them.
        A = np.asarray(d["P"]).reshape(len(d["P"]), -1, 3, 4)
        Xh = np.hstack([X, np.ones((len(X), 1))])
        Xrig = np.einsum("nb,fbik,nk->fni", Wr, A, Xh)
        Jd = np.asarray(J.todense()) if sp.issparse(J) else np.asarray(J)
        self.ps = np.linalg.lstsq(Jd, Xrig.reshape(len(Xrig), -1).T, rcond=None)[0].T[:, :, None]
        self.h, self.iters, self.block_coord = h, iters, block_coord

        def local(zv, p_next):
            c = AMuPGB @ zv + AMuPGJ @ p_next
            return polar_svd(c.reshape(-1, dim, dim))[0].reshape(-1, 1)

        def global_(r, y, q, p_next):
            rhs = BMB @ y / h**2 - BMJ @ q / h**2 + AMuPGB.T @ r - BLJ @ p_next
            return sla.cho_solve(chol, rhs)

        self.local, self.global_ = local, global_
        self.B = B
        self.reset()
        return {"m": int(W.shape[1]), "r": int(labels.max()) + 1}

    def reset(self) -> None:
        ps, h = self.ps, self.h
        self.z = np.zeros((self.B.shape[1], 1))
        self.z_dot = np.zeros_like(self.z)
        self.p = ps[0]
        self.p_dot = (ps[0] - ps[-1]) / h  # the rig already moving, as on the other sides
        self.k = 0

    def steps(self, count: int) -> float:
        """Seconds for ``count`` steps of the tutorial's backward Euler local-global solve."""
        ps, h, L = self.ps, self.h, len(self.ps)
        z, z_dot, p, p_dot, k = self.z, self.z_dot, self.p, self.p_dot, self.k
        t0 = time.perf_counter()
        for _ in range(count):
            k += 1
            p_next = ps[k % L]
            y = z + h * z_dot
            q = p_next - (p + h * p_dot)
            z_next = self.block_coord(
                z.copy(),
                lambda zv, r, y=y, q=q, pn=p_next: self.global_(r, y, q, pn),
                lambda zv, pn=p_next: self.local(zv, pn),
                tolerance=0.0,
                max_iter=self.iters,
            )
            z_dot = (z_next - z) / h
            p_dot = (p_next - p) / h
            z, p = z_next, p_next
        seconds = time.perf_counter() - t0
        self.z, self.z_dot, self.p, self.p_dot, self.k = z, z_dot, p, p_dot, k
        return seconds


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
