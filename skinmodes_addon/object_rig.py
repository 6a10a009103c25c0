"""Objects without an armature: the object's own animation is the rig (issue 27).

A mesh with no Armature modifier is simulated as a character with one rigid
"bone": its world transform per frame (keyframed, constrained, parented:
whatever ``matrix_world`` evaluates to), every vertex weighted 1 to it.  That
bone is exactly the root column of ``character.py`` (the column of vertices
no bone moves, which follow the object), so sampling the rig, the bake, the
preview and both outputs are the characters' own, unchanged: the secondary
motion is the skinning eigenmodes' complement of the object's rigid motion,
the flesh lagging behind while the object's own motion stays as animated.

Where the rig acts in the modifier stack: above all of it (it moves the
object, not its vertices).  The simulated mesh is the mesh itself with its
shape keys; skinmodes' modifiers go first in the stack, so every modifier
(Subdivision, Mirror, Solidify, Geometry Nodes) acts on the jiggled mesh.
The point cache holds object-space positions, as a character's does, and the
object's transform moves them: played on the moving object, it is right.

The character's settings, with one bone:

- the leak field (Automatic mask): unchanged.  The constraint removes the
  object's own affine motion weighted by the leak field, which is 1 in the
  core and 0 at the skin, so the core follows the object and the skin lags:
  a cube spun at one turn a second jiggles by several percent of its size.
- Swing Appendages: there is no chain of bones to swing from; nothing to do.
- Rigid parts (a loose piece bound to one bone follows it): every piece of an
  object is bound to its one bone, so that rule would hold all of it still;
  it is off, every piece jiggles.
- Planted Feet: a lone bone's lowest point is "on the ground" at every
  frame, wherever it flies, so the characters' rule would plant the bottom of
  any moving object.  Here the ground is the lowest height the object reaches
  over the range, and only vertices that stay on it the *whole* range are held
  (:func:`resting_vertices`): a jelly sliding on a table keeps its base on the
  table; a thrown or bouncing object holds nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import bpy
import numpy as np

from .character import (
    RigBinding,
    armature_input,
    check_object,
    is_object_rig,
    matrix,
    painted_masks,
    planted_samples,
    read_character,
    triangles,
    vertex_positions,
)
from .core.errors import RigError, SkinmodesError
from .core.model.planted import HEIGHT, MAX_SHARE, body_diagonal, rig_positions
from .core.pipeline import CharacterInput, SubspaceSettings
from .props import SkinmodesSettings, settings

# Two samples of the rig differing by less than this (share of the largest entry, round-off) are one pose.
STILL_TOL = 1e-9
OUTPUT_PREFIX = "Skinmodes "  # the name of every modifier a preview or a bake adds


def read_rig(
    obj: bpy.types.Object, settings: SkinmodesSettings, scene: bpy.types.Scene, start_frame: int
) -> tuple[CharacterInput, RigBinding]:
    """The character or the object at rest as core input, and how to sample its rig (see ``read_character``)."""
    if check_object(obj) is None:
        return read_object(obj, settings, scene, start_frame)
    return read_character(obj, settings, scene, start_frame)


def read_object(
    obj: bpy.types.Object, settings: SkinmodesSettings, scene: bpy.types.Scene, start_frame: int
) -> tuple[CharacterInput, RigBinding]:
    """A mesh without an armature at rest, one bone weighted 1 everywhere, and its binding.

    The rest mesh is the object's own mesh with its shape keys at the current
    frame (every modifier muted); the caller sets the frame to ``start_frame``,
    which fixes the rest frame through the object's world matrix there (G =
    unit * L0, as for a character: the tet mesh has the object's physical size).
    """
    if check_object(obj) is not None:
        raise RigError(f"'{obj.name}' has an Armature modifier; read it as a character (character.read_character)")
    with armature_input(obj) as obj_in:  # for an object rig: every modifier muted
        L0 = matrix(obj_in.matrix_world)[:3, :3]
        mesh_in = cast(bpy.types.Mesh, obj_in.data)
        local = vertex_positions(mesh_in).astype(np.float64)
        faces = triangles(mesh_in)
        stiffness, density, leak = painted_masks(obj, obj_in, settings)
    unit = float(scene.unit_settings.scale_length) or 1.0
    G = np.eye(4)
    G[:3, :3] = unit * L0
    inp = CharacterInput(
        rest=local @ G[:3, :3].T,
        faces=faces,
        bone_weights=np.ones((len(local), 1)),
        stiffness=stiffness,
        density=density,
        leak=leak,
    )
    binding = RigBinding(armature="", bones=(), root=True, rest_map=G, unit=unit)
    if settings.planted_feet:
        inp = replace(
            inp, planted=resting_vertices(inp.rest, planted_samples(obj, binding, scene, settings, start_frame))
        )
    return inp, binding


def resting_vertices(rest: np.ndarray, params: np.ndarray, height: float = HEIGHT) -> np.ndarray:
    """(k,) bool: vertices that stay on the ground, the lowest height the object reaches, at every frame.

    rest: (k, 3) rest positions; params: (f, 12) the object's rig parameters at
    sampled frames.  On the ground: within ``height`` times the body diagonal
    of the lowest point of all frames (+Z up).  Nothing when that is more than
    MAX_SHARE of the vertices (an object lying on its side is not standing on a base).
    """
    pos = rig_positions(rest, np.ones((len(rest), 1)), params)
    z = pos[..., 2]
    on = np.asarray((z - z.min() <= height * body_diagonal(pos[0])).all(axis=0), dtype=bool)
    if on.mean() > MAX_SHARE:
        return np.zeros(len(on), dtype=bool)
    return on


def object_subspace(subspace: SubspaceSettings) -> SubspaceSettings:
    """The subspace settings for an object rig: no rigid parts (every piece is bound to the one bone)."""
    return replace(subspace, rigid_pieces="none")


def still_note(name: str, binding: RigBinding, rig: dict[int, np.ndarray], start: int, end: int) -> str:
    """One line when an object rig does not move over frames start..end (nothing makes it jiggle), else "".

    rig: the sampled parameters (12,) per frame.  A character's rig is not judged here.
    """
    if binding.armature or not rig:
        return ""
    samples = [rig[f] for f in range(start, end + 1) if f in rig]
    if not samples:
        return ""
    P = np.asarray(samples)
    scale = max(float(np.abs(P).max()), 1.0)
    if np.abs(P - P[0]).max() > STILL_TOL * scale:
        return ""
    return (
        f"'{name}' does not move over frames {start}-{end}, so it has no secondary motion (the bake is its rest "
        "shape); animate its location or rotation, or parent it to something that moves"
    )


def set_up_for_secondary_motion(obj: bpy.types.Object) -> bool:
    """An object without an armature that someone set up to jiggle: one of its Skinmodes settings was set (in
    the panel, the API or a script), or it carries Skinmodes' Preview or Cache modifier.  The farm bakes these
    beside the skinned meshes when no object is named; a plain prop (a floor, a wall) is none of them."""
    if not is_object_rig(obj) or obj.library is not None:
        return False
    # "Skinmodes Cache" and "Skinmodes Preview" (session/muting.py, which imports this module's importers).
    if any(m.name.startswith(OUTPUT_PREFIX) for m in obj.modifiers):
        return True
    s = settings(obj)
    return any(s.is_property_set(p.identifier) for p in s.bl_rna.properties if p.identifier != "rna_type")


def check_subspace_method(obj: bpy.types.Object, s: SkinmodesSettings) -> None:
    """Refuse, in one line, what cannot act on this mesh: Physics Skin on an object without an armature (a
    skin slid over bones, and it has none: it would silently do nothing), and Subspace Rotation-Strain on
    a character (its bones need skinning eigenmodes) or with training poses (poses of bones).  Both the
    bake and the preview read their request through here."""
    if is_object_rig(obj) and s.physics_skin:
        raise SkinmodesError(
            f"Physics Skin slides skin over bones and '{obj.name}' has none (no Armature modifier), so it would "
            f"do nothing; turn Physics Skin off: the object's own transform moves it and the flesh still jiggles"
        )
    if s.subspace_method != "ROTATION_STRAIN":
        return
    fix = "or set Subspace to Skinning Eigenmodes"
    if not is_object_rig(obj):
        raise SkinmodesError(
            f"Subspace Rotation-Strain is for objects without an armature and '{obj.name}' has an Armature "
            f"modifier; remove it to move '{obj.name}' by its own transform, {fix}"
        )
    if len(s.poses):
        raise SkinmodesError(
            f"training poses shape skinning eigenmodes, not rotation-strain coordinates; remove the poses of "
            f"'{obj.name}' in the Pose-Space panel, {fix}"
        )
