"""Rotation-strain coordinates against skinning eigenmodes on the same meshes and rig motions (issue 27).

A :class:`RigScene` is a tet mesh, linear-blend weights and a rig motion sampled once per step
(``scenes below``: a bar bent 90 degrees by two bones, an object spun fast by its own transform,
a real character's arm).  Three solvers step it with the same elastic model (co-rotational with
Poisson ratio 0, i.e. ARAP), the same backward Euler step, no damping and no gravity:

- the full-space reference (``reference.FullSpaceReference``, rest state "pose"): every tet vertex
  free, the secondary motion exactly complementary to the rig;
- skinning eigenmodes (``core.subspace``, the add-on's default): m modes, r rotation clusters;
- RS coordinates carried by the rig (:class:`RiggedRS`): world positions

      p = LBS_A(X + B x(q)),

  the object drive's p = L (X + B x) + t (``core.rotstrain.drive``) for one bone, and its plain
  extension to several: the RS body deforms in the rest space and the rig carries it.  B is the
  free extended basis (rigid motions projected out), as in the drive.

What is measured per run: the world secondary motion u (steps, n, 3) = p - LBS_A(X), seconds per
step, and from them the error against the reference (:func:`relative_error`) and the leak into the
rig's space (:func:`rig_leak`).  The seed 000 §9.4 argument (an RS reconstruction of a rig's 90
degree rotation collapses toward an axis) is checked by :func:`rig_pose_reconstruction`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..dynamics.simulator import SimulationSettings, Simulator
from ..geometry.primitives import bar_tet_mesh
from ..geometry.size import character_size
from ..geometry.tetmesh import TetMesh
from ..linalg.polar import rotation
from ..model.constraint import complementarity_matrix
from ..model.fem import lumped_mass
from ..model.leak import default_leak_field
from ..model.materials import Material
from ..model.rig import LBSRig, lbs_positions, rig_parameters
from ..rotstrain.basis import linear_modes
from ..rotstrain.coordinates import rotation_log, rs_from_gradient, rs_vectors, skew_part, sym_part, vee
from ..rotstrain.drive import RSBody
from ..rotstrain.newton import Problem, minimize
from ..rotstrain.poisson import PoissonReconstruction
from ..subspace.reduced import build_reduced_model
from .reference import FullSpaceReference
from .scenes import bar_scene

H = 1.0 / 48.0
YOUNGS = 3e4  # Pa: soft flesh, as the bent-limb accuracy scene
DENSITY = 1000.0
TOLERANCE = 1e-6  # of the size: the add-on's default for both solvers
ITERATIONS = 20  # the add-on's default cap for both solvers


@dataclass(frozen=True)
class RigScene:
    """name; mesh; weights (n, b) normalised; A (steps + 2, b, 3, 4) bone maps at t = -h, 0, h, ..., steps h;
    fixed: tet vertices the rig never moves (None: none), where RS's Poisson fit is held in
    :func:`rig_pose_reconstruction`."""

    name: str
    mesh: TetMesh
    weights: np.ndarray
    A: np.ndarray
    h: float = H
    fixed: np.ndarray | None = None
    youngs: float = YOUNGS

    @property
    def steps(self) -> int:
        return len(self.A) - 2

    @property
    def material(self) -> Material:
        return Material.uniform(self.mesh.t, self.youngs, 0.0, DENSITY)

    @property
    def masses(self) -> np.ndarray:
        return lumped_mass(self.mesh, DENSITY)

    def rig_positions(self) -> np.ndarray:
        """LBS_A(X) per sample: (steps + 2, n, 3)."""
        return np.array([lbs_positions(self.mesh.X, self.weights, a) for a in self.A])


def _ramp(t: np.ndarray, rise: float) -> np.ndarray:
    """0 -> 1 smoothly (cubic ease) over [0, rise], then held; 0 before."""
    s = np.clip(t / rise, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def bent_bar(steps: int = 36, bend_deg: float = 90.0, cells: int = 3, rise: float = 0.25) -> RigScene:
    """A 4 x 1 x 1 bar with two bones (hat weights from x = 0 to x = 4), the second bent ``bend_deg`` about z
    through the middle in ``rise`` seconds, then held: the secondary motion is the swing after the stop."""
    sc = bar_scene(length=4.0, cells_per_unit=cells, bones=2)
    times = H * np.arange(-1, steps + 1)
    # scene.transforms bends by amplitude * sin(2 pi f t): at f = 1, t = 1/4 s is the full bend.
    A = np.array([sc.transforms(0.25 * float(s), amplitude=np.radians(bend_deg)) for s in _ramp(times, rise)])
    fixed = np.flatnonzero(sc.mesh.X[:, 0] < 1e-9)
    return RigScene("bent_bar", sc.mesh, sc.rig.weights, A, H, fixed)


def spun_object(
    steps: int = 36, turns_per_second: float = 2.0, cells: int = 4, rise: float = 0.25, youngs: float = 1e6
) -> RigScene:
    """A 2 x 1 x 1 box moved by its own transform (one bone, every weight 1), spun up about z through its
    centre to ``turns_per_second`` with a constant angular acceleration over ``rise`` seconds, then on.
    Stiffer than the bar (``youngs`` Pa): at 3e4 Pa two turns a second would fling it apart."""
    X, T = bar_tet_mesh(2.0, 1.0, cells)
    mesh = TetMesh.from_arrays(X, T)
    c = X.mean(axis=0)
    w = 2.0 * np.pi * turns_per_second
    times = H * np.arange(-1, steps + 1)
    angle = np.where(times < rise, 0.5 * w * np.maximum(times, 0.0) ** 2 / rise, w * (times - 0.5 * rise))
    A = np.zeros((len(times), 1, 3, 4))
    for k, a in enumerate(angle):
        R = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
        A[k, 0, :, :3], A[k, 0, :, 3] = R, c - R @ c
    return RigScene("spun_object", mesh, np.ones((mesh.n, 1)), A, H, None, youngs)


def limb_scene(
    name: str, X: np.ndarray, T: np.ndarray, weights: np.ndarray, A: np.ndarray, bones: list[int], h: float
) -> RigScene:
    """The part of a character's tet mesh (X (n, 3), T (t, 4), volume weights (n, b)) that ``bones`` move: the
    tets whose four vertices take more than half their weight from them, with those bones' weights
    renormalised, and their maps A (k, b, 3, 4) per step.  One face-connected piece is assumed (a limb)."""
    share = weights[:, bones].sum(axis=1)
    keep = (share[T] > 0.5).all(axis=1)
    used = np.unique(T[keep])
    index = np.full(len(X), -1)
    index[used] = np.arange(len(used))
    W = weights[used][:, bones]
    W = W / W.sum(axis=1, keepdims=True)
    return RigScene(name, TetMesh.from_arrays(X[used], index[T[keep]]), W, A[:, bones], h)


def mass_norms(masses: np.ndarray, u: np.ndarray) -> np.ndarray:
    """||u_k||_M per step: masses (n,), u (steps, n, 3) -> (steps,)."""
    return np.sqrt(np.einsum("a,sai,sai->s", masses, u, u))


def relative_error(masses: np.ndarray, u: np.ndarray, ref: np.ndarray) -> float:
    """Worst step's mass-norm distance to the reference, relative to the reference's largest secondary motion."""
    return float(mass_norms(masses, u - ref).max() / mass_norms(masses, ref).max())


def rig_projection(scene: RigScene) -> Callable[[np.ndarray], np.ndarray]:
    """P: u (steps, n, 3) -> P u (steps, n, 3), the M-orthogonal projection onto the columns of D J.

    J is the rig's Jacobian at rest, D the default leak field: Jc^T u = J^T D M u vanishes exactly
    when P u does, so P u is the part of a secondary motion that breaks complementarity (motion the
    rig's own parameters could make)."""
    m3 = np.repeat(scene.masses, 3)
    d = default_leak_field(scene.mesh)
    J = LBSRig.from_weights(scene.weights).jacobian(scene.mesh.X)
    DJ = complementarity_matrix(J, np.ones(scene.mesh.n), d).toarray()
    G = DJ.T @ (m3[:, None] * DJ)

    def project(u: np.ndarray) -> np.ndarray:
        # G is singular along rig directions the leak field zeroes: a least-squares solve.
        coef = sla.lstsq(G, DJ.T @ (m3[:, None] * u.reshape(len(u), -1).T))[0]
        return (DJ @ coef).T.reshape(u.shape)

    return project


def rig_leak(scene: RigScene, u: np.ndarray) -> np.ndarray:
    """Per step (steps,), the share ||P u||_M / ||u||_M of the secondary motion u (steps, n, 3) in the rig's
    space (:func:`rig_projection`): 0 is complementary, 1 is the rig's own motion (weighted by the leak field)."""
    Pu = rig_projection(scene)(u)
    return mass_norms(scene.masses, Pu) / np.maximum(mass_norms(scene.masses, u), 1e-300)


class RiggedRS:
    """RS coordinates carried by a linear-blend rig, p = LBS_A(X + B x(q)) (the module doc).

    body: the RS model (``RSBody.build``: free modes, the Taylor polynomial by default); weights (n, b);
    h: time step (s).  A step minimises, over q (r,), the incremental potential

        E = 1/(2 h^2) ||p(q) - 2 p_n + p_(n-1)||^2_M + 1/2 q^T K~ q

    by Newton with a line search and the Gauss-Newton Hessian J^T (LB^T M LB) J / h^2 + K~, with
    LB_k = sum_b w_b L_b B_k the blended linear parts carrying each basis vector (``drive.py``'s
    L B for one bone)."""

    def __init__(self, body: RSBody, weights: np.ndarray, h: float) -> None:
        self.body, self.W, self.h = body, np.asarray(weights, dtype=np.float64), float(h)
        self.tol = TOLERANCE * character_size(body.mesh.X)

    def world(self, x: np.ndarray, A: np.ndarray) -> np.ndarray:
        """p (n, 3) of reduced positions x (m,) under bone maps A (b, 3, 4)."""
        return lbs_positions(self.body.mesh.X + self.body.deformation(x), self.W, A)

    def step(self, q: np.ndarray, y: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """(q, x, Newton iterations) of the step to bone maps A (b, 3, 4), y = 2 p_n - p_(n-1) (n, 3)."""
        body, h = self.body, self.h
        B = body.map.fit.B  # (m, n, 3)
        m3 = np.repeat(body.masses, 3)
        # LB (m, 3n): sum_b w_b L_b B_k per vertex, flattened so that every product below is one BLAS call.
        LB = sum(self.W[None, :, b, None] * (B @ A[b, :, :3].T) for b in range(len(A))).reshape(len(B), -1)
        G = (LB * m3) @ LB.T
        base = (lbs_positions(body.mesh.X, self.W, A) - y).ravel()

        def energy(q: np.ndarray) -> float:
            d = base + body.map.positions(q) @ LB
            return 0.5 / h**2 * float(d @ (m3 * d)) + 0.5 * float(q @ body.K @ q)

        def derivatives(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            x, J = body.map.evaluate(q)
            g = J.T @ (LB @ (m3 * (base + x @ LB))) / h**2 + body.K @ q
            return g, J.T @ G @ J / h**2 + body.K

        def distance(q1: np.ndarray, q0: np.ndarray) -> float:
            dx = body.map.positions(q1) - body.map.positions(q0)
            return float(np.sqrt(max(float(dx @ G @ dx), 0.0) / body.masses.sum()))

        q, rep = minimize(Problem(energy, derivatives, lambda q, d: q + d, distance), q, self.tol, ITERATIONS)
        return q, body.map.positions(q), rep.iterations

    def run(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From rest: u (steps, n, 3) world secondary motion and seconds per step (steps,); A (steps + 2, b, 3, 4)."""
        q = np.zeros(self.body.map.r)
        x0 = np.zeros(self.body.map.fit.phi.shape[0])
        p_prev, p = self.world(x0, A[0]), self.world(x0, A[1])
        us, seconds = [], []
        for a in A[2:]:
            t0 = time.perf_counter()
            q, x, _ = self.step(q, 2.0 * p - p_prev, a)
            p_prev, p = p, self.world(x, a)
            seconds.append(time.perf_counter() - t0)
            us.append(p - lbs_positions(self.body.mesh.X, self.W, a))
        return np.array(us), np.array(seconds)


def reference_run(scene: RigScene) -> tuple[np.ndarray, float]:
    """The full-space reference's u (steps, n, 3) and its seconds per step (mean)."""
    mesh, masses = scene.mesh, scene.masses
    x = scene.rig_positions()
    ref = FullSpaceReference(
        mesh, scene.material, LBSRig.from_weights(scene.weights), masses, default_leak_field(mesh), scene.h
    )
    u, u_prev, us = np.zeros_like(mesh.X), np.zeros_like(mesh.X), []
    t0 = time.perf_counter()
    for k in range(1, scene.steps + 1):
        new, _ = ref.step(u, u_prev, x[k + 1], x[k], x[k - 1])
        u_prev, u = u, new
        us.append(u)
    return np.array(us), (time.perf_counter() - t0) / scene.steps


def modes_simulator(scene: RigScene, modes: int, clusters: int) -> tuple[Simulator, float]:
    """Skinning eigenmodes for the scene (``modes`` modes, at most ``clusters`` clusters) and the build seconds."""
    t0 = time.perf_counter()
    rig = LBSRig.from_weights(scene.weights)
    model = build_reduced_model(scene.mesh, scene.material, rig, m=modes, r=min(clusters, scene.mesh.t))
    settings = SimulationSettings(time_step=scene.h, max_iterations=ITERATIONS, tolerance=TOLERANCE, rest_state="pose")
    return Simulator(model, settings), time.perf_counter() - t0


def modes_run(scene: RigScene, sim: Simulator) -> tuple[np.ndarray, np.ndarray]:
    """From rest: u (steps, n, 3) of skinning eigenmodes and seconds per step (steps,)."""
    P = [rig_parameters(a) for a in scene.A]
    state = sim.initial_state(P[1], p_prev=P[0])
    us, seconds = [], []
    for k in range(2, len(P)):
        t0 = time.perf_counter()
        state, _ = sim.step(state, P[k])
        seconds.append(time.perf_counter() - t0)
        us.append(sim.displacement(state))
    return np.array(us), np.array(seconds)


def rs_model(scene: RigScene, modes: int, method: str = "taylor") -> tuple[RiggedRS, float]:
    """RS coordinates from ``modes`` free linear modes of the scene's mesh, and the build seconds."""
    t0 = time.perf_counter()
    body = RSBody.build(scene.mesh, scene.material, modes, method)
    return RiggedRS(body, scene.weights, scene.h), time.perf_counter() - t0


def linearised_rs_gradient(F: np.ndarray) -> np.ndarray:
    """The §9.4 reading: F (..., 3, 3) split linearly, F - I = omega + eps, then rebuilt as exp(omega) (I + eps).

    For a 90 degree turn about z this is diag(0, 0, 1): every neighbour collapses onto the z axis."""
    Fd = F - np.eye(3)
    return _exp(skew_part(Fd)) @ (np.eye(3) + sym_part(Fd))


def _exp(w: np.ndarray) -> np.ndarray:
    """Rotations exp(w) (..., 3, 3) of skew matrices w (Rodrigues)."""
    v = vee(w)
    a = np.linalg.norm(v, axis=-1)[..., None, None]
    safe = np.where(a > 1e-12, a, 1.0)
    s = np.where(a > 1e-12, np.sin(safe) / safe, 1.0)
    c = np.where(a > 1e-12, (1.0 - np.cos(safe)) / safe**2, 0.5)
    return np.eye(3) + s * w + c * (w @ w)


def rig_pose_reconstruction(scene: RigScene, sample: int, modes: tuple[int, ...] = (2, 5, 8)) -> dict:
    """The rig's pose LBS_A(X) at ``sample`` rebuilt through RS coordinates, as seed 003 rebuilds positions.

    Each variant gives per-tet gradients, then the Poisson fit holds ``scene.fixed``: "linearised"
    (§9.4's reading, :func:`linearised_rs_gradient`), "exact" (the RS pair with the rotation's log,
    ``rs_from_gradient``), and "subspace_r" (that pair fitted, volume-weighted least squares, by the
    RS vectors of r clamped linear modes, as an RS simulator holds it).  Per variant: the error
    (mass-norm distance to the pose's displacement, relative to it) and the volume kept (sum of
    V det F over sum of V; 1 is no collapse).  Skinning eigenmodes hold this pose exactly (the rig is
    in their space): error 0."""
    mesh, masses = scene.mesh, scene.masses
    target = lbs_positions(mesh.X, scene.weights, scene.A[sample]) - mesh.X
    F = np.einsum("tai,taj->tij", (mesh.X + target)[mesh.T], mesh.gradients)
    omega, eps = rs_from_gradient(F - np.eye(3))
    grads = {"linearised": linearised_rs_gradient(F), "exact": _exp(omega) @ (np.eye(3) + eps)}
    V = mesh.volumes
    for r in modes:
        U, _ = linear_modes(mesh, scene.material, masses, r, scene.fixed)
        Wr, Sr = rs_vectors(mesh, U)
        basis = np.concatenate([Wr, Sr], axis=-1).reshape(r, -1) * np.repeat(np.sqrt(V), 18)
        rhs = np.concatenate([omega, eps], axis=-1).reshape(-1) * np.repeat(np.sqrt(V), 18)
        q = np.linalg.lstsq(basis.T, rhs, rcond=None)[0]
        w_q, e_q = np.einsum("r,rtij->tij", q, Wr), np.einsum("r,rtij->tij", q, Sr)
        grads[f"subspace_{r}"] = _exp(w_q) @ (np.eye(3) + e_q)
    poisson = PoissonReconstruction(mesh, scene.fixed, None if scene.fixed is not None else masses)
    out: dict = {"bend_deg": float(np.degrees(np.linalg.norm(vee(skew_part(_log_of(F))), axis=-1).max()))}
    scale = float(np.sqrt(masses @ (target * target).sum(axis=1)))
    for name, Fr in grads.items():
        u = poisson.reconstruct((Fr - np.eye(3))[None])[0]
        if scene.fixed is None:  # free: compare up to the translation the Poisson fit leaves to the frame
            u += (masses @ (target - u)) / masses.sum()
        Frec = np.einsum("tai,taj->tij", (mesh.X + u)[mesh.T], mesh.gradients)
        out[name] = {
            "error": float(np.sqrt(masses @ ((u - target) ** 2).sum(axis=1)) / scale),
            "volume_kept": float(V @ np.linalg.det(Frec) / V.sum()),
        }
    return out


def _log_of(F: np.ndarray) -> np.ndarray:
    """Skew logs (t, 3, 3) of the rotations of F (t, 3, 3): how far the rig turns each tet."""
    return rotation_log(rotation(F))
