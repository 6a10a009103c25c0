"""The physics-skinning solve with fixed rotations (Song et al., §3, eqs. 2-12).

Energy, per tet e with rest volume V_e, Lamé (mu_e, lam_e), rotation R_e fixed
from the rig and deformation gradient F_e = (K x)_e:

    E(x) = sum_e V_e (mu_e ||F_e - R_e||^2 + lam_e / 2 (tr(R_e^T F_e) - 3)^2) - f . x,

with pinned vertices x_p = H_b [X_p; 1] following their bone (§3, Fig. 2).  With
R fixed the energy is quadratic in x (the seed's condensed mixed-FEM system with
[R] given, eq. 12).  Its Hessian is

    A(R) = K^T blockdiag(2 V mu I_9 + V lam vec(R) vec(R)^T) K = Ls (x) I_3 + D(R)^T diag(V lam) D(R),

Ls the scalar Laplacian weighted by 2 mu and D(R) (t x 3n) the rotated
divergence, (D(R) x)_e = tr(R_e^T F_e) = sum_a x_a . (R_e grad N_a).

Why the matrix is not constant, and what is done instead.  The mu part does
not depend on R; the volume part does, through vec(R_e), tet by tet.  Only ARAP
(lam = 0) has a constant matrix: then it is Ls (x) I_3, one *scalar* n x n
factor serves the three coordinates, and a frame is a right-hand side plus a
back-substitution with three columns.  ARAP alone loses volume at bent and
twisted joints (the volume term is what keeps it), so with lam > 0 each frame
solves A(R) u = b by conjugate gradients, matrix-free (A(R) is applied through
Ls and D(R), whose sparsity never changes), preconditioned by a constant scalar
factor: the Laplacian weighted by 2 mu + lam, (x) I_3.  It commutes with any
rotation, so it fits A(R) as well in every pose as at rest (warping it by
per-vertex rotations was measured: no fewer iterations); 20-40 iterations
reduce the residual by 1e-6-1e-10.  They start from the same frame's ARAP
answer and stop relative to that start: a rig carried along or turned moves
the start with it, so the answer moves with the problem to round-off
(Galilean invariance, rotation equivariance), and a frame never depends on
which frame was solved before it (scrubbing equals the bake).  Refactoring A(R) each
frame is the exact alternative (:meth:`PhysicsSkin.direct_positions`, the
reference for the tests); it costs a sparse LU of 3n unknowns per frame,
0.27 s at 5.9k vertices against 41 ms for the iterations (bench section 7).  The
iterations run on the free dofs alone: the Laplacian's free block and D(R)'s
free columns, over the tets that touch a free vertex (:class:`FreePattern`), the
pins entering the right-hand side once.  With one Poisson's ratio everywhere the
preconditioner's Laplacian is the ARAP one times a constant, so one factor serves
both.  The scalar factors are banded Cholesky factors where the band is narrow
(:mod:`.banded`): a limb's back-substitution costs a third of SuperLU's, and a
frame with smooth weights is about 11 of them.

Volume steps.  The volume term above is linear in F: it holds tr(R^T F) = 3,
which is det F = 1 only to first order.  At a 90° elbow the inner crease
shortens along one axis and widens along the others with their sum kept, and
the product falls: the seed's energy loses 4-6 % of the joint's volume on a real
arm.  :meth:`PhysicsSkin.volume_step` is one Gauss-Newton step on the same
energy with the exact volume term lam / 2 (det F - 1)^2 (the mu part, with R
fixed, is unchanged): the linearised volume is cof(F_k) : F, so the step's
matrix is A with cof(F_k) in place of R, solved by the same preconditioned
iterations, stopped at 0.1 of their start (an inexact Newton step: the next step
corrects it; ``rig.STEP_TOLERANCE`` says what that costs in accuracy: nothing
measurable).  Per-tet matrices are kept component-major, (9, t) with entry (i, j)
of every tet in one contiguous row (:func:`divergence_entries`), so a step is a few
einsums and sparse products, never a loop over (t, 3, 3) stacks.  At rest and
under rigid motions cof F = R and det F = 1, so the step is zero and every
invariant above still holds; cofactors turn with the problem (cof(Q F) = Q cof F),
so rotation equivariance stays exact.

The unknown is the displacement u = x - X; pinned entries are eliminated
(condensed solve A_ff u_f = -g0_f - A_fp u_p + f_f), so the rest pose and rigid
motions are reproduced to round-off.  Positions are (n, 3); flattened vectors
interleave per vertex (``3 a + i``) as in ``core.model.fem``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..contact.colliders import Planes
from ..geometry.tetmesh import TetMesh
from ..linalg.polar import cofactors
from ..linalg.spd import SPDSolver, factorize_spd
from ..model.fem import deformation_gradient_operator, scalar_laplacian
from .banded import factorize_scalar
from .contact import SkinContact

_VEC_I = np.eye(3).ravel()
# How far the conjugate gradients reduce the starting residual.  1e-6 left position
# errors of 4e-7 of the size (a 4 m cylinder, twisted 180°): invisible, and far
# below the frame-to-frame motion the jiggle feels.
TOLERANCE = 1e-6
MAX_ITERATIONS = 500
# The volume solve also stops where the steps' own contraction predicts that what is left of the way
# is below TAIL times its tolerance (:func:`_tail`).  Measured on the 5,929-vertex limb (25 poses up
# to a 120° bend with a 180° twist, against a solve to 1e-8 of the size): 7 % fewer steps with smooth
# weights and the same largest distance from the converged answer as stopping on the step alone
# (3.9e-4 of the size RMS); a whole tolerance instead of a quarter of one was 4 times further.
TAIL = 0.25
# A start this close to the answer, relative to the right-hand side, is the answer.
ROUND_OFF = 1e-14
# Deformation gradients this close to their rotations (F is dimensionless) are rigid:
# round-off of K X is about 1e-15.
RIGID = 1e-12


def hessian(
    K: sp.csr_matrix, volumes: np.ndarray, mu: np.ndarray, lam: np.ndarray, R: np.ndarray | None
) -> sp.csr_matrix:
    """A (3n x 3n) = K^T blockdiag(2 V mu I_9 + V lam r r^T) K; R (t, 3, 3) needed when lam != 0."""
    A = K.T @ sp.diags(np.repeat(2.0 * volumes * mu, 9)) @ K
    if np.any(lam != 0.0):
        if R is None:
            raise ValueError("a material with a volume term (lam != 0) needs the tets' rotations R")
        r = R.reshape(-1, 9)  # (t, 9)
        G = sp.csr_matrix(K.multiply(np.sqrt(np.repeat(volumes * lam, 9))[:, None]))
        t = len(r)
        Rb = sp.csr_matrix(  # (t x 9t): row e is vec(R_e) on tet e's block
            (r.ravel(), (np.repeat(np.arange(t), 9), np.arange(9 * t))), shape=(t, 9 * t)
        )
        Gr = Rb @ G  # (t x 3n): sqrt(V lam) vec(R_e)^T K_e
        A = A + Gr.T @ Gr
    return sp.csr_matrix(A)


def rest_gradient(K: sp.csr_matrix, volumes: np.ndarray, mu: np.ndarray, lam: np.ndarray, R: np.ndarray) -> np.ndarray:
    """g0 (3n,): the energy gradient at x = X (where F = I), exactly zero when every R_e = I.

    g0 = K^T [2 V mu (vec I - vec R) + V lam (tr R - 3) vec R].
    """
    r = R.reshape(-1, 9)
    tr = np.einsum("tii->t", R)
    per = (2.0 * volumes * mu)[:, None] * (_VEC_I - r) + (volumes * lam * (tr - 3.0))[:, None] * r
    return K.T @ per.ravel()


def divergence_rows(mesh: TetMesh, R: np.ndarray) -> np.ndarray:
    """The entries (t, 4, 3) of D(R): row e holds R_e grad N_a at vertex a's three dofs, R (t, 3, 3)."""
    return divergence_entries(component_gradients(mesh), np.ascontiguousarray(R.reshape(-1, 9).T))


