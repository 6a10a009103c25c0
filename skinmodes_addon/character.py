"""Reading a rigged character out of Blender, and sampling its rig per frame.

Coordinates.  Dynamics run in world space, in metres (object motion leaks
momentum too).  The simulation rest shape is the mesh's rest coordinates
mapped by ``G = unit * L0``, where L0 is the linear part of the mesh object's
world matrix at the first simulated frame and ``unit`` the scene's unit
scale, so the tet mesh has its physical size whatever the object scale.
Each deforming bone b contributes the world transform

    T_b(f) = unit * W_arm(f) B_b(f) W_arm(f)^-1 W_mesh(f) * G^-1,
    B_b = pose_bone.matrix @ bone.matrix_local^-1           (armature space)

which is exactly what the Armature modifier applies to object-space rest
coordinates (vertices with no bone weight follow the object: a "root"
column with T = unit * W_mesh(f) G^-1).  Offsets come back to object space
through ``(unit * L(f))^-1``.

Modifier stacks.  The simulated mesh is the mesh as the Armature modifier
receives it: the modifiers before it (Mirror, a Solidify, shape keys) are
applied, the Armature modifier and everything after it are muted
(:func:`armature_input`).  What the bake stores is that mesh as the Armature
modifier outputs it (:func:`armature_output`) plus the secondary offsets;
skinmodes' own modifiers sit right after the Armature modifier, so the
modifiers after it (Subdivision, Decimate, Solidify, Geometry Nodes) act on
the jiggled mesh, as they act on the rig's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import cast

import bpy
import numpy as np
from scipy.spatial import cKDTree

from .core.errors import MeshError, RigError, SkinmodesError
from .core.geometry.winding import winding_numbers
from .core.model.planted import planted_vertices
from .core.model.rig import MIN_WEIGHT_SUM
from .core.pipeline import CharacterInput
from .props import SkinmodesSettings


def armature_modifier(obj: bpy.types.Object) -> bpy.types.ArmatureModifier | None:
    """The first enabled Armature modifier that has an armature object."""
    if obj is None or obj.type != "MESH":
        return None
    for mod in obj.modifiers:
        if mod.type == "ARMATURE":
            arm = cast(bpy.types.ArmatureModifier, mod)
            if arm.object is not None and arm.object.type == "ARMATURE":
                return arm
    return None


def is_object_rig(obj: bpy.types.Object | None) -> bool:
    """A mesh with no Armature modifier at all: its own animation is its rig (``object_rig.py``)."""
    return obj is not None and obj.type == "MESH" and not any(m.type == "ARMATURE" for m in obj.modifiers)


def check_object(obj: bpy.types.Object | None) -> bpy.types.ArmatureModifier | None:
    """Raise a one-line SkinmodesError unless ``obj`` is a mesh we can simulate.

    Returns its Armature modifier, or None for a mesh without one (its own
    transform is the rig: :func:`is_object_rig`).  An Armature modifier
    without an armature is refused: it is a rig left unfinished, not an object
    meant to move by itself.
    """
    if obj is None:
        raise SkinmodesError("no active object; select the character's mesh")
    if obj.type != "MESH":
        kind = obj.type.lower().replace("_", " ")
        article = "an" if kind[:1] in "aeiou" else "a"
        raise SkinmodesError(f"'{obj.name}' is {article} {kind}, not a mesh; select the character's mesh")
    if obj.library is not None:
        raise SkinmodesError(
            f"'{obj.name}' is linked from {bpy.path.basename(obj.library.filepath)}, so a bake would be lost on save; "
            "make a library override (Object > Library Override > Make) and bake that"
        )
    if len(obj.data.vertices) == 0 or len(obj.data.polygons) == 0:
        raise SkinmodesError(f"'{obj.name}' has no faces; secondary motion needs a surface")
    mod = armature_modifier(obj)
    if mod is None:
        if is_object_rig(obj):
            return None
        empty = next(m for m in obj.modifiers if m.type == "ARMATURE")
        raise RigError(
            f"the Armature modifier '{empty.name}' of '{obj.name}' has no armature; pick the armature in it, "
            f"or remove the modifier to jiggle '{obj.name}' from its own motion"
        )
    if not mod.use_vertex_groups:
        raise RigError(
            f"the Armature modifier of '{obj.name}' does not use vertex groups; enable Bind To > Vertex Groups"
        )
    deform = [b.name for b in mod.object.data.bones if b.use_deform]
    if not deform:
        raise RigError(
            f"armature '{mod.object.name}' has no deforming bones; enable Deform on the bones that move the mesh"
        )
    if not any(obj.vertex_groups.get(name) is not None for name in deform) and not from_bones_only(obj):
        raise RigError(
            f"'{obj.name}' has no vertex groups named after deforming bones of '{mod.object.name}'; "
            "paint weights or parent with automatic weights"
        )
    return mod


def from_bones_only(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` bakes Physics Skin From Bones Only, which needs no weights (issue 30)."""
    s = getattr(obj, "skinmodes", None)
    return s is not None and bool(s.physics_skin) and s.physics_skin_from == "BONES"


