"""Run the paper authors' C++ simulator (fast-cody's fast_cd_pyb) on given inputs.

Run with the bench-only interpreter (.venvs/bench):

    python bench/peers/fastcody_runner.py IN.npz OUT.npz [--subspace]

IN.npz (arrays only): X (n,3), T (t,4), W (n,m) skinning weights, labels (t,),
Wrig (n,b) rig weights, P (s+1, 12b) rig parameters per step in skinmodes'
convention (p[12 b + 4 i + k] = A_b[i, k]), mu (ours: energy mu ||F - R||^2
per volume), rho, h, iters.  OUT.npz: U (s, n, 3) secondary displacement per
step, interleaved like skinmodes.  Prints one JSON line: step timing (median,
min, max over a timed loop with 1 BLAS thread) and, with --subspace,
fast-cody's own subspace construction time for the same mesh and rig.

Conventions translated here: fast-cody stacks xyz blocks ([x_1..x_n, y_1..y_n,
z_1..z_n]), its rig vector is p[r * 4b + 4 bone + c], its ARAP energy is
mu/2 vol ||F - R||^2 (so it gets 2 mu), and its C++ solver object must stay
alive between steps.
"""

from __future__ import annotations

import json
import sys
import time
import types

import numpy as np
import scipy.sparse as sp