def component_gradients(mesh: TetMesh) -> np.ndarray:
    """The shape gradients (4, 3, t), component-major: the layout :func:`divergence_entries` reads."""
    return np.ascontiguousarray(mesh.gradients.transpose(1, 2, 0))


def divergence_entries(G: np.ndarray, M: np.ndarray) -> np.ndarray:
    """g (t, 4, 3) with g[e, a] = M_e grad N_a, for gradients G (4, 3, t) and matrices M (9, t) stored
    component-major (row-major entries of M_e in column e).

    With M = R this is D(R)'s rows; with M = cof F the linearised volume's; with M a stress P, the
    scatter sum_e g[e, a] over a vertex's tets is K^T P, the stress's force on it.  Component-major
    operands make it one einsum over contiguous rows: 0.28 ms at 29k tets, against 2.5 ms for
    np.matmul on the (t, 4, 3) x (t, 3, 3) stacks.
    """
    return np.einsum("ajt,ijt->tai", G, M.reshape(3, 3, -1))


def rotated_divergence(mesh: TetMesh, R: np.ndarray) -> sp.csr_matrix:
    """D(R) (t x 3n): (D x)_e = tr(R_e^T F_e) = sum_a x_a . (R_e grad N_a), R (t, 3, 3).

    R may be any (t, 3, 3) field: with cofactors in its place, D x is the linearised volume.
    """
    g = divergence_rows(mesh, R)
    cols = (3 * mesh.T[:, :, None] + np.arange(3)).reshape(-1)
    return sp.csr_matrix((g.reshape(-1), cols, np.arange(0, 12 * mesh.t + 1, 12)), shape=(mesh.t, 3 * mesh.n))