def modifiers_before(obj: bpy.types.Object, mod: bpy.types.Modifier | None) -> list[bpy.types.Modifier]:
    """The modifiers above ``mod`` in the stack of ``obj`` (they act first), in order.

    ``mod`` None stands for an object rig's rig, which acts first (above the whole stack): none.
    """
    mods = list(obj.modifiers)
    return [] if mod is None else mods[: mods.index(mod)]


def modifiers_after(obj: bpy.types.Object, mod: bpy.types.Modifier | None) -> list[bpy.types.Modifier]:
    """The modifiers below ``mod`` in the stack of ``obj`` (they act on its result), in order (None: all)."""
    mods = list(obj.modifiers)
    return mods if mod is None else mods[mods.index(mod) + 1 :]


@contextmanager
def muted(mods: Sequence[bpy.types.Modifier]) -> Iterator[None]:
    """Hide ``mods`` in the viewport (what the depsgraph evaluates) while inside; put back exactly after."""
    saved = [(m, m.show_viewport) for m in mods]
    for m, shown in saved:
        if shown:
            m.show_viewport = False
    try:
        yield
    finally:
        for m, shown in reversed(saved):
            if m.show_viewport != shown:
                m.show_viewport = shown


@contextmanager
def armature_input(obj: bpy.types.Object) -> Iterator[bpy.types.Object]:
    """The evaluated object whose mesh is what its Armature modifier receives (the current frame).

    The Armature modifier and everything after it are muted while inside;
    the modifiers before it and the shape keys act.  An object rig's rig acts
    above the whole stack: every modifier is muted, only the shape keys act.
    The yielded object is only valid inside.
    """
    mod = check_object(obj)
    with muted(modifiers_after(obj, mod) if mod is None else [mod, *modifiers_after(obj, mod)]):
        yield obj.evaluated_get(bpy.context.evaluated_depsgraph_get())


@contextmanager
def armature_output(obj: bpy.types.Object) -> Iterator[None]:
    """While inside, the evaluated mesh of ``obj`` is its Armature modifier's output (the modifiers after it muted)."""
    mod = check_object(obj)
    with muted(modifiers_after(obj, mod)):
        yield


def place_after_armature(obj: bpy.types.Object, mod: bpy.types.Modifier) -> int:
    """Move ``mod`` (one of skinmodes' own) right below the Armature modifier; returns its index before.

    There it receives the Armature modifier's output, and the modifiers that
    follow act on the jiggled mesh.  An object rig's rig acts above the whole
    stack, so there ``mod`` goes first.  Unpinned first: a modifier pinned last
    cannot move.
    """
    if getattr(mod, "use_pin_to_last", False):
        mod.use_pin_to_last = False
    index = obj.modifiers.find(mod.name)
    rig = check_object(obj)
    arm = -1 if rig is None else obj.modifiers.find(rig.name)
    target = arm if index < arm else arm + 1
    if index != target:
        obj.modifiers.move(index, target)
    return index


# Modifier types that move or re-weight vertices but keep each one what it is (Blender's deform-only
# modifiers, and those that edit normals, UVs, weights or simulate in place).  Any other type above
# the Armature modifier (Mirror, Subdivision, Decimate, Geometry Nodes...) may add, remove or renumber
# vertices, even when the count happens to match (a Mirror that bisects a symmetric mesh).
KEEPS_VERTICES = frozenset(
    {
        "ARMATURE",
        "CAST",
        "CLOTH",
        "COLLISION",
        "CORRECTIVE_SMOOTH",
        "CURVE",
        "DATA_TRANSFER",
        "DISPLACE",
        "DYNAMIC_PAINT",
        "HOOK",
        "LAPLACIANDEFORM",
        "LAPLACIANSMOOTH",
        "LATTICE",
        "MESH_CACHE",
        "MESH_DEFORM",
        "NORMAL_EDIT",
        "PARTICLE_SYSTEM",
        "SHRINKWRAP",
        "SIMPLE_DEFORM",
        "SMOOTH",
        "SOFT_BODY",
        "SURFACE",
        "SURFACE_DEFORM",
        "UV_PROJECT",
        "UV_WARP",
        "VERTEX_WEIGHT_EDIT",
        "VERTEX_WEIGHT_MIX",
        "VERTEX_WEIGHT_PROXIMITY",
        "WARP",
        "WAVE",
        "WEIGHTED_NORMAL",
    }
)


def renumbering_modifiers(obj: bpy.types.Object) -> list[bpy.types.Modifier]:
    """The enabled modifiers above the Armature modifier that may not keep the mesh's own vertices.

    Empty when the Armature modifier deforms the mesh's own vertices, one
    for one: then shape keys, vertex groups and mesh attributes can hold a
    value per simulated vertex.
    """
    mod = armature_modifier(obj)  # not check_object: the preview asks on every frame
    if mod is None:
        return []
    return [m for m in modifiers_before(obj, mod) if m.show_viewport and m.type not in KEEPS_VERTICES]


# Modifier properties that never change the mesh a modifier makes (names, panel state, timings, ids).
NOT_SHAPING = frozenset(
    {
        "rna_type",
        "name",
        "show_expanded",
        "is_active",
        "is_override_data",
        "execution_time",
        "persistent_uid",
        "show_render",
        "show_in_editmode",
        "show_on_cage",
        "use_apply_on_spline",
        "use_pin_to_last",
    }
)


