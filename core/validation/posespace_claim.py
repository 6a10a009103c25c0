"""The seed's claim as the seed states it (Xu & Barbič, seed 001; issue 29 item 4): validation only.

Claim: per-pose displacement subspaces (linear modes plus modal derivatives, the posed shape taken
as rest), aligned and blended in pose space, beat rest bases warped to the pose, and PCA.

Scene: a 3-bone limb (a bar along x) bends from 0° to 120° and holds, with training poses at 0°,
60° and 120°; the motion passes 30° and 90° between them.  The full-space reference (every tet
its own rotation, exact complementarity, the "pose" rest state: the rig shape is the rest shape,
as in the seed) and every reduced run solve the same incremental potential with the same time
step to the same tolerance (``reduced_run``), so only the subspace differs:

* ``seed``: per-pose modes + derivatives, aligned and blended (``seed_blend``), q carried from
  step to step as the seed does (§5.2: the displacement morphs with the basis, no re-projection);
* ``seed_projected``: the same bases, the inertia taken from the full-space displacements
  (a Galerkin step on the new basis): it separates the bases' quality from the seed's carry;
* ``warped`` / ``warped_projected``: the rest pose's modes + derivatives rotated per vertex by
  the rig (the seed's Fig. 4), carried either way;
* ``pca``: PCA of full-space snapshots of another motion (the same bend, faster, then held);
* ``pca_modes``: PCA of the training poses' bases together, one pose-independent basis (the
  seed's own comparison, its Fig. 14);
* ``pca_own``: PCA of the measured run's own reference snapshots (an oracle: an upper bound);
* ``skinning``: this project's rest skinning eigenmodes, m of them (12 m coordinates), and
  ``skinning_dof``: about m / 12 of them, the same number of coordinates as the others.

Error of a run: ||u - u_ref|| / ||u_ref|| per step, over the steps where ||u_ref|| is at least 10 %
of its largest value (earlier the reference is nearly zero and the ratio is noise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model.fem import lumped_mass
from ..model.leak import default_leak_field
from ..model.materials import Material
from ..model.rig import lbs_positions, rig_parameters
from ..posespace import rbf
from ..subspace.reduced import build_reduced_model
from .pose_bases import mode_basis, pca_basis, pca_directions, skinning_basis, vertex_rotations, warped_basis
from .reduced_run import reference_run, relative_errors, run_reduced
from .reference import FullSpaceReference
from .scenes import BarScene, bar_scene
from .seed_blend import SeedBlend, align_pose_bases

H = 1.0 / 48.0
TRAINING_DEG = (0.0, 60.0, 120.0)
BETWEEN_DEG = (30.0, 90.0)
SIGNIFICANT = 0.1  # steps with ||u_ref|| below this share of its largest value are not scored
METHODS = (
    "seed",
    "seed_projected",
    "warped",
    "warped_projected",
    "pca",
    "pca_modes",
    "pca_own",
    "skinning",
    "skinning_dof",
)


@dataclass(frozen=True)
class ClaimSetup:
    """The limb (3 bones, length x 1 x 1, ``cells`` per unit), its material and the motion's timing."""

    length: float = 4.0
    cells: int = 3
    young: float = 3e5
    poisson: float = 0.3
    swing_s: float = 0.75  # 0° -> 120° (cosine ease), then held
    steps: int = 48
    training_swing_s: float = 0.5  # the PCA's training motion: the same bend, faster


def bend_angle(t: float, swing_s: float) -> float:
    """The bend (degrees) at time t (s): 0 before t = 0, 120 after swing_s, a cosine ease between."""
    s = min(max(t / swing_s, 0.0), 1.0)
    return 60.0 * (1.0 - np.cos(np.pi * s))


def bend_transforms(scene: BarScene, deg: float) -> np.ndarray:
    """Bone maps (3, 3, 4) of the limb bent by deg in total, shared by its two joints."""
    return scene.transforms(0.25, amplitude=np.radians(deg), frequency=1.0)


class ClaimScene:
    """The limb, its reference solver and the rig frames of a motion."""

    def __init__(self, setup: ClaimSetup) -> None:
        self.setup = setup
        self.scene = bar_scene(length=setup.length, cells_per_unit=setup.cells, bones=3)
        mesh = self.scene.mesh
        self.material = Material.uniform(mesh.t, setup.young, setup.poisson, 1000.0)
        self.masses = lumped_mass(mesh, self.material.density)
        self.leak = default_leak_field(mesh)
        self.ref = FullSpaceReference(
            mesh, self.material, self.scene.rig, self.masses, self.leak, H, max_newton=200, rest_state="pose"
        )

    def frames(self, swing_s: float, steps: int) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
        """Rig frames k = 0..steps + 1 at times (k - 1) h: transforms (3, 3, 4), shapes (n, 3), angles (deg)."""
        deg = np.array([bend_angle((k - 1) * H, swing_s) for k in range(steps + 2)])
        A = [bend_transforms(self.scene, d) for d in deg]
        return A, [lbs_positions(self.scene.mesh.X, self.scene.rig.weights, a) for a in A], deg

    def shape(self, deg: float) -> np.ndarray:
        return lbs_positions(self.scene.mesh.X, self.scene.rig.weights, bend_transforms(self.scene, deg))


