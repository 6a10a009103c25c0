"""Reduced dynamics in a (pose-varying) displacement basis, on the full-space reference's own energy.

The validation of the seed's claim (Xu & Barbič, seed 001; issue 29 item 4) needs every basis
run by the same solver as the reference, so only the subspace differs: each step minimises the
reference's backward-Euler incremental potential (same elastic model, same rest state, same
time step) over u = U q instead of over all 3n displacements, by Newton's method with a
backtracking line search to the reference's own tolerance.  Forces and Hessians are evaluated
on every tet (no cubature), so a step's time is the subspace's cost plus a pass over the mesh.

The basis may change every step (the seed's pose-space blend).  As in the seed (§5.2), q is
carried from step to step without re-projection: u is morphed with the basis, so the inertial
prediction is y = x_rig(t+h) ... built from 2 q_k - q_{k-1} in the new basis plus the rig's own
motion 2 x_rig(t) - x_rig(t-h), and the reduced mass is U^T M U.  With a constant basis this is the
Galerkin projection of the reference's step; with a full basis it is the reference's step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import SimulationError
from .reference import FullSpaceReference

MAX_NEWTON = 200  # a safety net only: a step that does not converge raises, it never truncates


@dataclass(frozen=True)
class ReducedRun:
    """u: (steps, n, 3) displacements; iterations: (steps,) Newton iterations; seconds_per_step."""

    u: np.ndarray
    iterations: np.ndarray
    seconds_per_step: float


def constraint_projector(ref: FullSpaceReference) -> Callable[[np.ndarray], np.ndarray]:
    """P(V): the M-orthogonal projection of V (3n, k) onto the reference's constraint C^T u = 0.

    C = M Y (3n, p) with Y M-orthonormal, so P V = V - Y (Y^T M V) = V - M^-1 C (C^T M^-1 C)^-1 C^T V.
    """
    Y = ref.C / ref.m3[:, None]

    def project(V: np.ndarray) -> np.ndarray:
        return V - Y @ (ref.C.T @ V)

    return project


def mass_orthonormal(V: np.ndarray, m3: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """An M-orthonormal basis (3n, k') of span(V) (3n, k), columns with relative weight < rtol dropped.

    By the eigen-decomposition of the Gram matrix V^T M V, twice (the second pass removes the
    round-off of the first); the column order follows decreasing Gram eigenvalue.
    """
    for _ in range(2):  # loop of two passes
        G = V.T @ (m3[:, None] * V)
        w, Q = np.linalg.eigh(0.5 * (G + G.T))
        keep = w > rtol * w.max()
        order = np.argsort(w[keep])[::-1]
        V = V @ (Q[:, keep][:, order] / np.sqrt(w[keep][order]))
    return V


def reduced_step(
    ref: FullSpaceReference, U: np.ndarray, q_pred: np.ndarray, x_rig: np.ndarray, y_rig: np.ndarray, q0: np.ndarray
) -> tuple[np.ndarray, int]:
    """One backward-Euler step in the basis U (3n, k): returns q (k,) and the Newton iterations.

    Minimises 1/(2h^2) ||x_rig + U q - y||_M^2 + Psi(x_rig + U q), y = y_rig + U q_pred, with
    x_rig, y_rig (n, 3) the rig's new positions and its inertial prediction 2 x(t) - x(t - h).
    Converged when the mass-RMS of the Newton step is at most the reference's tolerance.
    """
    h2 = ref.h * ref.h
    m3 = ref.m3
    pose = ref._pose_reference(x_rig)
    Mt = U.T @ (m3[:, None] * U)
    y = y_rig.ravel() + U @ q_pred
    xr = x_rig.ravel()

    def energy(q: np.ndarray) -> float:
        d = xr + U @ q - y
        return 0.5 / h2 * float(d @ (m3 * d)) + ref._elastic((xr + U @ q).reshape(-1, 3), pose)

    q, e = q0.copy(), energy(q0)
    for it in range(1, MAX_NEWTON + 1):
        x = (xr + U @ q).reshape(-1, 3)
        g = U.T @ (m3 * (x.ravel() - y)) / h2 + U.T @ ref._elastic_gradient(x, pose).ravel()
        Hr = U.T @ (ref._elastic_hessian(x, pose) @ U) + Mt / h2
        dq = -sla.solve(0.5 * (Hr + Hr.T), g, assume_a="pos")
        slope, alpha = float(g @ dq), 1.0
        while True:
            cand = q + alpha * dq
            e_new = energy(cand)
            if e_new <= e + 1e-4 * alpha * slope or alpha < 1e-10:
                break
            alpha *= 0.5
        q, e = cand, e_new
        du = U @ (alpha * dq)
        if np.sqrt(np.sum(m3 * du**2) / m3.sum()) <= ref.tol:
            return q, it
    raise SimulationError(f"the reduced step did not converge in {MAX_NEWTON} Newton iterations")


def run_reduced(
    ref: FullSpaceReference,
    bases: Callable[[int], np.ndarray],
    x_rig: Sequence[np.ndarray],
    steps: int,
    q0: np.ndarray | None = None,
    carry: str = "morph",
) -> ReducedRun:
    """A reduced run from rest (or from q0 (r,), held for the first two steps): u (steps, n, 3).

    bases(k): the basis (3n, r) at rig frame k (frames 0..steps + 1, frame k + 1 is time k h, as in
    the reference's loop: x_rig[0] is one step before the start).  carry: "morph" (the seed's
    §5.2: q is carried and the displacement morphs with the basis; the inertia sees
    2 q_k - q_(k-1) in the new basis) or "project" (the inertia sees the full-space displacements
    2 U_k q_k - U_(k-1) q_(k-1), a Galerkin projection of the reference's step onto the new basis).
    """
    r = bases(1).shape[1]
    q = np.zeros(r) if q0 is None else np.asarray(q0, dtype=np.float64).copy()
    q_prev = q.copy()
    if carry not in ("morph", "project"):
        raise SimulationError(f"unknown carry {carry!r}; use 'morph' or 'project'")
    u, u_prev = bases(1) @ q, bases(1) @ q_prev
    us, its = [], []
    t0 = time.perf_counter()
    for k in range(1, steps + 1):
        U = bases(k + 1)
        y_rig = 2.0 * x_rig[k] - x_rig[k - 1]
        if carry == "morph":
            q_pred, start = 2.0 * q - q_prev, q
        else:  # the full-space prediction, least-squares (M) in the new basis
            y_rig = y_rig + (2.0 * u - u_prev).reshape(-1, 3)
            q_pred, start = np.zeros_like(q), U.T @ (ref.m3 * u)  # q_pred 0: y holds it all
        q_new, it = reduced_step(ref, U, q_pred, x_rig[k + 1], y_rig, start)
        q_prev, q = q, q_new
        u_prev, u = u, U @ q
        us.append(u.reshape(-1, 3))
        its.append(it)
    seconds = (time.perf_counter() - t0) / steps
    return ReducedRun(u=np.array(us), iterations=np.array(its), seconds_per_step=seconds)


def reference_run(
    ref: FullSpaceReference, x_rig: Sequence[np.ndarray], steps: int, u0: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """The full-space reference over the same frames: u (steps, n, 3) and seconds per step.

    u0 (n, 3): an initial displacement held for the first two steps (zero by default).
    """
    u = np.zeros_like(x_rig[0]) if u0 is None else u0.copy()
    u_prev, us = u.copy(), []
    t0 = time.perf_counter()
    for k in range(1, steps + 1):
        new, _ = ref.step(u, u_prev, x_rig[k + 1], x_rig[k], x_rig[k - 1])
        u_prev, u = u, new
        us.append(u)
    return np.array(us), (time.perf_counter() - t0) / steps


def relative_errors(u: np.ndarray, u_ref: np.ndarray) -> np.ndarray:
    """||u_k - u_ref,k|| / ||u_ref,k|| per step: u, u_ref (steps, n, 3) -> (steps,)."""
    num = np.linalg.norm((u - u_ref).reshape(len(u), -1), axis=1)
    return num / np.maximum(np.linalg.norm(u_ref.reshape(len(u), -1), axis=1), 1e-300)