def stack_signature(obj: bpy.types.Object) -> tuple[object, ...]:
    """Every setting of the modifiers above the Armature modifier: they shape the simulated mesh."""
    mod = armature_modifier(obj)
    if mod is None:
        return ()
    out: list[object] = []
    for index, m in enumerate(modifiers_before(obj, mod)):
        out.append((index, m.type))
        for prop in m.bl_rna.properties:
            if prop.type == "COLLECTION" or prop.identifier in NOT_SHAPING:
                continue
            value = getattr(m, prop.identifier)
            if prop.type == "POINTER":
                value = getattr(value, "name_full", None)
            elif hasattr(value, "__len__") and not isinstance(value, str):
                value = tuple(value)
            out.append((index, prop.identifier, value))
    return tuple(out)


def check_stable_topology(obj: bpy.types.Object, scene: bpy.types.Scene, frames: Sequence[int]) -> None:
    """Refuse, in one line, a stack whose modifiers before the Armature modifier change the mesh between frames.

    The simulation has one rest mesh; a vertex count that changes with time
    (an animated Remesh, Decimate or Geometry Nodes) cannot follow it.  Sets
    the scene to each of ``frames``: the caller restores its frame.  Costs
    nothing when nothing comes before the Armature modifier.
    """
    mod = check_object(obj)
    before = [m for m in modifiers_before(obj, mod) if m.show_viewport]
    if not before:
        return
    seen: dict[tuple[int, int], int] = {}
    for f in dict.fromkeys(frames):
        scene.frame_set(f)
        with armature_input(obj) as obj_in:
            seen.setdefault((len(obj_in.data.vertices), len(obj_in.data.polygons)), f)
        if len(seen) > 1:
            (a, fa), (b, fb) = list(seen.items())[:2]
            names = ", ".join(f"'{m.name}'" for m in before)
            raise MeshError(
                f"the modifiers above the Armature modifier of '{obj.name}' ({names}) change its mesh between frames "
                f"({a[0]} vertices at frame {fa}, {b[0]} at frame {fb}); apply them, or move them below the Armature "
                "modifier"
            )


def different_topology_error(obj: bpy.types.Object, frame: int, count: int, expected: int) -> MeshError:
    """The one line for a frame whose Armature modifier output lost or gained vertices since the rest frame."""
    mod = armature_modifier(obj)
    before = modifiers_before(obj, mod) if mod is not None else []
    names = ", ".join(f"'{m.name}'" for m in before if m.show_viewport)
    return MeshError(
        f"frame {frame}: the mesh the Armature modifier of '{obj.name}' deforms has {count} vertices, {expected} at "
        f"the start; the modifiers above it ({names or 'none'}) change it over time: apply them, or move them below "
        "the Armature modifier"
    )


@dataclass(frozen=True)
class RigBinding:
    """Which bones drive the simulation, in weight-column order, and the rest-frame map G (4 x 4).

    An object rig (``object_rig.py``) has no armature ("") and no bones: its root column alone.
    """

    armature: str
    bones: tuple[str, ...]
    root: bool
    rest_map: np.ndarray
    unit: float
    # A whole character (issue 38): the meshes simulated as one body, by name in body order; the one whose
    # world matrix is the rest frame (the first); and this object's vertices in the body, [start, stop).
    # A mesh alone: (), "" (itself) and None (all of them).
    members: tuple[str, ...] = ()
    frame_object: str = ""
    span: tuple[int, int] | None = None

    def own(self, values: np.ndarray) -> np.ndarray:
        """This object's rows (k, ...) of the body's per-vertex rows (n, ...)."""
        return values if self.span is None else values[self.span[0] : self.span[1]]


def column_names(binding: RigBinding, object_name: str) -> list[str]:
    """What drives each weight column, as the rig's warnings name it: "bone 'Hip' of the rig", and for the
    column of unbound vertices (or an object rig's only one) "the object 'Body' or a parent of it"."""
    names = [f"bone '{b}' of the rig" for b in binding.bones]
    return [*names, f"the object '{object_name}' or a parent of it"] if binding.root else names


def vertex_group_weights(obj: bpy.types.Object, names: list[str]) -> np.ndarray:
    """(k, len(names)) weights of the named vertex groups (0 where a vertex is not in a group).

    ``obj`` may be an evaluated object (its mesh then is the evaluated one).
    Blender exposes vertex-group membership only per vertex, so this walks
    the vertices once, at load time; nothing per frame depends on it.
    """
    mesh = obj.data
    out = np.zeros((len(mesh.vertices), len(names)))
    column = {obj.vertex_groups[n].index: c for c, n in enumerate(names) if obj.vertex_groups.get(n) is not None}
    if not column:
        return out
    rows, cols, vals = [], [], []
    for v in mesh.vertices:
        for g in v.groups:
            c = column.get(g.group)
            if c is not None:
                rows.append(v.index)
                cols.append(c)
                vals.append(g.weight)
    out[np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)] = np.array(vals)
    return out