def seed_pose_blend(cs: ClaimScene, m: int) -> tuple[SeedBlend, list[np.ndarray]]:
    """The seed's blend of per-training-pose bases (3n, m), and the unaligned per-pose bases."""
    shapes = [cs.shape(d) for d in TRAINING_DEG]
    bases = [mode_basis(cs.ref, x, m) for x in shapes]
    params = [rig_parameters(bend_transforms(cs.scene, d)) for d in TRAINING_DEG]
    features = np.array([rbf.pose_features(p) for p in params])
    aligned = align_pose_bases(cs.scene.mesh, bases, shapes, cs.ref.m3, features)
    return SeedBlend(aligned, cs.ref.m3, features), bases


def significant_steps(u_ref: np.ndarray) -> np.ndarray:
    """A mask (steps,) of the steps where ||u_ref|| (u_ref: (steps, n, 3)) is significant."""
    size = np.linalg.norm(u_ref.reshape(len(u_ref), -1), axis=1)
    return size >= SIGNIFICANT * size.max()


@dataclass
class Motion:
    """The measured bend: rig frames x (steps + 2, n, 3), parameters P, per-vertex rotations R,
    the reference u_ref (steps, n, 3), the PCA's training snapshots u_train, the scored steps
    (mask) and the steps nearest the between-pose angles (near: deg -> step)."""

    x: list[np.ndarray]
    P: list[np.ndarray]
    R: list[np.ndarray]
    u_ref: np.ndarray
    u_train: np.ndarray
    mask: np.ndarray
    near: dict[float, int]
    reference_s: float


def measured_motion(cs: ClaimScene) -> Motion:
    """The bend of ``cs.setup`` and its full-space reference, and the PCA's training run."""
    setup = cs.setup
    A, x, deg = cs.frames(setup.swing_s, setup.steps)
    u_ref, ref_s = reference_run(cs.ref, x, setup.steps)
    _, x_train, _ = cs.frames(setup.training_swing_s, setup.steps)
    u_train, _ = reference_run(cs.ref, x_train, setup.steps)
    return Motion(
        x=x,
        P=[rig_parameters(a) for a in A],
        R=[vertex_rotations(cs.scene.rig.weights, a) for a in A],
        u_ref=u_ref,
        u_train=u_train,
        mask=significant_steps(u_ref),
        near={d: int(np.argmin(np.abs(deg[2:] - d))) for d in BETWEEN_DEG},  # step k - 1 ends at frame k + 1
        reference_s=ref_s,
    )


def method_bases(cs: ClaimScene, motion: Motion, m: int) -> dict[str, tuple[Callable[[int], np.ndarray], str]]:
    """Per method: (basis at rig frame k (3n, r), how q is carried) at size m."""
    blend, bases = seed_pose_blend(cs, m)
    rest = bases[0]  # the 0° training pose is the rest pose
    fixed = {
        "pca": pca_basis(motion.u_train, cs.ref, m),
        "pca_modes": pca_directions(np.hstack(bases), cs.ref.m3, m),
        "pca_own": pca_basis(motion.u_ref, cs.ref, m),
        "skinning": _skinning(cs, m),
        "skinning_dof": _skinning(cs, max(1, round(m / 12))),
    }

    def seed(k: int) -> np.ndarray:
        return blend.basis(motion.P[k])

    def warped(k: int) -> np.ndarray:
        return warped_basis(rest, motion.R[k], cs.ref)

    return {
        "seed": (seed, "morph"),
        "seed_projected": (seed, "project"),
        "warped": (warped, "morph"),
        "warped_projected": (warped, "project"),
        **{name: ((lambda k, U=U: U), "morph") for name, U in fixed.items()},
    }


def claim_rows(setup: ClaimSetup, ms: tuple[int, ...]) -> dict:
    """The table: per m and method, mean/max relative error, the error near 30° and 90°, ms per step.

    Returns {"vertices", "tets", "steps", "reference_ms", "max_u", "rows": [{m, method, dofs,
    mean, max, between: {deg: error}, ms, newton_max}]}.
    """
    cs = ClaimScene(setup)
    motion = measured_motion(cs)
    rows = []
    for m in ms:  # loop over basis sizes
        for name, (bases_at, carry) in method_bases(cs, motion, m).items():  # loop over methods
            run = run_reduced(cs.ref, bases_at, motion.x, setup.steps, carry=carry)
            e = relative_errors(run.u, motion.u_ref)
            rows.append(
                {
                    "m": m,
                    "method": name,
                    "dofs": int(bases_at(1).shape[1]),
                    "mean": float(e[motion.mask].mean()),
                    "max": float(e[motion.mask].max()),
                    "between": {f"{d:g}": float(e[i]) for d, i in motion.near.items()},
                    "ms": 1e3 * run.seconds_per_step,
                    "newton_max": int(run.iterations.max()),
                }
            )
    mesh = cs.scene.mesh
    return {
        "vertices": mesh.n,
        "tets": mesh.t,
        "steps": setup.steps,
        "reference_ms": 1e3 * motion.reference_s,
        "max_u": float(np.abs(motion.u_ref).max()),
        "rows": rows,
    }


def _skinning(cs: ClaimScene, m: int) -> np.ndarray:
    mesh = cs.scene.mesh
    model = build_reduced_model(mesh, cs.material, cs.scene.rig, m=m, r=mesh.t, leak=cs.leak)
    return skinning_basis(model, cs.ref)