@dataclass(frozen=True)
class FreePattern:
    """The tets a solve on the free dofs touches and where their D(R) entries land.

    tets (t_a,): the tets with at least one free vertex (a tet whose four vertices are pinned never
    moves: about half of a character with hat weights); cols (12 t_a,): each of their entries' column
    among the free dofs, entries at a pinned dof sent to one extra column (index free_dofs) that
    products fill with zero and drop; free_dofs: the free dofs' count.

    Every kept tet keeps its 12 entries, so D's values are the divergence entries as they come, with
    no copy that drops the pinned ones (the extra column costs one zero per product)."""

    tets: np.ndarray
    cols: np.ndarray
    free_dofs: int

    @classmethod
    def of(cls, mesh: TetMesh, free: np.ndarray) -> FreePattern:
        column = np.full(3 * mesh.n, len(free), dtype=np.int32)
        column[free] = np.arange(len(free))
        cols = column[(3 * mesh.T[:, :, None] + np.arange(3)).reshape(mesh.t, 12)]
        tets = np.flatnonzero((cols < len(free)).any(axis=1))
        return cls(tets, cols[tets].reshape(-1), len(free))

    def matrix(self, g: np.ndarray) -> sp.csr_matrix:
        """D on the free dofs and the extra column (t_a x (3(n - p) + 1)) from its entries g (t_a, 4, 3)."""
        t = len(self.tets)
        indptr = np.arange(0, 12 * t + 1, 12, dtype=np.int32)
        return sp.csr_matrix((g.reshape(-1), self.cols, indptr), shape=(t, self.free_dofs + 1))

    def padded(self, v: np.ndarray) -> np.ndarray:
        """(3(n - p) + 1,): free values v ((n - p, 3) or flat) and the extra column's zero."""
        out = np.empty(self.free_dofs + 1)
        out[:-1] = v.reshape(-1)
        out[-1] = 0.0
        return out

    def gather(self, M: np.ndarray) -> np.ndarray:
        """The kept tets' matrices (9, t_a), component-major, from all tets' M (t, 3, 3); M given as
        (9, t_a) already (``rotations.blended_rotation_rows`` of the kept tets) is returned as is."""
        if M.ndim == 2:
            if M.shape != (9, len(self.tets)):
                raise ValueError(f"per-tet rows must be (9, {len(self.tets)}), the kept tets; got {M.shape}")
            return M
        return np.ascontiguousarray(M.reshape(-1, 9)[self.tets].T)


def elastic_energy(
    R9: np.ndarray, F9: np.ndarray, shear_w: np.ndarray, volume_w: np.ndarray
) -> tuple[float, np.ndarray]:
    """(sum_e shear_w/2 ||F_e - R_e||^2 + volume_w/2 (det F_e - 1)^2, det F (k,)) for rotations R9 and
    deformation gradients F9 (9, k) component-major and weights 2 V mu, V lam (k,).  The determinant
    in closed form (np.linalg.det's batched LU took two thirds of an evaluation, 1.5 ms at 29k tets)."""
    s = F9 - R9
    shear = np.einsum("it,it->t", s, s)
    a, b, c, d, e, f, g, h, i = F9
    J = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return 0.5 * float(shear_w @ shear + volume_w @ (J - 1.0) ** 2), J