def vertex_positions(mesh: bpy.types.Mesh, out: np.ndarray | None = None) -> np.ndarray:
    """Vertex positions (k, 3) float32, as Blender stores them.

    Read through the "position" attribute: for a float32 buffer that is one
    memory copy (about 5 us for 10k vertices), where ``vertices.foreach_get("co")``
    goes element by element.
    """
    k = len(mesh.vertices)
    if out is None or out.size != 3 * k or out.dtype != np.float32:
        out = np.empty(3 * k, dtype=np.float32)
    flat = out.reshape(-1)
    attr = mesh.attributes.get("position")
    if attr is not None and attr.data_type == "FLOAT_VECTOR" and attr.domain == "POINT" and len(attr.data) == k:
        attr.data.foreach_get("vector", flat)
    else:
        mesh.vertices.foreach_get("co", flat)
    return out.reshape(-1, 3)


def triangles(mesh: bpy.types.Mesh) -> np.ndarray:
    """The mesh's faces as triangles (f, 3), int64 vertex indices."""
    mesh.calc_loop_triangles()
    tri = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tri)
    return tri.reshape(-1, 3).astype(np.int64)


def matrix(m: object) -> np.ndarray:
    return np.array(m, dtype=np.float64)


# Vertex indices a message names at most.
NAMED_VERTICES = 5


def nan_weights_error(obj: bpy.types.Object, group: str, role: str = "", others: int = 0) -> RigError:
    """One line naming the vertex group that holds NaN weights, on which vertices, and the fix that works.

    The vertices are those of the object's own mesh (what the user edits):
    Weights > Clean keeps NaN (it removes weights *below* a limit, and NaN is
    below nothing); removing the vertices from the group does remove them.
    others: how many more groups hold NaN (each is named once this one is fixed).
    """
    w = vertex_group_weights(obj, [group])[:, 0]
    bad = np.flatnonzero(~np.isfinite(w))
    where = f"{len(bad)} vertices" if len(bad) != 1 else "1 vertex"
    if len(bad):
        shown = ", ".join(str(int(i)) for i in bad[:NAMED_VERTICES])
        where += f" (index {shown}{', ...' if len(bad) > NAMED_VERTICES else ''})"
    what = f"vertex group '{group}'" + (f" ({role})" if role else "")
    more = f" (and {others} more group{'s' if others > 1 else ''})" if others else ""
    return RigError(
        f"{what} of '{obj.name}' holds NaN weights on {where}{more}; in Edit Mode select them, make '{group}' "
        "the active group and click Remove in Object Data > Vertex Groups, then paint them again"
    )


def flat_mesh_error(name: str, exc: MeshError, object_rig: bool = False) -> MeshError:
    """The core's "the mesh is flat" with advice that works in Blender, else ``exc`` itself.

    The core knows what flat is; only the add-on knows that the simulated
    mesh is the one the Armature modifier receives, so thickness must come
    from above it: a Solidify modifier below the Armature modifier does not count.
    An object rig simulates the mesh itself (its rig acts above the whole
    stack), so there a Solidify modifier must be applied.
    """
    if "flat" not in str(exc):
        return exc
    if object_rig:
        return MeshError(
            f"'{name}' is flat (a plane or card) and secondary motion needs a volume; apply a Solidify modifier "
            "to it (Ctrl+A over the modifier), or simulate a closed mesh"
        )
    return MeshError(
        f"'{name}' is flat where its Armature modifier receives it (a plane or card); add a Solidify modifier "
        "above the Armature modifier (move it up the stack), or simulate a closed mesh"
    )


# Meshes whose surfaces come within this share of their joint bounding box's diagonal of each other are one
# body, and so is a mesh inside another (eyes, teeth, a tongue in a head); farther ones (a robot's two hands,
# each skinned on its own) each stay a body of their own, as they would alone: in one volume the mesher would
# drop the farther one as a part far from the body.
NEAR_MEMBERS = 0.02
# A mesh is inside another when one of this many of its vertices (evenly spread over its index) is.
INSIDE_SAMPLES = 16


def character_members(obj: bpy.types.Object, settings_on: bool = True) -> list[bpy.types.Object]:
    """The meshes simulated with ``obj`` as one body, ``obj`` included, sorted by name (issue 38).

    They are the scene's meshes whose Armature modifier uses ``obj``'s armature and whose Whole Character
    setting is on, as is ``obj``'s (``settings_on``), that reach ``obj`` through meshes at most
    NEAR_MEMBERS apart; otherwise ``obj`` alone.  Sorted by name, so every member reads the same body in
    the same order, whichever of them is baked.
    """
    found = character_candidates(obj, settings_on)
    if len(found) == 1:
        return found
    return [found[i] for i in np.flatnonzero(_near_group(found, found.index(obj)))]


def character_candidates(obj: bpy.types.Object, settings_on: bool = True) -> list[bpy.types.Object]:
    """:func:`character_members` before the touch-or-nest test (cheap: no geometry is read), by name."""
    mod = armature_modifier(obj)
    if mod is None or not settings_on:
        return [obj]
    arm = cast(bpy.types.Object, mod.object)  # armature_modifier returns only modifiers with an armature
    scene_objects = bpy.context.scene.objects if bpy.context.scene is not None else [obj]
    return sorted(
        (o for o in scene_objects if o.type == "MESH" and (o == obj or _joins(o, arm))),  # a few hundred at most
        key=lambda o: o.name,
    )


