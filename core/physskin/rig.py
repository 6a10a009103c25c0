"""Physics skinning of a skinned character: rig parameters in, positions out (Song et al., §3).

The character's own skinning weights choose everything the seed leaves to the
user: each tet's rotation is the bones' rotations blended with the tet's
weights (:func:`rotations.blended_rotations`; the seed's one-bone clusters
crack at 180° twists, see ``tests/core/physskin/test_solve.py``), pins are the
inner flesh around each bone and every vertex bound to one bone alone
(:func:`assignment.choose_pins`) and the material
is the jiggle's (Lamé fields per tet, so painted stiffness makes mixed
materials).  With a volume term, a frame is the ARAP answer (one scalar
back-substitution) followed by at most :data:`VOLUME_STEPS` Gauss-Newton steps with a
line search on the exact volume (det F) energy (:meth:`solve.PhysicsSkin.volume_solve`); :meth:`PhysicsRig.positions`
says why it does not start from the seed's linear co-rotational solve.  On
CesiumMan's arm bent 90° the joint loses 3.6 % (the seed's linear solve: 4.4 %)
and the bent arm 2.4 % (3.1 %) (``tests/addon/test_real_characters.py``).  Rig
parameters are those of ``core.model.rig``: (12 b,), the affine bone maps applied
to rest positions.

What the physics skin changes is returned as a *correction* to linear blend
skinning, c = x_phys - x_LBS on the tet vertices: zero at rest and under any
rigid motion of the whole rig, and carried to render vertices by the same
barycentric embedding as the jiggle (so points outside the volume are never
extrapolated).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..contact.colliders import Ground, MeshCollider
from ..geometry.embedding import Embedding, interpolate
from ..geometry.tetmesh import TetMesh
from ..model.fem import lumped_mass
from ..model.rig import lbs_basis, normalize_weights, rig_matrix
from .assignment import bone_tet_weights, choose_pins, skeleton_pins
from .contact import SkinContact
from .rotations import blended_rotation_rows, blended_rotations
from .solve import TOLERANCE, PhysicsSkin

# Gauss-Newton steps on the exact volume, each with a line search on the exact energy
# that also refuses new inversions (``solve.PhysicsSkin.volume_solve``).  One unsearched
# step was measured 0.3-0.9 % of the size from the converged answer at nu = 0.45 and
# 1-10 % at 0.49 (a 425-vertex cylinder bent 90-120°, twisted 0-180°; 14 tets inverted);
# the search stops once a step moves the flesh by less than VOLUME_TOLERANCE of the
# size: 3-4 steps at 0.45 (within 0.03-0.2 % of converged), 4-10 at 0.49 (0.08-1.5 %).
VOLUME_STEPS = 8
# With obstacles the steps also settle the contact (its planes are taken afresh after each step).
CONTACT_STEPS = 16
VOLUME_TOLERANCE = 1e-3
# The steps' iterations stop at this share of their starting residual (the gradient): an inexact
# Newton method's forcing term.  Each step is a correction the next one checks, so solving it
# tightly buys nothing: on the 5,929-vertex limb with smooth weights (24 poses up to a 120° bend with
# a 180° twist) 0.1 lands as close to a 1e-7 solve as 1e-3 did (4.1e-4 against 3.9e-4 of the size at
# worst, 8.6e-5 against 7.4e-5 on average) in a third of the iterations (10.6 a frame against 30.2);
# 0.3 was 2.7 times further.  ``bench/physskin_convergence.py`` measures the shipped answer's distance
# from a 1e-7 solve on every bench run.
STEP_TOLERANCE = 0.1
# From bones only (Song et al.): the pins are the inner AUTO_PIN_DEPTH of the flesh around each bone
# (on a limb whose vertices lie on its bones, the line of vertices along them: 1.2 % of the 2,673),
# each a spring SOFT_PINS times its vertex's own stiffness (pins then follow their bones to 5e-5 of
# the 4 m limb bent 120°); rotations turn across a cluster boundary over AUTO_BLEND of a bone's
# length either side (``assignment.bone_tet_weights`` says why).
AUTO_PIN_DEPTH = 0.1
SOFT_PINS = 1e3
AUTO_BLEND = 0.3
# Gravity (m/s^2) in the tet mesh's frame; the add-on's meshes have the world's axes (the object's
# rotation applied, skinmodes_addon/character.py), so this is the world's -Z.
GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass
class PhysicsRig:
    """A character's physics skin.

    skin: the solve; weights (n, b) on the tet vertices, tet_weights (t, b);
    basis (n, 4b): the LBS basis of the tet vertices (x_LBS = basis @ rig_matrix(p)).
    """

    skin: PhysicsSkin
    weights: np.ndarray = field(repr=False)
    tet_weights: np.ndarray = field(repr=False)
    basis: np.ndarray = field(repr=False)
    tolerance: float = TOLERANCE
    volume_steps: int = VOLUME_STEPS
    volume_tolerance: float = VOLUME_TOLERANCE  # the volume solve's stop, a share of the size (tests, bench)
    force: np.ndarray | None = field(default=None, repr=False)  # (n, 3) newtons on the tet vertices, or None
    # (n,) True where no bone moves a vertex (all-zero weights): the Armature modifier leaves it at rest
    unbound: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        mesh: TetMesh,
        weights: np.ndarray,
        heads: np.ndarray,
        tails: np.ndarray,
        mu: np.ndarray,
        lam: np.ndarray,
        pin_depth: float,
        tolerance: float = TOLERANCE,
        pin_rigid: bool = True,
    ) -> PhysicsRig:
        """mesh (n vertices, t tets); weights (n, b); heads, tails (b, 3) rest segments (NaN: none);
        mu, lam (t,) Lamé parameters; pin_depth in (0, 1) and pin_rigid (pin every vertex bound to
        one bone alone): see :func:`assignment.choose_pins`."""
        W = normalize_weights(np.asarray(weights, dtype=np.float64))
        heads, tails = np.asarray(heads, float), np.asarray(tails, float)
        pins, pin_bone = choose_pins(mesh.X, mesh.T, W, heads, tails, pin_depth, pin_rigid)
        skin = PhysicsSkin.build(mesh, mu, lam, pins, pin_bone)
        return cls(skin, W, W[mesh.T].mean(axis=1), lbs_basis(W, mesh.X), tolerance)

    @classmethod
    def from_bones(
        cls,
        mesh: TetMesh,
        weights: np.ndarray,
        heads: np.ndarray,
        tails: np.ndarray,
        mu: np.ndarray,
        lam: np.ndarray,
        tolerance: float = TOLERANCE,
    ) -> PhysicsRig:
        """The seed's automatic physics skin: rotations and pins from the bone segments alone.

        weights (n, b) serve only the correction's baseline (linear blend skinning, what Blender's
        Armature modifier gives; a column of vertices bound to no bone, NaN segment, is the object's
        own motion): a mesh without weights is skinned all the same.  heads, tails (b, 3).
        """
        W = normalize_weights(np.asarray(weights, dtype=np.float64))
        heads, tails = np.asarray(heads, float), np.asarray(tails, float)
        pins, pin_bone = skeleton_pins(mesh.X, mesh.T, heads, tails, AUTO_PIN_DEPTH)
        skin = PhysicsSkin.build(mesh, mu, lam, pins, pin_bone, soft_pins=SOFT_PINS)
        tet_weights = bone_tet_weights(mesh.X, mesh.T, heads, tails, AUTO_BLEND)
        unbound = W.sum(axis=1) == 0.0
        return cls(skin, W, tet_weights, lbs_basis(W, mesh.X), tolerance, unbound=unbound if unbound.any() else None)

    @property
    def mesh(self) -> TetMesh:
        return self.skin.mesh

    def set_gravity(self, acceleration: np.ndarray | None, density: np.ndarray | float) -> None:
        """Gravity on the flesh: force = lumped mass (density (t,) or scalar, kg/m^3) times acceleration
        (3,) m/s^2 in the mesh's frame; None turns it off.  Pinned vertices follow their bones regardless."""
        if acceleration is None:
            self.force = None
            return
        m = lumped_mass(self.mesh, density)
        self.force = m[:, None] * np.asarray(acceleration, dtype=np.float64)[None, :]

    def positions(self, p: np.ndarray, obstacles: list[Ground | MeshCollider] | None = None) -> np.ndarray:
        """Physics-skinned tet positions (n, 3) for rig parameters p (12 b,); a function of p (and the
        obstacles) alone.  obstacles: the ground and colliders at this frame, pushing the free surface
        out (:mod:`.contact`; the pins stay on their bones); None or empty: no contact."""
        transforms = np.asarray(p, dtype=np.float64).reshape(-1, 3, 4)
        contact = SkinContact.build(self.skin, obstacles) if obstacles else None
        if self.skin.prefactored and contact is None:  # ARAP: no volume term to correct
            R = blended_rotations(transforms, self.tet_weights)
            return self.skin.positions(transforms, R, self.force, tolerance=self.tolerance)
        # The solve reads the rotations of the tets that touch a free vertex, component-major
        # (``solve.FreePattern``): made in that layout, not gathered from a (t, 3, 3) stack.
        R = blended_rotation_rows(transforms, self.tet_weights[self.skin.pattern.tets])
        # The volume step starts from the ARAP answer (one back-substitution), not from the seed's
        # co-rotational solve with the linearised volume term (about 20 preconditioned iterations,
        # ``skin.positions``, the bench's "cold" variant).  Measured on the 2,673-vertex limb, ARAP +
        # step against linear + step: 180° twist -1.45 % / -1.79 %, 120° bend -3.5 % / -4.3 %, both
        # -5.0 % / -5.7 %, no inverted tet either way; CesiumMan's bent elbow -2.40 % / -2.34 % (joint
        # -3.57 % / -3.48 %).  The step alone holds det F, which the linear term only approximates,
        # so the linear solve before it buys nothing and costs half the frame (27 ms against 54 ms
        # on a 5k-vertex limb).
        # No warm start from the previous frame: every frame starts from its own ARAP answer, so a
        # frame's positions are the same bits whether it is baked in order or scrubbed to (a start
        # carried over from another frame would change the answer within VOLUME_TOLERANCE, not to
        # round-off).  The speed comes from inside the frame (``volume_solve``'s line search).
        x = self.skin.arap_positions(transforms, R, self.force)
        targets = self.skin.pin_targets(transforms) if self.skin.soft else None
        # The steps are corrections: STEP_TOLERANCE at the default tolerance, and as much tighter as a
        # caller asks the rig to be (the invariance tests).
        step_tolerance = STEP_TOLERANCE * min(1.0, self.tolerance / TOLERANCE)
        steps = self.volume_steps if contact is None else max(self.volume_steps, CONTACT_STEPS)
        return self.skin.volume_solve(R, x, self.volume_tolerance, steps, step_tolerance, self.force, targets, contact)

    def lbs(self, p: np.ndarray) -> np.ndarray:
        """Linear-blend-skinned tet positions (n, 3) for rig parameters p (12 b,); unbound vertices at rest."""
        x = self.basis @ rig_matrix(p)
        if self.unbound is not None:
            x[self.unbound] = self.mesh.X[self.unbound]
        return x

    def correction(self, p: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
        """c = x_phys - x_LBS (n, 3) on the tet vertices; x: the physics positions if known."""
        return (self.positions(p) if x is None else x) - self.lbs(p)


def render_correction(
    embedding: Embedding, T: np.ndarray, correction: np.ndarray, keep: np.ndarray | None
) -> np.ndarray:
    """The tet vertices' correction (n, 3) at the render vertices (k, 3); keep (k,): False where
    a vertex is not simulated (a skipped loose part follows the rig only)."""
    out = interpolate(embedding, T, correction)
    if keep is not None:
        out[~keep] = 0.0
    return out
