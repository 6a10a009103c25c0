"""Flesh at the Wobble: each part's response to its rig's acceleration, calibrated and in the subspace (issue 37).

Why.  A damped oscillator at frequency f carried by an acceleration a sags a / (2 pi f)^2.
The elastic body does not: measured on real characters, calibrating the model's
slowest motion (a tail, a leg) to f left the torso's own frequency 4-7 x higher, and
the 16 lowest eigenmodes gave it no share at all (husky: 0.000), so bellies and bodies
sagged 1/40 - 1/1000 of a / (2 pi f)^2 (``docs/where_it_moves.md``, "Flesh").  Two things
are needed, and are done here:

1. **A degree of freedom for each part's sag.**  The quasi-static response of the
   complementary system to a uniform load on part P, r_P = H^-1 M l_P in weight space
   (l_P: the part's load, :class:`core.model.parts.Parts`; the solve stays M-orthogonal to
   the constraint's directions Y, so J_w r_P = 0), is the shape that part sags into
   under its own acceleration: a load-dependent Ritz vector.  With its 12 affine
   degrees of freedom it carries the sag along any direction, and the rotations'.
   :func:`response_weights` gives them; :func:`add_weights` joins them to the modes.
2. **The same stiffness, part by part.**  A scale factor per part (blended across joints
   geometrically, by the tets' mean part loads) is found so that every part sags the
   same under a uniform acceleration of the whole body: first on the weight-space
   responses (a cheap, rough start), then on the reduced model itself
   (:func:`reduced_sags`: the quasi-static response of the 12m-dof model to a unit
   acceleration along x, y and z, the exact thing the simulation will do slowly).  The
   common sag s_ref (m per m/s^2 at stiffness scale 1) defines the model's Wobble
   frequency omega_ref = 1 / sqrt(s_ref): the Wobble setting maps omega_ref to f, so every
   part sags a / (2 pi f)^2 and rings at about f.

Every figure used is a norm over a part's own surface vertices or a ratio of them, so
the factors and the reference are invariant under rotations, translations and
scaling of the character (the reference scales with it as 1/size).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..errors import SubspaceError
from ..geometry.tetmesh import TetMesh
from ..linalg.spd import factorize_spd
from ..model.constraint import normalization
from ..model.parts import Parts
from ..model.rig import lbs_basis
from .reduced import ReducedModel
from .rest_stiffness import mode_energies, rest_hessian, rest_modes

# No mode of the calibrated flesh rings slower than this share of the reference frequency: the constraint
# holds some flesh whatever its stiffness (the platformer's torso, 8 tets between its head and its hips), its
# sag cannot reach the others' and the calibration softened it until it rang at 0.7-2 Hz at Wobble 3 Hz.
FLOOR = 0.6
FLOOR_ROUNDS = 6
# ... a mode with at least this share of its kinetic energy in one part (:func:`raise_floor`), which makes under
# SEEN of that part's quasi-static sag (:func:`slow_modes`).
LOCAL_MODE = 0.5
SEEN = 0.05
# A part whose stiffest direction's mean-square response is below this share of the next one's is elongated
# (a tail, an ear, a limb: its own length); its sag is read across it (:func:`directional_sag`).
ELONGATED = 1.0 / 16.0
# Calibration rounds (at most) on the weight-space responses, then on the reduced model; a stage stops once
# no part is more than CONVERGED (in log: 5 %) from the common sag.
WEIGHT_ROUNDS = 12
REDUCED_ROUNDS = 16
CONVERGED = 0.05
# Each round moves the log factors this share of the way: parts are coupled at their joints (softening one
# lets its neighbours sag more too), and the full step overshot on the stag (deviations 2.1, 5.0, 4.9).
RELAX = 0.5
# A part's stiffness is scaled by at most this factor either way (a part the constraint holds
# everywhere sags nothing whatever its stiffness; it is left as it is).
FACTOR_RANGE = 1e3
# A part whose sag is below this share of the largest is held (planted, rigid, the leak's core): not calibrated.
HELD_SAG = 1e-3
# The sag of a part: this percentile of |u| over its surface vertices (the jiggle shows at the surface; a
# high percentile rather than the maximum, so one vertex at a sharp corner does not decide it).
SAG_PERCENTILE = 95.0
# A candidate weight whose LBS columns keep less than this share of their norm outside the span of the
# others (M-norm, in every direction) is dependent on them and left out: the reduced mass matrix would
# be singular.
INDEPENDENT = 1e-3


def constrained_solver(
    H: sp.spmatrix,
    masses: np.ndarray,
    Y: np.ndarray,
    coords: np.ndarray | None = None,
    free: np.ndarray | None = None,
) -> Callable[[np.ndarray], np.ndarray]:
    """solve(B): X minimising tr(X^T H X)/2 - tr(X^T B) with Y^T M X = 0 and X = 0 off ``free``, B (n, k).

    H: (n, n) PSD weight-space Hessian; masses: (n,) diagonal of M; Y: (n, c) M-orthonormal directions
    the solution must be M-orthogonal to (the constraint's, zero on held vertices); free: (f,) the
    vertices that may move (None: all).  The constraint removes H's null space (the rig's own motions),
    so the projected system is definite; a tiny negative shift keeps the factorisation definite if H
    itself is singular.
    """
    M = np.asarray(masses, dtype=np.float64)
    n = len(M)
    idx = np.arange(n) if free is None else np.asarray(free)
    Hf = sp.csc_matrix(H)[idx][:, idx]
    Mf, Yf = M[idx], Y[idx]
    sigma = -1e-8 * float(Hf.diagonal().mean() / Mf.mean())
    solver = factorize_spd(Hf - sigma * sp.diags(Mf), None if coords is None else coords[idx])
    MY = Mf[:, None] * Yf
    Z = np.asarray(solver.solve(MY)) if Yf.shape[1] else np.zeros((len(idx), 0))
    chol = sla.cho_factor(0.5 * (MY.T @ Z + Z.T @ MY)) if Yf.shape[1] else None

    def solve(B: np.ndarray) -> np.ndarray:
        X = np.asarray(solver.solve(np.asarray(B)[idx]))
        if chol is not None:
            X = X - Z @ sla.cho_solve(chol, MY.T @ X)
        out = np.zeros((n, *X.shape[1:]))
        out[idx] = X
        return out

    return solve


def response_weights(solve: Callable[[np.ndarray], np.ndarray], masses: np.ndarray, loads: np.ndarray) -> np.ndarray:
    """(n, P) r_P = H^-1 M l_P: each part's quasi-static sag under a uniform load (module doc, 1).

    solve: :func:`constrained_solver`; masses: (n,); loads: (n, P) (:class:`core.model.parts.Parts`).
    """
    return solve(np.asarray(masses)[:, None] * np.asarray(loads))


def part_surfaces(mesh: TetMesh, parts: Parts) -> list[np.ndarray]:
    """Each part's surface tet vertices (sorted indices), where its sag is read; the part's own vertices
    where it has none on the surface (a part inside another)."""
    own = np.asarray(parts.loads).argmax(axis=1)
    boundary = np.zeros(mesh.n, dtype=bool)
    boundary[mesh.boundary_vertices()] = True
    out = []
    for p in range(parts.count):
        mine = own == p
        surface = np.flatnonzero(mine & boundary)
        out.append(surface if len(surface) else np.flatnonzero(mine))
    return out


def weight_space_sags(responses: np.ndarray, surfaces: list[np.ndarray]) -> np.ndarray:
    """(P,) SAG_PERCENTILE of |r_P| over part P's surface, for the parts' own responses (n, P)."""
    r = np.abs(np.asarray(responses))
    return np.array([np.percentile(r[s, p], SAG_PERCENTILE) if len(s) else 0.0 for p, s in enumerate(surfaces)])


def reduced_sags(
    model: ReducedModel, arap: bool, loads: np.ndarray, surfaces: list[np.ndarray], fiber_scale: float = 0.0
) -> np.ndarray:
    """(P,) each part's quasi-static sag in the reduced model under a unit acceleration of what it carries
    (m per m/s^2 at stiffness scale 1), along the direction that decides how it rings
    (:func:`directional_sag`).

    The load of part P accelerated by g along e_i is the inertial force M l_P (g e_i) (loads (n, P));
    in the reduced coordinates (row-major vec Z, index 3a + i) it is Y^T M l_P at coordinate i.
    K (12m x 12m) is the model's rest Hessian (:func:`rest_hessian`, its fibers at fiber_scale times
    the flesh's stiffness), regularised at round-off for free directions.
    """
    K = rest_hessian(model, arap, fiber_scale)
    K = K + 1e-12 * float(np.trace(K)) / len(K) * np.eye(len(K))
    Y = model.basis()
    g = Y.T @ (model.masses[:, None] * np.asarray(loads))  # (4m, P)
    P = g.shape[1]
    F = np.zeros((len(K), 3 * P))
    for i in range(3):
        F[i::3, i * P : (i + 1) * P] = g
    Z = sla.solve(K, F, assume_a="sym")
    out = np.zeros(P)
    for p, s in enumerate(surfaces):
        if len(s):
            out[p] = directional_sag(np.stack([Y[s] @ Z[:, i * P + p].reshape(-1, 3) for i in range(3)], axis=2))
    return out


def directional_sag(U: np.ndarray) -> float:
    """A part's sag from its surface vertices' responses U (k, 3, 3) (U[v, :, i]: vertex v's displacement under a
    unit acceleration along e_i): the SAG_PERCENTILE of |U_v e| along the load direction e that decides how it
    rings.

    The load directions' mean-square responses are the eigenvalues of sum_v U_v^T U_v.  A body answers a
    jolt along its stiffest direction least, and rings there fastest: calibrated on the RMS of the three
    directions (the first version: the softest one's, in effect) bodies rang 20-50 % above the Wobble
    (the creature's belly at 4.4 Hz at Wobble 3 Hz).  So e is the stiffest direction, unless the part is
    elongated (that direction's mean square under ELONGATED of the next one's: along a tail, an ear or a
    limb, where nothing swings and the fibers hold the length), then the next stiffest, across it.
    Rotation-invariant: e turns with the character.
    """
    lam, E = np.linalg.eigh(np.einsum("vki,vkj->ij", U, U))
    k = 1 if lam[0] < ELONGATED * lam[1] else 0
    return float(np.percentile(np.linalg.norm(U @ E[:, k], axis=1), SAG_PERCENTILE))


def tet_factors(mesh: TetMesh, parts: Parts, log_factors: np.ndarray) -> np.ndarray:
    """(t,) the stiffness scale of each tet: exp of its mean part loads times the parts' log factors.

    Geometric across a joint: a tet half in each of two parts gets the geometric mean of their factors.
    Clipped to FACTOR_RANGE either way.
    """
    mean_loads = np.asarray(parts.loads)[mesh.T].mean(axis=1)  # (t, P)
    bound = np.log(FACTOR_RANGE)
    return np.exp(np.clip(mean_loads @ log_factors, -bound, bound))


def _update(log_factors: np.ndarray, sags: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """One calibration step: (new log factors, calibrated mask, reference sag, largest deviation).

    A part sagging s_P under the body's acceleration is stiffened by s_P / s_ref (the sag goes as
    1 / stiffness), s_ref the parts' geometric mean: every part then sags s_ref, to first order.
    """
    on = sags > HELD_SAG * max(float(sags.max()), 1e-300)
    ref = float(np.exp(np.mean(np.log(sags[on]))))
    step = np.zeros_like(log_factors)
    step[on] = RELAX * np.log(sags[on] / ref)
    bound = np.log(FACTOR_RANGE)
    new = np.clip(log_factors + step, -bound, bound)
    # A held part's own sag does not depend on its stiffness, but the joints it shares with its neighbours
    # do: left at 1 while the others moved, it made those joints softer or stiffer than either side.
    new[~on] = float(np.mean(new[on]))
    return new, on, ref, float(np.abs(step).max())


def add_weights(W: np.ndarray, extra: np.ndarray, masses: np.ndarray, Y: np.ndarray, X: np.ndarray) -> np.ndarray:
    """M-orthonormal modes W (n, m) and candidate weights extra (n, k) -> M-orthonormal (n, m + j), j <= k.

    Each candidate is M-projected off the constraint's directions Y (so J_w W = 0 still holds) and off the
    weights kept so far (Gram-Schmidt, twice), then kept only if its LBS basis columns (the weight times
    [X | 1], X normalised as the model does) add independent directions (:data:`INDEPENDENT`): a response
    that repeats what the modes already move would make the reduced mass matrix singular.
    """
    M = np.asarray(masses, dtype=np.float64)
    centre, scale = normalization(X)
    Xn = (X - centre) / scale
    basis = lbs_basis(W, Xn)  # (n, 4m)
    G = basis.T @ (M[:, None] * basis)
    try:
        L = np.linalg.cholesky(0.5 * (G + G.T))
    except np.linalg.LinAlgError as exc:
        raise SubspaceError(
            f"the {W.shape[1]} modes are not independent on this tet mesh ({exc}); lower the number of modes "
            "or raise the tet resolution"
        ) from exc
    Q = sla.solve_triangular(L, basis.T, lower=True).T  # M-orthonormal span
    kept = np.asarray(W, dtype=np.float64)
    for j in range(extra.shape[1]):
        e = np.asarray(extra[:, j], dtype=np.float64)
        before = float(np.sqrt(M @ e**2))
        for _ in range(2):  # twice: one pass leaves O(eps * cond) of the removed directions
            if Y.shape[1]:
                e = e - Y @ (Y.T @ (M * e))
            e = e - kept @ (kept.T @ (M * e))
        norm = float(np.sqrt(M @ e**2))
        if not norm > INDEPENDENT * before:
            continue  # what is left is round-off: the modes and the constraint hold this weight already
        e = e / norm
        B = lbs_basis(e[:, None], Xn)  # (n, 4)
        G0 = B.T @ (M[:, None] * B)
        P = B - Q @ (Q.T @ (M[:, None] * B))
        P = P - Q @ (Q.T @ (M[:, None] * P))
        G1 = P.T @ (M[:, None] * P)
        try:
            share = sla.eigh(0.5 * (G1 + G1.T), 0.5 * (G0 + G0.T), eigvals_only=True)
        except (np.linalg.LinAlgError, ValueError):
            continue  # its own four columns are dependent (a weight on a plane or a point)
        if share.min() < INDEPENDENT**2:
            continue
        g, V = np.linalg.eigh(0.5 * (G1 + G1.T))
        Q = np.concatenate([Q, P @ (V / np.sqrt(g))], axis=1)
        kept = np.concatenate([kept, e[:, None]], axis=1)
    return kept


def calibrate(
    mesh: TetMesh, parts: Parts, sags: Callable[[np.ndarray], np.ndarray], log_factors: np.ndarray, rounds: int
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """(log factors (P,), the parts' last sags (P,), each round's largest deviation): ``rounds`` steps of
    the calibration (module doc, 2) from ``log_factors``.

    sags(factors (t,)) -> (P,) the parts' sags with the tets' stiffness scaled so: the weight-space
    responses' (cheap: one sparse factorisation) or the reduced model's (:func:`reduced_sags`).
    The last sags returned are measured at the returned factors; it stops early once every part is within
    :data:`CONVERGED` of the common sag.
    """
    logs = np.asarray(log_factors, dtype=np.float64)
    history: list[float] = []
    current = sags(tet_factors(mesh, parts, logs))
    for _ in range(rounds):
        updated, _, _, deviation = _update(logs, current)
        history.append(deviation)
        if deviation <= CONVERGED * RELAX:  # the step is RELAX of the deviation
            break
        logs = updated
        current = sags(tet_factors(mesh, parts, logs))
    return logs, current, history


def reference(sags: np.ndarray) -> tuple[float, np.ndarray]:
    """(the parts' common sag s_ref, each part's sag over it (NaN where held)) from their sags (P,)."""
    on = sags > HELD_SAG * max(float(sags.max()), 1e-300)
    if not on.any():
        return 0.0, np.full(len(sags), np.nan)
    ref = float(np.exp(np.mean(np.log(sags[on]))))
    return ref, np.where(on, sags / ref, np.nan)


def slow_modes(
    model: ReducedModel, arap: bool, loads: np.ndarray, carried: np.ndarray, below: float
) -> tuple[np.ndarray, np.ndarray]:
    """(omega (k,), shares (k, P)): the reduced model's modes slower than ``below`` (rad/s, stiffness scale 1,
    fibers left out) that the calibration cannot see, and each one's kinetic-energy share in each part.

    The modes solve K v = omega^2 M v on the 12m coordinates (K: :func:`rest_hessian`, M = A_M (x) I3); a
    mode's share in part P is sum_v loads[v, P] m_v |u_v|^2 / sum_v m_v |u_v|^2 with u = Y v (n, 3) (loads
    (n, P): the parts' own).  Unseen: in the part it lives in most, the mode makes under SEEN of the part's
    quasi-static sag under what it carries (carried (n, P)), sum over x, y, z of (v . f)^2 / omega^2 against
    the same sum over every mode.  A mode the sags see (a tail's swing, a held bar's tip) is the one the
    calibration set; one they do not (a twist of the platformer's torso, which no uniform load bends) is
    not calibrated at all.
    """
    w2, V = rest_modes(rest_hessian(model, arap), model.A_M)
    omega = np.sqrt(np.maximum(w2, 0.0))
    # Free directions (numerically zero energy) are no flesh ringing.
    elastic = w2 > 1e-9 * max(float(w2.max()), 1e-300)
    P = np.asarray(loads).shape[1]
    slow = (omega < below) & elastic
    if not slow.any():
        return np.zeros(0), np.zeros((0, P))
    Y = model.basis()
    energy = mode_energies(Y, model.masses, V[:, slow])  # (n, k)
    shares = (np.asarray(loads).T @ energy).T / np.maximum(energy.sum(axis=0), 1e-300)[:, None]
    g = Y.T @ (model.masses[:, None] * np.asarray(carried))  # (4m, P)
    Vr = V.reshape(-1, 3, V.shape[1])  # (4m, 3, modes): coordinate 3a + i
    proj = np.einsum("aP,aim->mPi", g, Vr) ** 2  # (modes, P, 3): (v . f_P,i)^2
    compliance = np.where(elastic[:, None], proj.sum(axis=2) / np.maximum(w2, 1e-300)[:, None], 0.0)  # (modes, P)
    total = np.maximum(compliance.sum(axis=0), 1e-300)
    home = shares.argmax(axis=1)
    seen = compliance[slow][np.arange(len(home)), home] >= SEEN * total[home]
    return omega[slow][~seen], shares[~seen]


def raise_floor(log_factors: np.ndarray, omega: np.ndarray, shares: np.ndarray, target: float) -> np.ndarray:
    """(P,) the log factors with the parts ringing slower than ``target`` stiffened: each part by the largest,
    over the slow modes (omega (k,), shares (k, P)) living in it (share at least LOCAL_MODE), of its share
    times log (target / omega)^2 (what moves a mode living in that part alone to the target), clipped to
    FACTOR_RANGE."""
    logs = np.asarray(log_factors, dtype=np.float64)
    shares = np.asarray(shares)
    if not len(shares):
        return logs
    lift = np.where(shares >= LOCAL_MODE, shares, 0.0) * np.log((target / np.asarray(omega)) ** 2)[:, None]
    bound = np.log(FACTOR_RANGE)
    return np.clip(logs + np.maximum(lift.max(axis=0), 0.0), -bound, bound)