def _near_group(meshes: list[bpy.types.Object], start: int) -> np.ndarray:
    """(len(meshes),) bool: the meshes linked to meshes[start] through pairs that touch (surfaces at most
    NEAR_MEMBERS apart) or nest (one inside the other), their rest coordinates placed by their world
    matrices now."""
    points, faces = [], []
    for o in meshes:  # meshes, not vertices
        mesh = cast(bpy.types.Mesh, o.data)
        co = vertex_positions(mesh).astype(np.float64)
        M = matrix(o.matrix_world)
        points.append(co @ M[:3, :3].T + M[:3, 3])
        faces.append(triangles(mesh))
    every = np.vstack(points)
    reach = NEAR_MEMBERS * float(np.linalg.norm(every.max(axis=0) - every.min(axis=0)))
    trees = [cKDTree(p) for p in points]

    def inside(a: int, b: int) -> bool:
        """Whether a sample of mesh b's vertices lies inside mesh a (winding number over one half)."""
        sample = points[b][np.unique(np.linspace(0, len(points[b]) - 1, INSIDE_SAMPLES).astype(np.int64))]
        return bool((np.abs(winding_numbers(points[a], faces[a], sample)) > 0.5).any())

    near = np.eye(len(meshes), dtype=bool)
    for a in range(len(meshes)):
        for b in range(a + 1, len(meshes)):
            d, _ = trees[a].query(points[b], distance_upper_bound=reach)
            near[a, b] = near[b, a] = bool(np.isfinite(d).any()) or inside(a, b) or inside(b, a)
    reached = np.zeros(len(meshes), dtype=bool)
    reached[start] = True
    for _ in range(len(meshes)):  # grow through near pairs until nothing joins
        grown = np.asarray(near[reached].any(axis=0))
        if np.array_equal(grown, reached):
            break
        reached = grown
    return reached


def rig_notes(obj: bpy.types.Object, binding: RigBinding) -> list[str]:
    """One line each for what the simulation of ``obj`` reads differently from its stack (issue 38):
    the body it is simulated as, Preserve Volume, Armature modifiers after the first."""
    notes = []
    if binding.members:
        others = ", ".join(f"'{n}'" for n in binding.members if n != obj.name)
        notes.append(f"simulated with {others} as one body (Whole Character)")
    for name in binding.members or (obj.name,):
        mesh = bpy.data.objects.get(name)
        if mesh is None:
            continue
        mods = [m for m in mesh.modifiers if m.type == "ARMATURE" and m.show_viewport]
        if not mods:
            continue
        if cast(bpy.types.ArmatureModifier, mods[0]).use_deform_preserve_volume:
            notes.append(
                f"the Armature modifier of '{name}' preserves volume (dual quaternions); the jiggle is simulated "
                "for linear blending and added to it, so a twisted joint may swell a little: turn Preserve "
                "Volume off for an exact match"
            )
        if len(mods) > 1:
            notes.append(
                f"'{name}' has {len(mods)} Armature modifiers; only the first, '{mods[0].name}', drives the "
                "jiggle (the others still deform it on playback)"
            )
    return notes


def character_meshes(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """Every mesh of the scene deformed by ``obj`` (an armature) or by ``obj``'s armature (a mesh), by name:
    what Bake Character bakes; a mesh without an armature is its own character."""
    if obj.type == "ARMATURE":
        arm = obj
    else:
        mod = armature_modifier(obj)
        if mod is None:
            return [obj]
        arm = cast(bpy.types.Object, mod.object)  # armature_modifier returns only modifiers with an armature
    found = armature_meshes(arm)
    if not found:
        raise SkinmodesError(f"armature '{arm.name}' deforms no mesh of this scene; add an Armature modifier to one")
    return found


def armature_meshes(arm: bpy.types.Object) -> list[bpy.types.Object]:
    """The scene's meshes ``arm`` deforms, by name (objects, not vertices: a panel's draw can afford it)."""
    return sorted(
        (o for o in bpy.context.scene.objects if (m := armature_modifier(o)) is not None and m.object == arm),
        key=lambda o: o.name,
    )


def _joins(o: bpy.types.Object, arm: bpy.types.Object) -> bool:
    """Whether mesh ``o`` joins the body of armature ``arm``: deformed by it, with faces, Whole Character on."""
    mod = armature_modifier(o)
    s = getattr(o, "skinmodes", None)
    return (
        mod is not None
        and mod.object == arm
        and mod.use_vertex_groups
        and len(o.data.polygons) > 0
        and (s is None or bool(s.whole_character))
    )


@dataclass(frozen=True)
class _Part:
    """One mesh of the body, read at the rest frame: object-space positions (k, 3), triangles, weights
    (k, b) of the body's bones, its painted masks and its world matrix (4, 4)."""

    name: str
    local: np.ndarray
    faces: np.ndarray
    weights: np.ndarray
    masks: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]
    rigid: np.ndarray | None
    world: np.ndarray


