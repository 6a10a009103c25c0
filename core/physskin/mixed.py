"""The seed's mixed energy, solved literally: Psi(sym(R^T F)) with R fixed from the rig (Song et al., eqs. 5-12).

For validation beside the shipped energy (``solve.py``).  The seed condenses its
mixed system (eq. 12) with "a fast, batched pseudo inverse" of the 9 x 6 block
[R]: the per-tet strain it penalises is the symmetric 6-vector s = pinv([R]) vec F,
which is sym(R^T F).  With the quadratic material the shipped skin uses,

    Psi(S) = mu ||S - I||^2 + lam / 2 (tr S - 3)^2,    E(x) = sum_e V_e Psi(sym(R_e^T F_e)),

E is quadratic in x for fixed R, so a frame is one sparse SPD solve (the seed's
Algorithm 1).  Its only difference from the shipped energy's ARAP part,
mu ||F - R||^2 = mu ||R^T F - I||^2, is the skew part: ||R^T F - I||^2 =
||sym(R^T F) - I||^2 + ||skew(R^T F)||^2.  The mixed energy does not see a tet
turning away from its R, and a turned tet can lower its symmetric strain by
growing: R^T F = s Q with Q a turn by theta about a has sym(R^T F) with
eigenvalues s (along a) and s cos(theta) (twice), so the energy's minimum
across a is s = 1 / cos(theta), a volume ratio of 1 / cos^2(theta) (+33 % at 30°).
That is how the literal energy inflates a twisted joint (``bench/physskin.py``,
the energy table; the README says what was measured).

Row-major flattening per tet as ``core.model.fem``: vec(F)[3 i + j] = F_ij.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..linalg.spd import factorize_spd
from .solve import PhysicsSkin


def mixed_strain(F: np.ndarray, R: np.ndarray) -> np.ndarray:
    """S = sym(R^T F) (t, 3, 3) for deformation gradients F and rotations R (t, 3, 3)."""
    M = np.matmul(np.swapaxes(R, 1, 2), F)
    return 0.5 * (M + np.swapaxes(M, 1, 2))


def mixed_energy_density(F: np.ndarray, R: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Psi(sym(R^T F)) (t,) per unit rest volume; F, R (t, 3, 3), mu, lam (t,)."""
    E = mixed_strain(F, R) - np.eye(3)
    tr = np.einsum("tii->t", E)
    return mu * np.einsum("tij,tij->t", E, E) + 0.5 * lam * tr * tr


def mixed_stress(F: np.ndarray, R: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """dPsi/dF (t, 3, 3) = R (2 mu (S - I) + lam tr(S - I) I), S = sym(R^T F).

    d<G, sym(R^T F)> = <R G, dF> for symmetric G, so the stress is R times Psi's derivative in S.
    """
    E = mixed_strain(F, R) - np.eye(3)
    tr = np.einsum("tii->t", E)
    dS = 2.0 * mu[:, None, None] * E + (lam * tr)[:, None, None] * np.eye(3)
    return np.matmul(R, dS)


def mixed_stiffness(R: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """d^2 Psi / dF^2 (t, 9, 9) on row-major vec F; constant in F (Psi is quadratic in F for fixed R).

    vec(R^T F) = L vec F with L = R^T (x) I_3; the Hessian is L^T (2 mu P_sym + lam vec I vec I^T) L,
    P_sym the projector onto symmetric matrices.
    """
    I3 = np.eye(3)
    swap = np.einsum("il,jk->ijkl", I3, I3).reshape(9, 9)  # vec M -> vec M^T
    P = 0.5 * (np.eye(9) + swap)
    v = I3.ravel()
    L = np.einsum("tki,jl->tijkl", R, I3).reshape(-1, 9, 9)  # (R^T (x) I)[3i+j, 3k+l] = R_ki delta_jl
    core = 2.0 * mu[:, None, None] * P + lam[:, None, None] * np.outer(v, v)
    return np.matmul(np.swapaxes(L, 1, 2), np.matmul(core, L))


def mixed_energy(skin: PhysicsSkin, R: np.ndarray, x: np.ndarray) -> float:
    """E(x) = sum_e V_e Psi(sym(R_e^T F_e)) (J) at positions x (n, 3); R (t, 3, 3)."""
    F = (skin.K @ np.asarray(x, dtype=np.float64).reshape(-1)).reshape(-1, 3, 3)
    return float(skin.mesh.volumes @ mixed_energy_density(F, R, skin.mu, skin.lam))


def mixed_gradient(skin: PhysicsSkin, R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dE/dx (n, 3) = K^T (V_e P_e) at positions x (n, 3)."""
    F = (skin.K @ np.asarray(x, dtype=np.float64).reshape(-1)).reshape(-1, 3, 3)
    P = mixed_stress(F, R, skin.mu, skin.lam) * skin.mesh.volumes[:, None, None]
    return (skin.K.T @ P.reshape(-1)).reshape(-1, 3)


def mixed_hessian(skin: PhysicsSkin, R: np.ndarray) -> sp.csr_matrix:
    """d^2E/dx^2 (3n x 3n) = K^T blockdiag(V_e H_e) K, H_e = :func:`mixed_stiffness`."""
    H = mixed_stiffness(R, skin.mu, skin.lam) * skin.mesh.volumes[:, None, None]
    t = len(H)
    rows = np.repeat(np.arange(9 * t).reshape(t, 9), 9, axis=1).ravel()
    cols = np.tile(np.arange(9 * t).reshape(t, 9), (1, 9)).ravel()
    block = sp.csr_matrix((H.ravel(), (rows, cols)), shape=(9 * t, 9 * t))
    return sp.csr_matrix(skin.K.T @ block @ skin.K)


def mixed_positions(skin: PhysicsSkin, transforms: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The mixed energy's minimiser (n, 3) with the skin's pins, for bone transforms (b, 3, 4) and R (t, 3, 3).

    One Newton step from the rest positions with the pins at their targets is exact (E is quadratic):
    A_ff u_f = -g(X + u_p)_f, refactoring A(R) every frame as the seed does.  Soft pins add their
    springs k/2 |x_p - t_p|^2 to the energy.
    """
    X = skin.mesh.X
    x = np.array(X)
    targets = skin.pin_targets(transforms)
    A = mixed_hessian(skin, R)
    g = mixed_gradient(skin, R, x if skin.soft else _with_pins(x, skin, targets))
    if skin.pin_stiffness is not None:  # soft pins (skin.soft, spelled for mypy)
        k = np.zeros(skin.mesh.n)
        k[skin.pins] = skin.pin_stiffness
        A = sp.csr_matrix(A + sp.diags(np.repeat(k, 3)))
        g[skin.pins] -= skin.pin_stiffness[:, None] * (targets - X[skin.pins])
    else:
        x = _with_pins(x, skin, targets)
    free = skin.free
    coords = np.repeat(X, 3, axis=0)[free]
    d = factorize_spd(A[free][:, free], coords).solve(-g.reshape(-1)[free])
    out = x.reshape(-1)
    out[free] += d
    return out.reshape(-1, 3)


def _with_pins(x: np.ndarray, skin: PhysicsSkin, targets: np.ndarray) -> np.ndarray:
    """x (n, 3) with the hard pins moved to their targets (p, 3)."""
    y = np.array(x)
    y[skin.pins] = targets
    return y
