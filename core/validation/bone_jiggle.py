"""A bone-jiggle reference: what the popular free Blender bone-jiggle add-ons do, in numpy (issue 31).

Validation and bench only, never shipped.  The add-ons animators use for tails and ears
("Wiggle 2" by Steve Miller, and its fork "Jiggle Physics") give each jiggling bone's tail
a particle, stepped once per frame:

1. **predict** (Verlet): ``p* = p + v`` with ``v = p - p_prev`` the last frame's motion,
   the part of it not carried by the rig damped by ``(1 - damping·dt)``;
2. **constrain**, ``iterations`` times over the bones in hierarchy order: pull the particle
   a fraction ``stiffness·dt²/iterations`` toward where the animated chain puts the tail
   (the bone's animated pose relative to its parent, on the parent's *jiggled* frame), then
   put it back at the bone's length from its head.  With ``chain`` on, half of each
   correction pushes the parent's tail the other way (except on the last iteration), so
   a chain of jiggle bones swings as one rope;
3. the bone turns (smallest rotation) from its target direction to the particle; children
   follow.  Bones that do not jiggle keep their animated pose relative to their parent.

Defaults are Wiggle 2's (``wiggle_stiff`` 400, ``wiggle_damp`` 1, Quality 2 iterations,
Chain on, stretch 0).  Two deliberate departures, both so that the reference measures
motion *from the rig alone* as our complementary dynamics does:

* damping acts on the particle's velocity *relative to the rig's* (as Jiggle Physics'
  "friction" does), not on its world velocity as Wiggle 2's does.  World damping is a drag
  through the air: a rig moving at constant velocity then lags by ``damping·dt·V`` over the
  spring's pull forever, which is not secondary motion.  ``world_drag=True`` gives Wiggle 2's;
* gravity is off (the add-ons default to the scene's, 9.81 Blender units/s², which sags a
  tail by a scale-dependent amount; our product has no gravity).

The particles start at rest on the first frame's pose, as the add-ons reset at the
scene's first frame.

Checked once against Wiggle 2 itself (v2.2.4, run in bpy 5.0.1 with gravity 0 on the tail
bones; not part of the tests), offset of the last tail bone's tail from the rig's, peak in %
of the body diagonal: the fox walking 6.38 (this module with the add-on's tails and world
drag: 6.67), running 6.37 (7.89), the stag galloping 10.2 (8.3; the add-on then keeps a
steady offset of 6-9 % through the hold, this module settles).  On the T-Rex, whose imported
tail bones are slivers, the add-on rings at about 50 % for the whole clip, as this module does
on the same tails; :func:`rest_levers` is what makes the reference usable there (10 %).

Bone matrices are world 4 x 4 like Blender's ``armature.matrix_world @ pose_bone.matrix``:
the bone runs along its local +Y from the head (the translation); the tail is at
``M @ (0, length, 0, 1)`` with ``length`` in the armature's space (the matrix carries any
object scale).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JiggleSettings:
    """The add-on's per-bone controls, at Wiggle 2's defaults.

    stiffness: spring pull toward the rig's tail, 1/s² (Wiggle 2 "Stiff").
    damping: 1/s (Wiggle 2 "Damp"); per frame the free velocity is kept ``1 - damping/fps``.
    iterations: constraint passes per frame (Wiggle 2 "Quality").
    chain: corrections push the parent's tail back (Wiggle 2 "Chain").
    world_drag: damp world velocity (Wiggle 2 exactly) instead of velocity relative to the rig.
    gravity: (3,) world acceleration, Blender units/s² (the add-ons: the scene's; here none).
    """

    stiffness: float = 400.0
    damping: float = 1.0
    iterations: int = 2
    chain: bool = True
    world_drag: bool = False
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)


def bone_tails(matrices: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Tail points: matrices (..., b, 4, 4), lengths (b,) -> (..., b, 3) = M @ (0, length, 0, 1)."""
    return matrices[..., :3, 3] + matrices[..., :3, 1] * lengths[:, None]


def lever_points(matrices: np.ndarray, levers: np.ndarray) -> np.ndarray:
    """Particle points: matrices (..., b, 4, 4), levers (b, 3) in bone space -> (..., b, 3) = M @ (lever, 1)."""
    return np.einsum("...ij,...j->...i", matrices[..., :3, :3], levers) + matrices[..., :3, 3]


def as_levers(levers: np.ndarray) -> np.ndarray:
    """Levers (b, 3) from levers (b, 3) or bone lengths (b,) (the tail, (0, length, 0))."""
    levers = np.asarray(levers, dtype=np.float64)
    if levers.ndim == 2:
        return levers
    out = np.zeros((len(levers), 3))
    out[:, 1] = levers
    return out


def rest_levers(rest: np.ndarray, parents: np.ndarray, lengths: np.ndarray, jiggle: np.ndarray) -> np.ndarray:
    """Levers (b, 3), in bone space, from a rig's rest bones (b, 4, 4): each bone's child's head.

    Imported rigs rarely put a bone's tail where its child starts: glTF stores joints, not
    bones, and Blender's importer guesses the tails (the Fox's Tail01 points away from Tail02;
    the T-Rex's tail bones are a few thousandths of their segment long).  The particle's
    lever, and so how far a moving head flings it, should be the segment the bone carries:
    from its head to its child's head (a jiggling child first, else the first).  A bone
    without a usable child keeps its own tail, but no shorter than its parent's lever.
    """
    nb = len(parents)
    out = as_levers(lengths).copy()
    for b in range(nb):
        kids = [c for c in range(nb) if parents[c] == b]
        kids.sort(key=lambda c: not jiggle[c])
        for c in kids:
            local = np.linalg.solve(rest[b], rest[c][:, 3])[:3]
            if np.linalg.norm(local) > 1e-6 * max(np.linalg.norm(rest[b][:3, 3]), 1.0):
                out[b] = local
                break
        else:
            q = parents[b]
            if q >= 0 and np.linalg.norm(out[b]) < np.linalg.norm(out[q]):
                out[b] = np.array([0.0, np.linalg.norm(out[q]), 0.0])
    return out


def swing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest rotation (3, 3) taking direction ``a`` (3,) to direction ``b`` (3,); neither need be unit."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    axis = np.cross(a, b)
    s, c = np.linalg.norm(axis), float(a @ b)
    if s < 1e-12:
        if c > 0:
            return np.eye(3)
        # Opposite directions: half a turn about any axis normal to a.
        n = np.cross(a, np.eye(3)[np.argmin(np.abs(a))])
        n /= np.linalg.norm(n)
        return 2.0 * np.outer(n, n) - np.eye(3)
    k = axis / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def aimed(target: np.ndarray, point: np.ndarray, lever: np.ndarray) -> np.ndarray:
    """Bone matrix (4, 4) ``target`` (4, 4) turned about its head so its ``lever`` (3,) points at ``point`` (3,).

    The bone keeps its length and roll relative to the target: only the swing changes.
    """
    head = target[:3, 3]
    d = point - head
    arm = target[:3, :3] @ lever
    if np.linalg.norm(d) < 1e-12 * max(np.linalg.norm(arm), 1e-300):
        return target.copy()
    out = target.copy()
    out[:3, :3] = swing(arm, d) @ target[:3, :3]
    return out


def on_parent(jiggled_parent: np.ndarray, animated_parent: np.ndarray, animated: np.ndarray) -> np.ndarray:
    """Where the animated chain puts a bone (4, 4) given its parent's jiggled frame (4, 4):
    the bone's animated pose relative to its parent, carried by the jiggled parent."""
    return jiggled_parent @ np.linalg.solve(animated_parent, animated)


def _chain_push(s: np.ndarray, q: int, head: np.ndarray, P: np.ndarray, J: np.ndarray, fac: float) -> None:
    """Turn the parent ``q``'s tail particle about the parent's head so that its child's ``head`` (3,)
    would move toward ``head - fac·s`` (in place).

    For a connected bone (the head on the parent's tail) this moves the parent's tail by
    ``-fac·s`` projected on its sphere, as Wiggle 2 does.  Wiggle 2 aims the parent's tail at the
    moved head also when they are apart; imported rigs (glTF connects nothing, and its bones often
    point away from their children) would then turn the parent by the angle between the two
    every frame, so the parent turns by the head's swing instead.
    """
    hq = J[q, :3, 3]
    reach = head - hq
    if np.linalg.norm(reach) < 1e-12:
        return  # the head sits on the parent's head: turning the parent cannot move it
    P[q] = hq + swing(reach, reach - fac * s) @ (P[q] - hq)


def _constrain(
    A: np.ndarray,
    P: np.ndarray,
    J: np.ndarray,
    targets: np.ndarray,
    parents: np.ndarray,
    levers: np.ndarray,
    jiggle: np.ndarray,
    world_len: np.ndarray,
    spring: float,
    settings: JiggleSettings,
) -> None:
    """Step 2 at one frame (in place): ``settings.iterations`` passes over the bones in
    hierarchy order, each pulling every particle by the spring, then back to its length.

    A (b, 4, 4) the frame's animated bones; P (b, 3) particles; J (b, 4, 4) jiggled bones
    and ``targets`` (b, 4, 4) where the animated chain puts each bone on its jiggled parent,
    both updated; parents, levers, jiggle and world_len (b,) as :func:`jiggle_bones` reads
    them; ``spring`` the pull per pass.
    """
    for it in range(settings.iterations):
        last = it == settings.iterations - 1
        for b in range(len(parents)):
            q = parents[b]
            targets[b] = A[b] if q < 0 else on_parent(J[q], A[q], A[b])
            if not jiggle[b]:
                J[b] = targets[b]
                continue
            head = targets[b][:3, 3]
            tail = targets[b][:3, :3] @ levers[b] + head
            push = settings.chain and q >= 0 and jiggle[q]
            # Wiggle 2 shares a correction with the parent half and half, except on the last
            # pass, which leaves the parent alone (its "stretch" 0) so the chain ends solved.
            fac = 0.0 if (last or not push) else 0.5
            # 2a. Spring toward the rig's tail.
            s = spring * (tail - P[b])
            P[b] += (1.0 - fac) * s
            if fac:
                _chain_push(s, q, head, P, J, fac)
            # 2b. Length: back onto the sphere of the bone's length about its head.
            d = P[b] - head
            r = np.linalg.norm(d)
            if r > 1e-12 * world_len[b]:
                s = head + d * (world_len[b] / r) - P[b]
                P[b] += (1.0 - fac) * s
                if fac:
                    _chain_push(s, q, head, P, J, fac)
            if fac:
                J[q] = aimed(targets[q], P[q], levers[q])
            J[b] = aimed(targets[b], P[b], levers[b])


def _settle(
    A: np.ndarray,
    P: np.ndarray,
    J: np.ndarray,
    targets: np.ndarray,
    parents: np.ndarray,
    levers: np.ndarray,
    jiggle: np.ndarray,
) -> None:
    """Step 3, one pass from the root (in place, arguments as :func:`_constrain`): every head on
    its parent's final frame, every jiggle bone aimed at its particle, and the particle put on
    the bone's tail (lengths kept exactly)."""
    for b in range(len(parents)):
        q = parents[b]
        targets[b] = A[b] if q < 0 else on_parent(J[q], A[q], A[b])
        J[b] = aimed(targets[b], P[b], levers[b]) if jiggle[b] else targets[b]
        if jiggle[b]:
            P[b] = J[b][:3, :3] @ levers[b] + J[b][:3, 3]


def jiggle_bones(
    animated: np.ndarray,
    parents: np.ndarray,
    levers: np.ndarray,
    jiggle: np.ndarray,
    fps: float,
    settings: JiggleSettings = JiggleSettings(),
) -> np.ndarray:
    """Run the bone-jiggle reference over a clip.

    animated: (F, b, 4, 4) world bone matrices per frame (one step per frame, dt = 1/fps).
    parents: (b,) parent index, -1 for a root; every parent comes before its children.
    levers: (b, 3) each bone's particle in its own frame (:func:`rest_levers`), or (b,) bone
      lengths in armature space for the add-ons' tails at (0, length, 0) (the module docstring).
    jiggle: (b,) bool, the bones whose tails are particles (the add-on's "Bone Tail" toggle).
    Returns (F, b, 4, 4) jiggled world bone matrices; frame 0 is the animated pose.
    """
    animated = np.asarray(animated, dtype=np.float64)
    parents = np.asarray(parents)
    levers = as_levers(levers)
    jiggle = np.asarray(jiggle, dtype=bool)
    F, nb = animated.shape[:2]
    if np.any(parents >= np.arange(nb)):
        raise ValueError("bones must be in hierarchy order (every parent before its children)")
    dt = 1.0 / fps
    spring = settings.stiffness * dt * dt / settings.iterations
    keep = min(max(1.0 - settings.damping * dt, 0.0), 1.0)
    g = np.asarray(settings.gravity, dtype=np.float64) * dt * dt
    # World lever lengths: the matrices carry the armature object's scale.
    world_len = np.linalg.norm(np.einsum("bij,bj->bi", animated[0, :, :3, :3], levers), axis=1)
    rig_tails = lever_points(animated, levers)  # (F, b, 3): where the rig alone puts each particle
    out = np.empty_like(animated)
    out[0] = animated[0]
    P = rig_tails[0].copy()  # particles start at rest on the first pose
    P_prev = P.copy()
    for n in range(1, F):
        A = animated[n]
        # 1. Predict: Verlet, the free velocity damped.  Relative drag damps only what the rig
        #    does not carry, so a rig at constant velocity carries the particle without lag.
        v = P - P_prev
        carried = np.zeros_like(v) if settings.world_drag else rig_tails[n] - rig_tails[n - 1]
        P_prev = P.copy()
        P = P + carried + keep * (v - carried) + g
        J = A.copy()
        targets = A.copy()  # per bone: where the animated chain puts it on its jiggled parent
        _constrain(A, P, J, targets, parents, levers, jiggle, world_len, spring, settings)
        _settle(A, P, J, targets, parents, levers, jiggle)
        out[n] = J
    return out


def skin(points: np.ndarray, weights: np.ndarray, bind: np.ndarray, bones: np.ndarray) -> np.ndarray:
    """Linear blend skinning: (F, k, 3) positions of ``points`` under ``bones``.

    points: (k, 3) rest positions, in the space ``bind`` maps bones' rest frames into.
    weights: (k, b), rows summing to 1 (Blender's Armature modifier normalises them).
    bind: (b, 4, 4) or (F, b, 4, 4) rest bone matrices in the same space as ``bones``.
    bones: (F, b, 4, 4) posed bone matrices.
    """
    S = bones @ np.linalg.inv(bind)  # (F, b, 4, 4) skinning matrices
    Xh = np.concatenate([points, np.ones((len(points), 1))], axis=1)  # (k, 4)
    out = np.empty((len(bones), len(points), 3))
    # One frame at a time keeps the (b, k, 3) per-bone images small; no loop over points.
    for f, Sf in enumerate(S):
        moved = np.einsum("bij,kj->bki", Sf[:, :3, :], Xh)  # every bone's map on every point
        out[f] = np.einsum("kb,bki->ki", weights, moved)
    return out


def normalised(weights: np.ndarray) -> np.ndarray:
    """Weights (k, b) with each non-empty row scaled to sum 1, as the Armature modifier blends them."""
    total = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