def _read_part(obj: bpy.types.Object, bones: list[str], settings: SkinmodesSettings, baked: str) -> _Part:
    """One mesh as its Armature modifier receives it (the current frame), weights of ``bones``, masks of the
    settings of ``baked`` (the mesh being simulated: its body's other meshes read its masks' groups too)."""
    try:
        return _read_mesh(obj, bones, settings)
    except SkinmodesError as exc:
        if obj.name == baked:
            raise
        raise type(exc)(
            f"{exc}; '{obj.name}' is simulated with '{baked}' as one body (Whole Character): give it the group "
            "too, or turn Whole Character off on it"
        ) from exc


def _read_mesh(obj: bpy.types.Object, bones: list[str], settings: SkinmodesSettings) -> _Part:
    with armature_input(obj) as obj_in:
        W = vertex_group_weights(obj_in, bones)
        bad = np.flatnonzero(~np.isfinite(W).all(axis=0))
        if len(bad):  # before the zero check: NaN sums are not above zero either
            raise nan_weights_error(obj, bones[int(bad[0])], others=len(bad) - 1)
        mesh_in = cast(bpy.types.Mesh, obj_in.data)
        return _Part(
            name=obj.name,
            local=vertex_positions(mesh_in).astype(np.float64),
            faces=triangles(mesh_in),
            weights=W,
            masks=painted_masks(obj, obj_in, settings),
            rigid=rigid_group(obj, obj_in, settings),
            world=matrix(obj_in.matrix_world),
        )


def _joined(parts: list[np.ndarray | None]) -> np.ndarray | None:
    """A painted mask over the whole body: every member's, or None when it is not set.  The members read the
    baked mesh's settings, so a mask is set for all of them or for none (a member without the group is
    refused as it is read, :func:`_read_part`)."""
    if all(p is None for p in parts):
        return None
    return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts if p is not None])


def read_character(
    obj: bpy.types.Object, settings: SkinmodesSettings, scene: bpy.types.Scene, start_frame: int
) -> tuple[CharacterInput, RigBinding]:
    """The character at rest as core input, plus how to sample its rig.

    The rest mesh is the mesh as the Armature modifier receives it at the
    current frame (see the module notes); the caller sets the frame to
    ``start_frame``, which also fixes the simulation's rest frame through the
    mesh's world matrix there.  With Whole Character on, every mesh of the
    armature that has it on too is read into one body (:func:`character_members`), in the rest frame of
    the first of them; the binding says which rows are ``obj``'s.
    """
    mod = check_object(obj)
    if mod is None:  # the callers dispatch (object_rig.read_rig); a mesh without an armature reads there
        raise RigError(f"'{obj.name}' has no Armature modifier; read it as an object rig (object_rig.read_object)")
    arm = mod.object
    members = character_members(obj, bool(settings.whole_character))
    deform = [b for b in arm.data.bones if b.use_deform]
    bones = [b.name for b in deform if any(m.vertex_groups.get(b.name) is not None for m in members)]
    if not bones and settings.physics_skin and settings.physics_skin_from == "BONES":
        bones = [b.name for b in deform]  # no groups: every weight zero, skinned from bones
    parts = [_read_part(m, bones, settings, obj.name) for m in members]
    W = np.vstack([p.weights for p in parts])
    total = W.sum(axis=1)
    from_bones = settings.physics_skin and settings.physics_skin_from == "BONES"  # needs no weights
    if not (total > MIN_WEIGHT_SUM).any() and not from_bones:
        raise RigError(f"all bone weights of '{obj.name}' are zero; paint weights or parent with automatic weights")
    unbound = total <= MIN_WEIGHT_SUM  # the vertices Blender's Armature modifier leaves where they are
    root = bool(unbound.any())
    if root:
        W = np.hstack([W, unbound[:, None].astype(np.float64)])
    unit = float(scene.unit_settings.scale_length) or 1.0
    lead = parts[0]
    G = np.eye(4)
    G[:3, :3] = unit * lead.world[:3, :3]
    # Each member's rest coordinates in the lead's rest frame: G W_lead^-1 W_member (the lead's own is G).
    maps = [G @ np.linalg.inv(lead.world) @ p.world if i else G for i, p in enumerate(parts)]
    rest = np.vstack([p.local @ M[:3, :3].T + M[:3, 3] for p, M in zip(parts, maps, strict=True)])
    counts = [len(p.local) for p in parts]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    faces = np.vstack([p.faces + int(o) for p, o in zip(parts, offsets, strict=False)])
    names = [p.name for p in parts]
    stiffness, density, leak = (_joined([p.masks[i] for p in parts]) for i in range(3))
    rigid = _joined([p.rigid for p in parts])
    heads, tails = bone_segments(members[0], cast(bpy.types.Object, arm), bones, G)
    if root:  # the column of unbound vertices has no bone
        heads, tails = (np.vstack([h, np.full((1, 3), np.nan)]) for h in (heads, tails))
    inp = CharacterInput(
        rest=rest,
        faces=faces,
        bone_weights=W,
        stiffness=stiffness,
        density=density,
        leak=leak,
        bone_heads=heads,
        bone_tails=tails,
        bone_parents=bone_parents(cast(bpy.types.Object, arm), bones, root),
        rigid=rigid,
    )
    i = names.index(obj.name)
    whole = len(parts) > 1
    binding = RigBinding(
        armature=arm.name,
        bones=tuple(bones),
        root=root,
        rest_map=G,
        unit=unit,
        members=tuple(names) if whole else (),
        frame_object=names[0] if whole else "",
        span=(int(offsets[i]), int(offsets[i + 1])) if whole else None,
    )
    if settings.planted_feet:
        params = planted_samples(obj, binding, scene, settings, start_frame)
        # The floor is the Ground setting's height (world Z, scene units), also when Ground contact is off.
        floor = unit * float(settings.ground_height)
        inp = replace(inp, planted=planted_vertices(inp.rest, inp.bone_weights, params, floor=floor))
    return inp, binding


