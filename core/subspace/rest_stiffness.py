"""The reduced model's stiffness at rest: the Hessian of its hyper-reduced elastic energy at Z = 0.

It gives the model's natural frequencies (:mod:`core.dynamics.wobble`) and its quasi-static
response to a steady acceleration, which the flesh calibration matches to the Wobble
(:mod:`core.subspace.flesh`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .reduced import ReducedModel


def rest_hessian(model: ReducedModel, arap: bool, fiber_scale: float = 0.0) -> np.ndarray:
    """Hessian (12m x 12m) of the hyper-reduced elastic energy at the rest shape (unscaled, J/m^2).

    Ordering is row-major vec(Z) for Z (4m x 3): index 3a + i.  With
    G_c = F_c - I (linear in Z) the cluster term -2 mu_c tr(R_c^T F_c) is
    -2 mu_c (3 + tr G_c + ||skew G_c||^2 / 2) to second order, and the volume
    term lam_c/2 (tr G_c)^2, so

        K = 2 A_L (x) I3 - 2 sum_c mu_c dW_c^T dW_c + sum_c lam_c dt_c dt_c^T

    with W_c = skew(G_c) and t_c = tr(G_c).  A model's fibers (:mod:`core.model.fibers`) keep
    their own stiffness scale, relative to the plain clusters': fiber_scale (0 leaves them out;
    :func:`fiber_hessian` gives their part).
    """
    q = 4 * model.m
    plain = np.ones(model.r, dtype=bool) if model.fiber is None else ~np.asarray(model.fiber, dtype=bool)
    r = int(plain.sum())
    Cc = model.C_W.reshape(model.r, 3, q)[plain]  # Cc[c, j, a]: d F_c[i, j] / d Z[a, i]
    mu, lam = model.cluster_mu[plain], model.cluster_lam[plain]
    K = 2.0 * np.kron(model.A_L, np.eye(3))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        # dW_ij / dZ[a, k] = (Cc[c, j, a] delta_ik - Cc[c, i, a] delta_jk) / 2; ||W||^2 = 2 sum_{i<j} W_ij^2.
        grad = np.zeros((r, q, 3))
        grad[:, :, i] = 0.5 * Cc[:, j, :]
        grad[:, :, j] = -0.5 * Cc[:, i, :]
        dW = grad.reshape(r, 3 * q)
        K -= 4.0 * (dW * mu[:, None]).T @ dW
    if not arap:
        dt = Cc.transpose(0, 2, 1).reshape(r, 3 * q)  # d tr(G_c) / d Z[a, k] = Cc[c, k, a]
        K += (dt * lam[:, None]).T @ dt
    if fiber_scale > 0.0 and model.fiber is not None and model.A_F is not None and np.any(model.fiber):
        K += fiber_scale * fiber_hessian(model)
    return 0.5 * (K + K.T)


def fiber_hessian(model: ReducedModel) -> np.ndarray:
    """The fiber clusters' part of the rest Hessian (12m x 12m) at fiber scale 1 (:mod:`core.model.fibers`).

    A fiber cluster's rest gradient is F0 = the weighted mean of its tets' D_e (the rig at rest through its
    rows, SPD), its rest stretch S0 = F0, so its term -2 mu_c ||(F0 + G) S0||_* is expanded about the SPD
    P0 = F0 S0 = U diag(s) U^T: the nuclear norm's curvature there is sum_(i<j) 2 / (s_i + s_j) along the
    twists t_ij = U (e_i e_j^T - e_j e_i^T) U^T / sqrt 2 (zero on stretches), and t_ij : (G S0) =
    (t_ij S0) : G.  With the quadratic part 2 A_F (x) I3.  For F0 = I this is the plain clusters' formula.
    """
    q = 4 * model.m
    fiber = np.asarray(model.fiber, dtype=bool)
    assert model.A_F is not None and model.C_R is not None
    Cc = model.C_W.reshape(model.r, 3, q)[fiber]  # (r', 3, q): d F_c[i, j] / d Z[a, i] = Cc[c, j, a]
    b = model.C_R.shape[1] // 4
    eye = np.zeros((4 * b, 3))
    for k in range(3):
        eye[4 * np.arange(b) + k, k] = 1.0  # the rest pose: every bone's affine map the identity
    F0 = (model.C_R @ eye).reshape(model.r, 3, 3)[fiber].transpose(0, 2, 1)  # (r', 3, 3): F0[c, i, j]
    F0 = 0.5 * (F0 + F0.transpose(0, 2, 1))
    s, U = np.linalg.eigh(F0 @ F0)
    K = 2.0 * np.kron(model.A_F, np.eye(3))
    mu = model.cluster_mu[fiber]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        t = (U[:, :, i, None] * U[:, None, :, j] - U[:, :, j, None] * U[:, None, :, i]) / np.sqrt(2.0)
        V = t @ F0  # (r', 3, 3): the twist's direction in G
        w = 2.0 / np.maximum(s[:, i] + s[:, j], 1e-300)
        # d (V : G) / d Z[a, k] = sum_j' V[k, j'] Cc[c, j', a]  (row-major vec: 3a + k)
        g = np.einsum("ckj,cja->cak", V, Cc).reshape(len(mu), 3 * q)
        K -= 2.0 * (g * (mu * w)[:, None]).T @ g
    return K


def rest_modes(K: np.ndarray, A_M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w^2 (k,) ascending, modes V (12m, k)) of K v = w^2 (A_M (x) I3) v: the model's natural modes at rest.

    K: (12m, 12m) reduced stiffness (:func:`rest_hessian` at the scales wanted), row-major vec(Z) (index
    3a + i); A_M: (4m, 4m) the reduced mass.  Both are symmetrised first (round-off).
    """
    M = np.kron(A_M, np.eye(3))
    return sla.eigh(0.5 * (K + K.T), 0.5 * (M + M.T))


def mode_energies(Y: np.ndarray, masses: np.ndarray, V: np.ndarray) -> np.ndarray:
    """(n, k) each mode's kinetic energy per vertex, m_v |u_v|^2 with u = Y Z (Z: the mode as 4m x 3).

    Y: (n, 4m) the subspace's basis on the vertices; masses: (n,); V: (12m, k) modes (row-major vec(Z)).
    """
    U = np.einsum("na,aik->nik", Y, V.reshape(-1, 3, V.shape[1]))  # (n, 3, k)
    return masses[:, None] * np.sum(U**2, axis=1)