@dataclass
class PhysicsSkin:
    """Fixed-rotation physics skinning on a tet mesh.

    mesh: TetMesh (n vertices, t tets); mu, lam: (t,); pins: (p,) vertex indices,
    pin_bone: (p,) their bones.  The scalar factor of Ls_ff (n - p unknowns) is
    built once: it is the whole solve for ARAP and the preconditioner otherwise.
    """

    mesh: TetMesh
    mu: np.ndarray
    lam: np.ndarray
    pins: np.ndarray
    pin_bone: np.ndarray
    K: sp.csr_matrix = field(repr=False)
    free_vertices: np.ndarray = field(repr=False)  # (n - p,)
    free: np.ndarray = field(repr=False)  # (3(n - p),) free dofs
    fixed: np.ndarray = field(repr=False)  # (3p,) pinned dofs
    Ls: sp.csr_matrix = field(repr=False)  # (n x n) scalar Laplacian weighted by 2 mu
    factor: SPDSolver = field(repr=False)  # of Ls restricted to the free vertices
    precondition: SPDSolver | None = field(repr=False)  # of the scalar Laplacian weighted by 2 mu + lam
    last_iterations: int = 0
    last_steps: int = 0  # volume steps the last ``volume_solve`` took
    # why it stopped: "converged" (a step moved less than its tolerance, or nothing was left to do),
    # "stalled" (no step length lowered the energy without a new inversion), "cap" (``steps`` ran out)
    last_stop: str = "converged"
    # The iterations run on the free dofs alone (about half the vertices of a character are pins):
    # Ls's free-free and free-pinned blocks, and where D(R)'s free entries land.
    Ls_ff: sp.csr_matrix = field(default=None, repr=False)  # type: ignore[assignment]
    Ls_fp: sp.csr_matrix = field(default=None, repr=False)  # type: ignore[assignment]
    pattern: FreePattern = field(default=None, repr=False)  # type: ignore[assignment]
    # The solve's own layout, on the tets that touch a free vertex (``pattern.tets``, t_a of them), in
    # component-major order (entry (i, j) of every tet's matrix in one contiguous row, see
    # :func:`divergence_entries`): their shape gradients (4, 3, t_a), K's rows for them in that order
    # (Kc x = F (9, t_a) flattened: a frame never transposes a (t, 3, 3) stack), and their weights
    # 2 V mu and V lam (t_a,).
    G: np.ndarray = field(init=False, repr=False)
    Kc: sp.csr_matrix = field(init=False, repr=False)
    _shear_w: np.ndarray = field(init=False, repr=False)
    _volume_w: np.ndarray = field(init=False, repr=False)
    # Soft pins (the seed's C(x) = k/2 ||P x - x_p||^2, §3): stiffness (p,) per pin, None for hard pins.
    # Soft pins stay unknowns: their springs add k to the Laplacian's diagonal (still one scalar
    # factor) and k x_p to the right-hand side, which Ls_fp = -k P^T carries as the hard pins' block does.
    pin_stiffness: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        fv = self.free_vertices
        rows = self.Ls[fv]
        if self.pin_stiffness is None:
            self.Ls_ff = sp.csr_matrix(rows[:, fv])
            self.Ls_fp = sp.csr_matrix(rows[:, self.pins])
        else:
            self.Ls_ff = soft_pinned(self.Ls, self.pins, self.pin_stiffness)
            p = len(self.pins)
            self.Ls_fp = sp.csr_matrix((-self.pin_stiffness, (self.pins, np.arange(p))), shape=(self.mesh.n, p))
        self.pattern = FreePattern.of(self.mesh, self.free)
        tets = self.pattern.tets
        self.G = np.ascontiguousarray(self.mesh.gradients[tets].transpose(1, 2, 0))
        self.Kc = sp.csr_matrix(self.K[(9 * tets[None, :] + np.arange(9)[:, None]).ravel()])
        V = self.mesh.volumes[tets]
        self._shear_w, self._volume_w = 2.0 * V * self.mu[tets], V * self.lam[tets]

    @classmethod
    def build(
        cls,
        mesh: TetMesh,
        mu: np.ndarray,
        lam: np.ndarray,
        pins: np.ndarray,
        pin_bone: np.ndarray,
        soft_pins: float | None = None,
    ) -> PhysicsSkin:
        """soft_pins: None for hard pins; else each pin is a spring of stiffness soft_pins times its
        vertex's diagonal of the Laplacian weighted by 2 mu (scale-free: a ratio to the flesh around it)."""
        mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), (mesh.t,))
        lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (mesh.t,))
        pins = np.asarray(pins, dtype=np.int64)
        if len(pins) == 0:
            raise ValueError("physics skinning needs at least one pinned vertex")
        Ls = scalar_laplacian(mesh, 2.0 * mu)
        k = None if soft_pins is None else float(soft_pins) * Ls.diagonal()[pins]
        fixed = (3 * pins[:, None] + np.arange(3)).ravel() if k is None else np.zeros(0, dtype=np.int64)
        free_vertices = np.setdiff1d(np.arange(mesh.n), pins) if k is None else np.arange(mesh.n)
        free = (3 * free_vertices[:, None] + np.arange(3)).ravel()
        coords = mesh.X[free_vertices]
        factor = factorize_scalar(_free_block(Ls, free_vertices, pins, k), coords)
        precondition = None
        if np.any(lam != 0.0):
            # The volume term stiffens compression by about lam / (2 mu) over shear; a
            # Laplacian weighted by 2 mu + lam balances the two halves of the spectrum.
            ratio = (2.0 * mu + lam) / (2.0 * mu)
            if np.ptp(ratio) <= 1e-12 * ratio.max():
                # One Poisson's ratio everywhere: that Laplacian is Ls times a constant (soft pins'
                # springs aside, which hold the pins either way), and conjugate gradients do not
                # see a preconditioner's scale: the ARAP factor serves.  One factor, not two, in
                # the cache a frame streams through (7.4 MB each at 6k vertices).
                precondition = factor
            else:
                Lp = scalar_laplacian(mesh, 2.0 * mu + lam)
                precondition = factorize_scalar(_free_block(Lp, free_vertices, pins, k), coords)
        return cls(
            mesh, mu, lam, pins, np.asarray(pin_bone, dtype=np.int64), deformation_gradient_operator(mesh),
            free_vertices, free, fixed, Ls, factor, precondition, pin_stiffness=k,
        )  # fmt: skip

    @property
    def soft(self) -> bool:
        """Whether the pins are springs (the seed's soft pins) rather than constraints."""
        return self.pin_stiffness is not None

    @property
    def prefactored(self) -> bool:
        """Whether a frame is one back-substitution (ARAP) rather than preconditioned iterations."""
        return self.precondition is None

    def pin_targets(self, transforms: np.ndarray) -> np.ndarray:
        """x_p = H_b [X_p; 1] (p, 3) for bone transforms (b, 3, 4)."""
        H = np.asarray(transforms, dtype=np.float64)[self.pin_bone, :3, :]  # (p, 3, 4)
        Xp = self.mesh.X[self.pins]
        return np.einsum("pij,pj->pi", H[:, :, :3], Xp) + H[:, :, 3]

    def _system(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """(u (n, 3) with the pinned displacements set, -g0 + f (n, 3)) of a frame."""
        u = np.zeros((self.mesh.n, 3))
        u[self.pins] = self.pin_targets(transforms) - self.mesh.X[self.pins]
        rhs = -rest_gradient(self.K, self.mesh.volumes, self.mu, self.lam, R).reshape(-1, 3)
        if force is not None:
            rhs = rhs + np.asarray(force, dtype=np.float64).reshape(-1, 3)
        return u, rhs

    def positions(
        self,
        transforms: np.ndarray,
        R: np.ndarray,
        force: np.ndarray | None = None,
        guess: np.ndarray | None = None,
        tolerance: float = TOLERANCE,
    ) -> np.ndarray:
        """Deformed positions (n, 3) for bone transforms (b, 3, 4) and tet rotations R (t, 3, 3).

        force: an applied force (n, 3) in newtons.  guess: positions (n, 3) to start
        the iterations from (default: this frame's ARAP answer, see below).
        tolerance: how far the iterations reduce the starting residual (lam > 0 only).
        """
        u, rhs = self._system(transforms, R, force)
        fv = self.free_vertices
        if self.precondition is None:
            u[fv] = self._arap(u, rhs)
            self.last_iterations = 0
            return self.mesh.X + u
        g = divergence_entries(self.G, self.pattern.gather(R))
        D = self.pattern.matrix(g)
        # b = (rhs - A u)[free] with u nonzero at the pins only: D u from the entries, not a matrix.
        Tk = self.mesh.T[self.pattern.tets]
        Du = np.zeros(len(Tk)) if self.soft else np.einsum("tai,tai->t", g, u[Tk], optimize=True)
        b = rhs[fv] - self.Ls_fp @ u[self.pins] - self._volume_term(D, Du)
        if guess is None:
            # This frame's ARAP answer (one scalar back-substitution): it moves with the
            # problem, and the iterations stop relative to it (see conjugate_gradients).
            x0 = self._arap_start(u, R, force)
        else:
            x0 = np.asarray(guess, dtype=np.float64)[fv] - self.mesh.X[fv]

        u[fv], self.last_iterations = conjugate_gradients(self._product(D), b, self.precondition.solve, x0, tolerance)
        return self.mesh.X + u

    def _volume_term(self, D: sp.csr_matrix, y: np.ndarray) -> np.ndarray:
        """D^T diag(V lam) y on the free dofs (n - p, 3), for y (t_a,) and D on the kept tets."""
        return (D.T @ (self._volume_w * y))[:-1].reshape(-1, 3)

    def deformation(self, x: np.ndarray) -> np.ndarray:
        """F = K x (9, t_a) on the kept tets, component-major (:func:`divergence_entries`), for positions x (n, 3)."""
        return (self.Kc @ np.asarray(x, dtype=np.float64).reshape(-1)).reshape(9, -1)

    def stress_force(self, P: np.ndarray) -> np.ndarray:
        """K^T P on the free dofs (n - p, 3) for matrices P (9, t_a) on the kept tets, component-major:
        the divergence entries of P summed over each vertex's tets (one product with a third of K's entries)."""
        D = self.pattern.matrix(divergence_entries(self.G, P))
        return (D.T @ np.ones(len(self.pattern.tets)))[:-1].reshape(-1, 3)

    def arap_positions(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """The ARAP part's minimiser (n, 3): the volume term left out, one scalar back-substitution.

        The start of the co-rotational iterations and of the shipped volume step (see ``rig.py``).
        R: the tets' rotations (t, 3, 3), or the kept tets' (9, t_a) (:meth:`FreePattern.gather`).
        force: an applied force (n, 3) in newtons, or None.
        """
        u = np.zeros((self.mesh.n, 3))  # the pins' displacements only: the full system's right-hand side is not needed
        u[self.pins] = self.pin_targets(transforms) - self.mesh.X[self.pins]
        u[self.free_vertices] = self._arap_start(u, R, force)
        return self.mesh.X + u

    def _arap_start(self, u: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """Free displacements (n - p, 3) minimising the ARAP part (the volume term left out) for the
        pinned displacements in u (n, 3), rotations R (t, 3, 3) or (9, t_a) and an optional force (n, 3)."""
        # -g0 on the free dofs, g0 = K^T [2 V mu (vec I - vec R)] (``rest_gradient`` with lam = 0)
        rhs = self.stress_force(self._shear_w * (self.pattern.gather(R) - _VEC_I[:, None]))
        if force is not None:
            rhs = rhs + np.reshape(force, (-1, 3))[self.free_vertices]
        return self.factor.solve(rhs - self.Ls_fp @ u[self.pins])

    def _product(self, D: sp.csr_matrix) -> Callable[[np.ndarray], np.ndarray]:
        """v (n - p, 3) -> (Ls_ff (x) I_3 + D^T diag(V lam) D) v on the free dofs, pins held at zero: the
        Hessian with D = D(R), or D(cof F) for a volume step, restricted to the free dofs."""
        c = self._volume_w
        pad, DT = self.pattern.padded, D.T

        def apply(v: np.ndarray) -> np.ndarray:
            return self.Ls_ff @ v + (DT @ (c * (D @ pad(v))))[:-1].reshape(-1, 3)

        return apply

    def volume_step(
        self,
        R: np.ndarray,
        x: np.ndarray,
        tolerance: float = TOLERANCE,
        F: np.ndarray | None = None,
        load: np.ndarray | None = None,
        extra: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> np.ndarray:
        """One Gauss-Newton step (n, 3 positions) from x (n, 3) on the exact-volume energy, pins held.

        E(x) = sum_e V_e (mu_e ||F_e - R_e||^2 + lam_e / 2 (det F_e - 1)^2), linearised at
        x: det F ~ J_k + C_k : (F - F_k) with C_k = cof F_k.  The step d solves
        (Ls (x) I_3 + D(C_k)^T diag(V lam) D(C_k)) d = -grad E(x) on the free vertices,
        by conjugate gradients from d = 0 (stopping at ``tolerance`` of the gradient,
        which turns and moves with the problem).  R (t, 3, 3): the tets' rotations.
        Where every tet is within round-off of its rotation (the rest pose, a rigid
        motion of the whole rig) x is returned unchanged, so those stay exact.
        F: :meth:`deformation` of x (9, t) when the caller has it already (``volume_solve``'s line search).
        load: the gradient (n, 3) of the energy's other terms at x (soft pins' springs, minus
        an applied force: :meth:`external`), or None.  extra: v (f, 3) -> the other terms' Gauss-Newton
        Hessian times v on the free vertices (the obstacles' penalty), or None.
        """
        x = np.asarray(x, dtype=np.float64)
        d = self._gauss_newton(self.pattern.gather(R), self.deformation(x) if F is None else F, tolerance, load, extra)
        out = np.array(x)
        if d is not None:
            out[self.free_vertices] += d
        return out

    def _gauss_newton(
        self,
        R9: np.ndarray,
        F9: np.ndarray,
        tolerance: float,
        load: np.ndarray | None,
        extra: Callable[[np.ndarray], np.ndarray] | None,
    ) -> np.ndarray | None:
        """:meth:`volume_step`'s step d (n - p, 3) on the free vertices, or None where there is none to
        take; R9, F9 (9, t_a) the kept tets' rotations and deformation gradients, component-major."""
        strain = F9 - R9
        if not strain.size:  # no tet touches a free vertex: every vertex is pinned (a prop of one bone)
            self.last_iterations = 0
            return None
        if np.abs(strain).max() <= RIGID and (load is None or not np.any(load[self.free_vertices])):
            self.last_iterations = 0
            return None
        C = cofactors(F9)
        J = np.einsum("it,it->t", F9[:3], C[:3])  # det F, by the first row's cofactors
        D = self.pattern.matrix(divergence_entries(self.G, C))
        # grad E = K^T [2 V mu (F - R) + V lam (J - 1) cof F]: both terms' stresses in one scatter
        grad = self.stress_force(self._shear_w * strain + (self._volume_w * (J - 1.0)) * C)
        if load is not None:
            grad = grad + load[self.free_vertices]
        precondition = self.precondition.solve if self.precondition is not None else self.factor.solve
        product = self._product(D)
        if extra is not None:
            elastic = product

            def product(v: np.ndarray) -> np.ndarray:
                return elastic(v) + extra(v)

        d, self.last_iterations = conjugate_gradients(product, -grad, precondition, np.zeros_like(grad), tolerance)
        return d

    def exact_energy(self, R: np.ndarray, x: np.ndarray) -> float:
        """sum_e V_e (mu_e ||F_e - R_e||^2 + lam_e / 2 (det F_e - 1)^2) (J) at positions x (n, 3) over
        every tet: what volume steps minimise (the pins' terms included; they do not move).  R (t, 3, 3)."""
        F9 = (self.K @ np.asarray(x, dtype=np.float64).reshape(-1)).reshape(-1, 9).T
        V = self.mesh.volumes
        return elastic_energy(R.reshape(-1, 9).T, F9, 2.0 * V * self.mu, V * self.lam)[0]

    def _energy(self, R9: np.ndarray, F9: np.ndarray) -> tuple[float, np.ndarray]:
        """(``exact_energy`` less the tets that never move, det F (t_a,)) on the kept tets from their
        rotations R9 and F9 = :meth:`deformation` (9, t_a): what the line search compares."""
        return elastic_energy(R9, F9, self._shear_w, self._volume_w)

    def external(
        self, x: np.ndarray, force: np.ndarray | None, targets: np.ndarray | None
    ) -> tuple[float, np.ndarray | None]:
        """(energy, gradient (n, 3)) of the terms besides the elastic energy at x (n, 3): -f . (x - X)
        for a force f (n, 3), and the soft pins' springs k/2 |x_p - t_p|^2 toward targets t (p, 3).
        (0.0, None) when there are none, so the hard-pinned, unforced solve is unchanged to the bit."""
        if force is None and (targets is None or not self.soft):
            return 0.0, None
        energy, grad = 0.0, np.zeros((self.mesh.n, 3))
        if force is not None:
            f = np.reshape(force, (-1, 3))
            energy -= float(np.vdot(f, x - self.mesh.X))
            grad -= f
        if targets is not None and self.pin_stiffness is not None:  # soft pins (self.soft, spelled for mypy)
            d = x[self.pins] - targets
            energy += 0.5 * float(self.pin_stiffness @ np.einsum("pi,pi->p", d, d))
            grad[self.pins] += self.pin_stiffness[:, None] * d
        return energy, grad

    def _outside(
        self,
        x: np.ndarray,
        force: np.ndarray | None,
        targets: np.ndarray | None,
        contact: SkinContact | None,
        planes: Planes | None,
    ) -> tuple[float, np.ndarray | None]:
        """:meth:`external` plus the obstacles' penalty on the planes (:mod:`.contact`), if any."""
        energy, grad = self.external(x, force, targets)
        if contact is None or planes is None:
            return energy, grad
        push = contact.gradient(planes, x)
        return energy + contact.energy(planes, x), push if grad is None else grad + push

    def volume_solve(
        self,
        R: np.ndarray,
        x: np.ndarray,
        tolerance: float,
        steps: int,
        step_tolerance: float = TOLERANCE,
        force: np.ndarray | None = None,
        targets: np.ndarray | None = None,
        contact: SkinContact | None = None,
    ) -> np.ndarray:
        """Gauss-Newton steps (``volume_step``) with a backtracking line search on ``exact_energy``.

        A step is taken at the largest alpha in 1, 1/2, ..., 1/64 that lowers the
        energy and does not add to the count of inverted tets (the energy
        (det F - 1)^2 alone does not forbid inversion: the unsearched second
        step inverted 60 tets at a 120 degree bend with a 180 degree twist).  The
        count, not the set: an ARAP start at the limb's hardest pose (120° bend,
        180° twist, from bones only) inverts 135 tets, and the first step, which
        leaves 21, inverts a few that were not; refusing any tet newly inverted
        stalled there with 106 (14 now), and with 8 where hat weights now end with 0.  It
        stops when a step moves the free vertices by less than ``tolerance``
        times the mesh's size (RMS; scale-free) or when the last two steps' ratio
        predicts less than TAIL of that still to go (:func:`_tail`; no contact), when no alpha is accepted, or
        after ``steps``; ``last_steps`` says how many were taken and ``last_stop`` which of the three.  The line
        search only compares energies, which turn and move with the problem, so
        the invariances hold up to round-off-close decisions.

        A tet is inverted where det F <= 0 (F = K x; the rest tets are positively
        oriented, so this is the sign of its signed volume).  F is linear in x, so a
        trial's is F + alpha K d (one K product a step) with a closed-form determinant,
        and it is kept for the next step's linearisation.  Only the tets that touch a
        free vertex are evaluated: the others never move.

        R: the tets' rotations (t, 3, 3), or the kept tets' (9, t_a) (:meth:`FreePattern.gather`).
        force (n, 3) and targets (p, 3), the soft pins' targets: see :meth:`external`.  contact: the
        obstacles' penalty (:mod:`.contact`), its planes taken afresh after each accepted step.
        """
        x = np.array(x, dtype=np.float64)
        fv = self.free_vertices
        X = self.mesh.X
        size = 2.0 * float(np.sqrt(np.max(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))  # rotation-invariant
        R9 = self.pattern.gather(R)
        F = self.deformation(x)
        elastic, J = self._energy(R9, F)
        planes = None if contact is None else contact.planes(x)
        outside, load = self._outside(x, force, targets, contact, planes)
        inverted = int(np.count_nonzero(J <= 0.0))  # tets inverted where the solve stands
        self.last_steps, self.last_stop = 0, "cap"
        step = np.zeros_like(x)
        previous = None
        for _ in range(steps):
            extra = None if planes is None else contact.product(planes, x)  # type: ignore[union-attr]
            d = self._gauss_newton(R9, F, step_tolerance, load, extra)
            move = float(np.sqrt(np.mean(np.sum(d * d, axis=1)))) if d is not None and len(d) else 0.0
            if d is None or move == 0.0:
                self.last_stop = "converged"
                break
            step[fv] = d
            dF = self.deformation(step)  # F is linear in x: a trial's F is F + alpha dF, one K product a step
            alpha = 1.0
            while alpha >= 1.0 / 64.0:
                trial = x.copy()
                trial[fv] += alpha * d
                F_trial = F + alpha * dF
                e, J = self._energy(R9, F_trial)
                outside_trial, load_trial = self._outside(trial, force, targets, contact, planes)
                if e + outside_trial < elastic + outside and np.count_nonzero(J <= 0.0) <= inverted:
                    break
                alpha *= 0.5
            else:
                self.last_stop = "stalled"
                break  # no decrease without a new inversion: keep the best there is
            x, elastic, outside, F, load = trial, e, outside_trial, F_trial, load_trial
            inverted = int(np.count_nonzero(J <= 0.0))
            if contact is not None:  # the obstacles linearised afresh where the flesh now is
                planes = contact.planes(x)
                outside, load = self._outside(x, force, targets, contact, planes)
            self.last_steps += 1
            # Judged on the full step: one the line search had to shorten is no sign of convergence.  With
            # contact the planes change between steps, so the steps' ratio predicts nothing there (the
            # tail rule is for the elastic solve alone).
            if move <= tolerance * size or (contact is None and _tail(move, previous) <= TAIL * tolerance * size):
                self.last_stop = "converged"
                break
            previous = move
        return x

    def _arap(self, u: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """Free displacements (n - p, 3) minimising the ARAP part: Ls_ff u_f = rhs_f - Ls_fp u_p."""
        return self.factor.solve(rhs[self.free_vertices] - self.Ls_fp @ u[self.pins])

    def direct_positions(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """The same pose by assembling and factoring A(R) (exact, refactors every call: the reference)."""
        A = hessian(self.K, self.mesh.volumes, self.mu, self.lam, R)
        u, rhs = self._system(transforms, R, force)
        u = u.reshape(-1)
        b = rhs.reshape(-1)[self.free] - A[self.free][:, self.fixed] @ u[self.fixed]
        coords = np.repeat(self.mesh.X, 3, axis=0)[self.free]
        u[self.free] = factorize_spd(A[self.free][:, self.free], coords).solve(b)
        return self.mesh.X + u.reshape(-1, 3)

    def kkt_positions(self, transforms: np.ndarray, R: np.ndarray, force: np.ndarray | None = None) -> np.ndarray:
        """The same pose from the full KKT system [A C^T; C 0][u; l] = [-g0 + f; u_p] (reference, slow)."""
        A = hessian(self.K, self.mesh.volumes, self.mu, self.lam, R)
        n3, p3 = 3 * self.mesh.n, len(self.fixed)
        C = sp.csr_matrix((np.ones(p3), (np.arange(p3), self.fixed)), shape=(p3, n3))
        M = sp.bmat([[A, C.T], [C, None]], format="csc")
        u, rhs = self._system(transforms, R, force)
        sol = spla.spsolve(M, np.concatenate([rhs.reshape(-1), u[self.pins].reshape(-1)]))
        return self.mesh.X + sol[:n3].reshape(-1, 3)


def _tail(taken: float, previous: float | None) -> float:
    """What is left of the way after a step of length ``taken`` (any unit) whose predecessor was
    ``previous``, if the steps keep shrinking by their last ratio rho: the geometric tail
    taken rho / (1 - rho).  Infinite after the first step (no ratio yet) or when the step grew."""
    if previous is None or taken >= previous:
        return float("inf")
    rho = taken / previous
    return taken * rho / (1.0 - rho)


def soft_pinned(L: sp.csr_matrix, pins: np.ndarray, k: np.ndarray) -> sp.csr_matrix:
    """L + diag(k) on the pins (n x n): a scalar Laplacian with the soft pins' springs, k (p,)."""
    spring = np.zeros(L.shape[0])
    spring[pins] = k
    return sp.csr_matrix(L + sp.diags(spring))


def _free_block(L: sp.csr_matrix, free_vertices: np.ndarray, pins: np.ndarray, k: np.ndarray | None) -> sp.csr_matrix:
    """The matrix a scalar Laplacian L (n x n) gives the unknowns: its free block (hard pins), or L
    with the springs k (p,) on its diagonal (soft pins, every vertex an unknown)."""
    return L[free_vertices][:, free_vertices] if k is None else soft_pinned(L, pins, k)


def conjugate_gradients(apply, b: np.ndarray, precondition, x0: np.ndarray, tolerance: float) -> tuple[np.ndarray, int]:  # type: ignore[no-untyped-def]
    """Preconditioned CG on (k, 3) arrays from x0: x and the iterations.

    Stops when the residual has fallen to ``tolerance`` of the starting residual
    b - A x0 (or to round-off of b).  Relative to the start, not to b: a rig carried
    along or turned changes b (the pins move) but not b - A x0 (the ARAP start moves
    with them), so the iterations, and the answer, move with the problem exactly.
    apply(v) = A v and precondition(r) = P^-1 r for SPD A, P.  Raises ArithmeticError
    when it does not converge in MAX_ITERATIONS (A not SPD: a bug, not an input).
    """
    x = np.array(x0, dtype=np.float64)
    r = b - apply(x)
    goal = max(tolerance * float(np.linalg.norm(r)), ROUND_OFF * float(np.linalg.norm(b)))
    if float(np.linalg.norm(r)) <= goal:
        return x, 0
    z = precondition(r)
    d = z
    rz = float(np.vdot(r, z))
    for it in range(1, MAX_ITERATIONS + 1):
        Ad = apply(d)
        alpha = rz / float(np.vdot(d, Ad))
        x = x + alpha * d
        r = r - alpha * Ad
        if float(np.linalg.norm(r)) <= goal:
            return x, it
        z = precondition(r)
        rz, rz_old = float(np.vdot(r, z)), rz
        d = z + (rz / rz_old) * d
    raise ArithmeticError(f"physics skinning did not converge in {MAX_ITERATIONS} iterations")