def planted_samples(
    obj: bpy.types.Object, binding: RigBinding, scene: bpy.types.Scene, settings: SkinmodesSettings, rest_frame: int
) -> np.ndarray:
    """(f, 12 b) the rig over the settings' frame range, sampled to find what the animation plants on the
    ground (:func:`rig_samples`): one read for a character's and an object rig's Planted Feet."""
    return rig_samples(obj, binding, scene, settings.frame_range(scene), rest_frame)


def painted_masks(
    obj: bpy.types.Object, obj_in: bpy.types.Object, s: SkinmodesSettings
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(stiffness, density, leak) masks (k,) of the settings' vertex groups, None where unset.

    obj_in: the evaluated object whose vertices are simulated (inside :func:`armature_input`).
    A group that is gone or holds NaN is refused in one line.
    """

    def group(name: str, role: str) -> np.ndarray | None:
        if not name:
            return None
        if obj.vertex_groups.get(name) is None:
            raise SkinmodesError(f"vertex group '{name}' not found on '{obj.name}'; pick an existing group or clear it")
        values = vertex_group_weights(obj_in, [name])[:, 0]
        if not np.isfinite(values).all():
            raise nan_weights_error(obj, name, role)
        return values

    return (
        group(s.stiffness_group, "the Stiffness Mask"),
        group(s.density_group, "the Density Mask"),
        group(s.leak_group, "the Leak Group") if s.leak_mode == "GROUP" else None,
    )


def rigid_group(obj: bpy.types.Object, obj_in: bpy.types.Object, s: SkinmodesSettings) -> np.ndarray | None:
    """(k,) the Rigid Group's weights when Rigid Pieces is Vertex Group, else None.

    A missing group is refused in one line that says how to make one (the panel's piece list does it).
    """
    if s.rigid_pieces != "GROUP":
        return None
    if obj.vertex_groups.get(s.rigid_group) is None:
        raise SkinmodesError(
            f"vertex group '{s.rigid_group}' (the Rigid Group) not found on '{obj.name}'; click a piece's lock in "
            "the Subspace panel's Rigid Pieces list, or set Rigid Pieces to Automatic"
        )
    values = vertex_group_weights(obj_in, [s.rigid_group])[:, 0]
    if not np.isfinite(values).all():
        raise nan_weights_error(obj, s.rigid_group, "the Rigid Group")
    return values


def bone_parents(arm: bpy.types.Object, bones: list[str], root: bool) -> np.ndarray:
    """(b,) each weight column's parent column: the nearest deforming ancestor, -1 at a chain's root.

    The root column of unbound vertices (``root``) has no parent.
    """
    index = {name: i for i, name in enumerate(bones)}
    data = cast(bpy.types.Armature, arm.data).bones
    out = []
    for name in bones:  # bones, not vertices: a few dozen
        b = data[name].parent
        while b is not None and b.name not in index:
            b = b.parent
        out.append(-1 if b is None else index[b.name])
    return np.asarray(out + ([-1] if root else []), dtype=np.int64)


# At most this many frames of the range are sampled to find the feet on the ground (evenly spaced).
PLANTED_SAMPLES = 240


def rig_samples(
    obj: bpy.types.Object,
    binding: RigBinding,
    scene: bpy.types.Scene,
    frames: tuple[int, int],
    rest_frame: int,
) -> np.ndarray:
    """(f, 12 b) rig parameters at up to PLANTED_SAMPLES evenly spaced frames of ``frames``: what the
    planted feet are found from (core.model.planted).

    Samples the rig (not the mesh: no modifier is evaluated) and ends on ``rest_frame``.
    """
    start, end = frames
    sample = np.unique(np.linspace(start, max(start, end), min(PLANTED_SAMPLES, max(1, end - start + 1))).round())
    params = []
    try:
        for f in sample.astype(int):
            scene.frame_set(int(f))
            params.append(sample_rig(obj, binding, bpy.context.evaluated_depsgraph_get())[0])
    finally:
        scene.frame_set(rest_frame)
    return np.asarray(params)


def bone_segments(
    obj: bpy.types.Object, arm: bpy.types.Object, bones: list[str], G: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rest-pose heads and tails (b, 3) of ``bones`` in the simulation's rest frame.

    Armature space -> world (the armature's matrix now) -> the mesh's object
    space (its matrix now) -> the rest frame, by G (4 x 4).  Called at the rest
    frame, where the rig's transforms are the identity in that same chain.
    """
    to_rest = G @ np.linalg.inv(matrix(obj.matrix_world)) @ matrix(arm.matrix_world)
    data = arm.data.bones
    index = {b.name: i for i, b in enumerate(data)}
    sel = np.array([index[n] for n in bones], dtype=np.int64)
    out = []
    for attr in ("head_local", "tail_local"):
        buf = np.empty(3 * len(data))
        data.foreach_get(attr, buf)
        ends = buf.reshape(-1, 3)[sel]
        out.append((np.hstack([ends, np.ones((len(ends), 1))]) @ to_rest.T)[:, :3])
    return out[0], out[1]


def sample_rig(
    obj: bpy.types.Object, binding: RigBinding, depsgraph: bpy.types.Depsgraph
) -> tuple[np.ndarray, np.ndarray]:
    """Rig parameters (12 b,) for the simulation rest frame, and the world-to-object linear map (3, 3).

    Reads the evaluated armature pose and object matrices of the depsgraph's frame.
    """
    try:
        return _sample_rig(obj, binding, depsgraph)
    except np.linalg.LinAlgError as exc:  # an object or bone scaled to 0 there: said with the frame it is at
        raise RigError(
            f"frame {depsgraph.scene.frame_current}: the rig cannot be inverted there ({exc}); "
            "a bone or object scaled to 0? fix the rig at that frame"
        ) from exc


def _sample_rig(
    obj: bpy.types.Object, binding: RigBinding, depsgraph: bpy.types.Depsgraph
) -> tuple[np.ndarray, np.ndarray]:
    W_own = matrix(obj.evaluated_get(depsgraph).matrix_world)
    frame = bpy.data.objects.get(binding.frame_object) if binding.frame_object else obj
    if frame is None:
        raise RigError(
            f"'{binding.frame_object}', a mesh of the character, is gone; bake again to read the character anew"
        )
    W_mesh = W_own if frame == obj else matrix(frame.evaluated_get(depsgraph).matrix_world)
    G_inv = np.linalg.inv(binding.rest_map)
    T = bone_transforms(binding, depsgraph, W_mesh) @ G_inv if binding.armature else np.empty((0, 4, 4))
    T = binding.unit * T
    if binding.root:
        T = np.concatenate([T, (binding.unit * (W_mesh @ G_inv))[None]], axis=0)
    p = np.ascontiguousarray(T[:, :3, :]).reshape(-1)
    if not np.isfinite(p).all():
        bad = np.flatnonzero(~np.isfinite(T[:, :3, :]).all(axis=(1, 2)))
        names = [*binding.bones, f"the object '{obj.name}'"]
        raise RigError(
            f"frame {depsgraph.scene.frame_current}: the rig is not a number there "
            f"({', '.join(names[i] for i in bad[:3])} has NaN or infinite values: a driver or constraint "
            "dividing by zero?); fix the rig at that frame"
        )
    to_local = np.linalg.inv(binding.unit * W_own[:3, :3])
    return p, to_local


def bone_transforms(binding: RigBinding, depsgraph: bpy.types.Depsgraph, W_mesh: np.ndarray) -> np.ndarray:
    """(b, 4, 4) world transforms W_arm B_b W_arm^-1 W_mesh of the binding's bones (module notes), before G^-1."""
    arm_e = bpy.data.objects[binding.armature].evaluated_get(depsgraph)
    W_arm = matrix(arm_e.matrix_world)
    pose = arm_e.pose.bones
    buf = np.empty(len(pose) * 16)
    pose.foreach_get("matrix", buf)
    pose_m = buf.reshape(-1, 4, 4).transpose(0, 2, 1)  # foreach_get gives column-major matrices
    rest_buf = np.empty(len(pose) * 16)
    arm_e.data.bones.foreach_get("matrix_local", rest_buf)
    rest_m = rest_buf.reshape(-1, 4, 4).transpose(0, 2, 1)
    index = {b.name: i for i, b in enumerate(arm_e.data.bones)}
    sel = np.array([index[n] for n in binding.bones], dtype=np.int64)
    B = pose_m[sel] @ np.linalg.inv(rest_m[sel])
    return np.asarray(W_arm @ B @ np.linalg.inv(W_arm) @ W_mesh)


def evaluated_coordinates(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, out: np.ndarray | None = None
) -> np.ndarray:
    """Object-space positions (k, 3) float32 of the evaluated mesh (after its modifier stack)."""
    return vertex_positions(cast(bpy.types.Mesh, obj.evaluated_get(depsgraph).data), out)


def fcurves_of(action: bpy.types.Action) -> list[bpy.types.FCurve]:
    """F-curves of an action, for both the 4.x and the layered (5.x) action API."""
    if hasattr(action, "fcurves") and len(getattr(action, "fcurves", [])):
        return list(action.fcurves)
    curves: list[bpy.types.FCurve] = []
    for layer in getattr(action, "layers", []):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", []):
                curves.extend(bag.fcurves)
    return curves