def stacked_lbs(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """fast-cody's LBS Jacobian layout: kron(I3, (W (x) 1_4^T) . (1^T (x) [X 1]))."""
    n, k = W.shape
    X1 = np.hstack([X, np.ones((n, 1))])
    inner = np.kron(W, np.ones((1, 4))) * np.kron(np.ones((1, k)), X1)
    return np.kron(np.eye(3), inner)


def to_fastcody_p(p: np.ndarray, bones: int) -> np.ndarray:
    """skinmodes p[12 b + 4 i + k] -> fast-cody p[i * 4B + 4 b + k]."""
    A = p.reshape(bones, 3, 4)
    return A.transpose(1, 0, 2).reshape(-1, 1)


def main(argv: list[str]) -> int:
    src, dst = argv[0], argv[1]
    d = np.load(src)
    X, T, W, labels, Wr = d["X"], d["T"].astype(np.int64), d["W"], d["labels"].astype(np.int64), d["Wrig"]
    P, mu, rho, h, iters = d["P"], float(d["mu"]), float(d["rho"]), float(d["h"]), int(d["iters"])
    n, b = len(X), Wr.shape[1]
    import fast_cd_pyb as fcd

    B = stacked_lbs(X, W)
    J = sp.csc_matrix(stacked_lbs(X, Wr))
    solver_params = fcd.local_global_solver_params(False, iters, 0.0)
    Aeq = sp.csc_matrix((0, 0))
    params = fcd.fast_cd_arap_sim_params(
        X, T.astype(np.int32), B, labels.astype(np.int32)[:, None], J, Aeq, 2.0 * mu, h, rho
    )
    t0 = time.perf_counter()
    sim = fcd.fast_cd_arap_sim("", params, solver_params, False, False)
    precompute_s = time.perf_counter() - t0
    z = np.zeros((B.shape[1], 1))
    p0 = to_fastcody_p(P[0], b)
    # Rig at rest velocity matching skinmodes' initial state (p_prev = 2 p0 - p1 there).
    p_prev = 2.0 * p0 - to_fastcody_p(P[1], b) if len(P) > 1 else p0
    state = fcd.cd_sim_state(z, z.copy(), p0, p_prev)
    U, times = [], []
    for s in range(1, len(P)):
        p = to_fastcody_p(P[s], b)
        t0 = time.perf_counter()
        z_next = sim.step(state.z_curr, p, state, np.zeros_like(z), np.zeros((0, 1)))[:, None]
        times.append(time.perf_counter() - t0)
        state.z_prev = state.z_curr.copy()
        state.p_prev = state.p_curr.copy()
        state.z_curr = z_next.copy()
        state.p_curr = p.copy()
        u = (B @ z_next).reshape(3, n).T  # stacked -> interleaved
        U.append(u)
    np.savez(dst, U=np.asarray(U))
    out = {
        "step_median_s": float(np.median(times)),
        "step_min_s": float(np.min(times)),
        "step_max_s": float(np.max(times)),
        "steps": len(times),
        "precompute_s": precompute_s,
    }
    if "--subspace" in argv:
        out["subspace_s"] = subspace_time(X, T, Wr, W.shape[1], int(labels.max()) + 1)
    print(json.dumps(out))
    return 0


def subspace_time(X: np.ndarray, T: np.ndarray, Wr: np.ndarray, modes: int, clusters: int) -> float:
    """fast-cody's own pipeline from its rig-animation app: constraint, modes, clusters."""
    fc = _import_fast_cody()
    t0 = time.perf_counter()
    J = fc.lbs_jacobian(X, Wr)
    C = fc.complementary_constraint_matrix(X, T, J, dt=1e-3)
    C2 = fc.lbs_weight_space_constraint(X, C)
    fc.skinning_subspace(X, T, modes, clusters, C=C2, constraint_enforcement="optimal")
    return time.perf_counter() - t0


def _import_fast_cody():
    """fast_cody's Python package, its GUI-only imports stubbed and libigl >= 2.6's boundary_facets wrapped."""
    # fast_cody's package __init__ imports its viewers and face-tracking app,
    # which need polyscope, mediapipe and OpenCV; the functions used here use
    # none of them, so empty stand-ins keep those GUI stacks out of the env.
    for name in ("mediapipe", "cv2", "polyscope", "polyscope.imgui"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["polyscope"].imgui = sys.modules["polyscope.imgui"]  # type: ignore[attr-defined]
    import fast_cody as fc
    import igl

    if not hasattr(igl, "_skinmodes_wrapped"):
        fc_bf = igl.boundary_facets

        def boundary_facets(T_):  # libigl >= 2.6 returns a tuple; fast-cody wants the faces
            out = fc_bf(T_)
            return out[0] if isinstance(out, tuple) else out

        igl.boundary_facets = boundary_facets
        igl._skinmodes_wrapped = True
    return fc


class Side:
    """fast-cody as one side of a paired measurement (``worker.py``; see ``ours_runner.py`` for the jobs)."""

    name = "fast-cody"

    def __init__(self) -> None:
        self.fc = _import_fast_cody()
        import fast_cd_pyb as fcd

        self.fcd = fcd
        self.keep: list = []

    def prepare(self, d: dict, m: int, r: int) -> dict:
        """Its rig-animation app's pipeline from raw arrays to a ready simulator, all timed.

        LBS Jacobian, complementarity constraint, its weight-space form, skinning
        modes and clusters (``skinning_subspace``), then the C++ simulator's
        precomputation (``fast_cd_sim``).  ARAP with 2 mu (its energy is mu/2 ||F - R||^2).
        """
        fc = self.fc
        # int32 tets, as its apps read them from .msh files (its C++ binding takes no other type).
        X, T, Wr = np.asarray(d["X"]), np.asarray(d["T"]).astype(np.int32), np.asarray(d["Wrig"])
        mu = float(d["E"]) / 2.0  # Poisson ratio 0
        t0 = time.perf_counter()
        J = fc.lbs_jacobian(X, Wr)
        C = fc.complementary_constraint_matrix(X, T, J, dt=1e-3)
        C2 = fc.lbs_weight_space_constraint(X, C)
        B, labels, W = fc.skinning_subspace(X, T, m, r, C=C2, constraint_enforcement="optimal")
        # Its binding wants labels as an (t, 1) int32 column; skinning_subspace returns them flat.
        labels = np.asarray(labels).reshape(-1, 1).astype(np.int32)
        sim = fc.fast_cd_sim(
            X,
            T,
            B,
            labels,
            J,
            mu=2.0 * mu,
            rho=float(d["rho"]),
            h=float(d["h"]),
            max_iters=int(d["iters"]),
            threshold=0.0,
        )
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "m": int(W.shape[1]), "r": len(np.unique(labels)), "_keep": sim}

    def load(self, d: dict) -> dict:
        """The C++ simulator on given modes W and clusters (skinmodes'), untimed."""
        fcd = self.fcd
        X, T, W = np.asarray(d["X"]), np.asarray(d["T"]).astype(np.int32), np.asarray(d["W"])
        labels, Wr = np.asarray(d["labels"]).astype(np.int32), np.asarray(d["Wrig"])
        mu = float(d["E"]) / 2.0
        self.n, self.b = len(X), Wr.shape[1]
        self.B = stacked_lbs(X, W)
        J = sp.csc_matrix(stacked_lbs(X, Wr))
        # Its threshold (the converged pairing's): a local-global solve stops once its residual is
        # below it, or at max_iters (to_convergence=False: with True it ignores max_iters).
        solver_params = fcd.local_global_solver_params(False, int(d["iters"]), float(d.get("threshold", 0.0)))
        Aeq = sp.csc_matrix((0, 0))
        params = fcd.fast_cd_arap_sim_params(
            X, T, self.B, labels[:, None], J, Aeq, 2.0 * mu, float(d["h"]), float(d["rho"])
        )
        self.sim = fcd.fast_cd_arap_sim("", params, solver_params, False, False)
        self.sol = self.sim.sol()  # taken once and kept: it reports prev_solve_iters
        self.keep = [solver_params, Aeq, params, J]  # the C++ side holds references into these
        self.P = np.array([to_fastcody_p(p, self.b) for p in np.asarray(d["P"])])
        self.reset()
        return {"m": int(W.shape[1]), "r": int(labels.max()) + 1}

    def reset(self) -> None:
        z = np.zeros((self.B.shape[1], 1))
        self.state = self.fcd.cd_sim_state(z, z.copy(), self.P[0].copy(), self.P[-1].copy())
        self.zero = np.zeros_like(z)
        self.bc = np.zeros((0, 1))
        self.k = 0

    def steps(self, count: int) -> float:
        """Seconds for ``count`` steps: the C++ step and its app's state update (``fast_cd_state.update``)."""
        sim, state, P, L = self.sim, self.state, self.P, len(self.P)
        k = self.k
        t0 = time.perf_counter()
        for _ in range(count):
            k += 1
            p = P[k % L]
            z_next = sim.step(state.z_curr, p, state, self.zero, self.bc)[:, None]
            state.z_prev = state.z_curr.copy()
            state.p_prev = state.p_curr.copy()
            state.z_curr = z_next.copy()
            state.p_curr = p.copy()
        seconds = time.perf_counter() - t0
        self.k = k
        self.last_iterations = int(self.sol.prev_solve_iters)  # the last step's
        return seconds

    def displacement(self) -> np.ndarray:
        """Secondary displacement (n, 3), interleaved like skinmodes'."""
        return (self.B @ self.state.z_curr).reshape(3, self.n).T


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
