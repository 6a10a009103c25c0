"""A bake's outputs in the scene: the point cache's Mesh Cache modifier, the shape keys and their
action, and removing them (after a new bake's swap, or by Clear Bake).

The cache plays back right after the Armature modifier, so the modifiers
after it act on the jiggled mesh (see character.py for the modifier stack).
Shape keys act before the Armature modifier, so they hold offsets mapped
back through it (:func:`inverse_skinning_matrices`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

import bpy
import numpy as np

from ..character import character_meshes, fcurves_of, place_after_armature, renumbering_modifiers
from ..core.errors import CacheError, RigError, SkinmodesError
from ..core.model.rig import normalize_weights
from ..props import settings
from ..session.muting import CACHE_MODIFIER, SHAPE_KEY_PREFIX
from ..session.session import Session
from .deletion import deletion_refused, retire_file
from .naming import cache_stem, resolved
from .travel import clear_travel_keys
from .undo import Undo, set_all

# Old shape keys are renamed to this prefix while a new shape-key bake is put in place.
ASIDE_PREFIX = SHAPE_KEY_PREFIX + "replaced."


# Set on the shape keys (the Key) when a bake added their Basis: only then does removing the bake remove it.
BASIS_MARK = "skinmodes_made_basis"


@dataclass
class OldBake:
    """The previous bake of an object, as found when a commit starts."""

    kind: str
    file: str
    action: str
    refused: str = ""  # why its file must not be deleted (see deletion_refused), decided before the commit
    travel_action: str = ""  # skinmodes' travel action it keyed on the object (bake/travel.py), once unassigned

    @classmethod
    def of(cls, obj: bpy.types.Object) -> OldBake:
        s = settings(obj)
        return cls(kind=s.bake_kind, file=s.bake_file if s.bake_kind == "PC2" else "", action=s.bake_action)


CACHE_SETTINGS = (
    "cache_format",
    "filepath",
    "time_mode",
    "play_mode",
    "deform_mode",
    "interpolation",
    "frame_start",
    "frame_scale",
    "use_pin_to_last",
)


def _configure_cache_modifier(mod: bpy.types.MeshCacheModifier, rel_path: str, start: int) -> None:
    mod.cache_format = "PC2"
    mod.filepath = rel_path
    mod.time_mode = "FRAME"
    mod.play_mode = "SCENE"
    mod.deform_mode = "OVERWRITE"
    mod.interpolation = "LINEAR"
    mod.frame_start = float(start)
    mod.frame_scale = 1.0


def add_cache_modifier(obj: bpy.types.Object, rel_path: str, start: int) -> bpy.types.Modifier:
    """A Mesh Cache modifier playing the .pc2 back, right after the Armature modifier.

    The file holds the Armature modifier's output plus the offsets, so it
    replaces exactly that; the modifiers after it act on the jiggled mesh.
    """
    mod = cast(bpy.types.MeshCacheModifier, obj.modifiers.new(CACHE_MODIFIER, "MESH_CACHE"))
    _configure_cache_modifier(mod, rel_path, start)
    place_after_armature(obj, mod)
    return mod


def set_cache_modifier(obj: bpy.types.Object, rel_path: str, start: int, undo: Undo) -> None:
    """Point the object's cache modifier at ``rel_path`` (re-using the old one, or adding one), after the Armature."""
    mod = obj.modifiers.get(CACHE_MODIFIER)
    if mod is None or mod.type != "MESH_CACHE":
        new = add_cache_modifier(obj, rel_path, start)
        undo.add(lambda: obj.modifiers.remove(new))
        return
    saved = {name: getattr(mod, name) for name in CACHE_SETTINGS if hasattr(mod, name)}
    undo.add(lambda: set_all(mod, saved))
    _configure_cache_modifier(cast(bpy.types.MeshCacheModifier, mod), rel_path, start)
    name = mod.name
    index = place_after_armature(obj, mod)  # an old bake's modifier sat last (pinned)
    undo.add(lambda: obj.modifiers.move(obj.modifiers.find(name), index))


def refuse_shape_keys_for_stack(obj: bpy.types.Object) -> None:
    """Shape keys hold one offset per vertex of the mesh itself: refuse a stack that gives the Armature
    modifier other vertices (a Mirror above it), before any work."""
    renumbering = renumbering_modifiers(obj)
    if renumbering:
        names = ", ".join(f"'{m.name}'" for m in renumbering)
        raise SkinmodesError(
            f"shape keys cannot hold the motion of '{obj.name}': the modifiers above its Armature modifier ({names}) "
            "give it other vertices than the mesh's own; bake a Point Cache instead"
        )


def baked_key_names(keys: bpy.types.Key, prefix: str) -> list[str]:
    """The shape keys a bake made: ``prefix`` and a frame number (a user's own "skinmodes.smile" is not one)."""
    pattern = re.compile(re.escape(prefix) + r"-?\d+")
    return [kb.name for kb in keys.key_blocks if pattern.fullmatch(kb.name)]


def set_aside_shape_keys(obj: bpy.types.Object, old: OldBake, undo: Undo) -> None:
    """Make room for new shape keys: rename the old bake's aside and unassign its action (both undoable).

    Renaming while the old action is assigned keeps its F-curves pointing
    at the keys (Blender renames the paths); undoing reassigns it first.
    """
    index = obj.active_shape_key_index
    undo.add(lambda: setattr(obj, "active_shape_key_index", index))
    keys = obj.data.shape_keys
    if keys is None:
        return
    ours = baked_key_names(keys, SHAPE_KEY_PREFIX)
    for name in ours:
        aside = ASIDE_PREFIX + name[len(SHAPE_KEY_PREFIX) :]
        keys.key_blocks[name].name = aside
        undo.add(lambda name=name, aside=aside: setattr(keys.key_blocks[aside], "name", name))
    ad = keys.animation_data
    if ad is not None and ad.action is not None and old.action and ad.action.name == old.action:
        action, slot = ad.action, getattr(ad, "action_slot", None)

        def reassign() -> None:
            ad.action = action
            if slot is not None:
                ad.action_slot = slot

        ad.action = None
        undo.add(reassign)


def write_shape_keys(obj: bpy.types.Object, deltas: dict[int, np.ndarray], undo: Undo) -> str:
    """One shape key per frame, keyed so exactly that frame's key is active; returns the action's name.

    deltas: per frame, the offsets (k, 3) to add to the basis (see
    :func:`inverse_skinning_matrices`).  Everything made is recorded in ``undo``.
    """
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
        cast(bpy.types.Key, obj.data.shape_keys)[BASIS_MARK] = True
        undo.add(lambda: obj.shape_key_remove(obj.data.shape_keys.key_blocks[0]))
    keys = obj.data.shape_keys
    basis = keys.reference_key
    flat = np.empty(3 * len(obj.data.vertices))
    basis.data.foreach_get("co", flat)
    rest = flat.reshape(-1, 3)
    if keys.animation_data is None:
        keys.animation_data_create()
        undo.add(keys.animation_data_clear)
    action = bpy.data.actions.new(f"{SHAPE_KEY_PREFIX}{cache_stem(obj)}")
    undo.add(lambda: bpy.data.actions.remove(action))
    keys.animation_data.action = action
    made: list[str] = []
    undo.add(lambda: _remove_shape_keys(obj, reversed(made)))
    for f in sorted(deltas):
        kb = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{f:05d}", from_mix=False)
        made.append(kb.name)
        kb.relative_key = basis
        kb.data.foreach_set("co", (rest + deltas[f]).astype(np.float32).ravel())
        kb.value = 0.0
        for frame, value in ((f - 1, 0.0), (f, 1.0), (f + 1, 0.0)):
            kb.value = value
            kb.keyframe_insert("value", frame=frame)
    for fc in fcurves_of(action):
        for kp in fc.keyframe_points:
            kp.interpolation = "CONSTANT"
    return action.name


def _remove_shape_keys(obj: bpy.types.Object, names: Iterable[str]) -> None:
    keys = obj.data.shape_keys
    for name in names:
        obj.shape_key_remove(keys.key_blocks[name])


def inverse_skinning_matrices(session: Session, frame: int) -> np.ndarray:
    """Per render vertex, the inverse of the Armature modifier's linear map at ``frame``: (k, 3, 3).

    Shape keys act before the Armature modifier, so an object-space offset u
    at frame f is stored as ``(sum_b w_b L_b)^-1 u`` in the key; LBS then
    maps it back exactly (Preserve Volume is not linear, see the README).
    """
    b = session.binding
    P = session.rig[frame].reshape(-1, 3, 4)[:, :, :3]  # world linear parts acting on the rest frame
    G = b.rest_map[:3, :3]
    to_local = session.to_local[frame]
    # Object-space linear map of bone j: to_local @ P_j @ G (rest coords -> sim -> world -> object).
    Lb = to_local[None] @ P @ G[None]
    W = normalize_weights(b.own(session.character.bone_weights))
    L = np.einsum("kb,bij->kij", W, Lb)
    try:
        inv = np.linalg.inv(L)
    except np.linalg.LinAlgError:
        inv = np.full_like(L, np.nan)  # reported below, with the vertices it concerns
    bad = ~np.isfinite(inv).all(axis=(1, 2))
    if bad.any():
        raise RigError(
            f"frame {frame}: the rig squashes {int(np.count_nonzero(bad))} vertices of the mesh flat "
            "(a bone scaled to 0?); shape keys cannot store their motion there: "
            "fix the bone's scale at that frame or bake a Point Cache"
        )
    return inv


def drop_old_bake(obj: bpy.types.Object, old: OldBake, output: str) -> list[str]:
    """After the swap: remove what is left of the old bake; returns one line per thing that could not be.

    Nothing here can take the new bake back, so a failure is reported and
    the rest goes on.
    """
    s = settings(obj)
    notes: list[str] = []

    def attempt(what: str, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as exc:
            notes.append(f"could not remove {what} of the previous bake ({type(exc).__name__}: {exc})")

    keys = obj.data.shape_keys
    if output == "SHAPE_KEYS":
        mod = obj.modifiers.get(CACHE_MODIFIER)
        if mod is not None:
            attempt("the cache modifier", lambda: obj.modifiers.remove(mod))
        prefix = ASIDE_PREFIX
    else:
        prefix = SHAPE_KEY_PREFIX
    if keys is not None:
        for name in baked_key_names(keys, prefix):
            attempt(f"shape key {name}", lambda name=name: obj.shape_key_remove(keys.key_blocks[name]))
        ad = keys.animation_data
        if output == "PC2" and ad is not None and ad.action is not None and ad.action.name == old.action:
            attempt("the shape-key action", lambda: setattr(ad, "action", None))
        if output == "PC2" and old.kind == "SHAPE_KEYS" and len(keys.key_blocks) == 1 and keys.get(BASIS_MARK):
            attempt("the Basis shape key", lambda: obj.shape_key_remove(keys.key_blocks[0]))
    if old.action and old.action != s.bake_action:
        action = bpy.data.actions.get(old.action)
        if action is not None and action.users == 0:
            attempt(f"action {old.action}", lambda: bpy.data.actions.remove(action))
    if s.bake_action:  # the new action got a ".001" while the old one held its name
        action = bpy.data.actions.get(s.bake_action)
        wanted = f"{SHAPE_KEY_PREFIX}{cache_stem(obj)}"
        if action is not None and action.name != wanted and bpy.data.actions.get(wanted) is None:
            action.name = wanted
            s.bake_action = action.name
    if old.file and (output != "PC2" or resolved(old.file, obj) != resolved(s.bake_file, obj)):
        if old.refused:
            notes.append(f"kept the previous point cache {old.file}: {old.refused}")
        else:
            try:
                if retire_file(obj, old.file):
                    notes.append(
                        f"the previous point cache {old.file} is deleted when the .blend is saved "
                        "(the saved .blend plays it until then)"
                    )
            except OSError as exc:
                notes.append(
                    f"could not delete the previous point cache {old.file} ({exc.strerror}); remove it by hand"
                )
    if s.live_preview:
        s.live_preview = False  # the bake replaces the preview: its modifier and attribute go
    return notes


def clear_bake(obj: bpy.types.Object, delete_file: bool = True) -> list[str]:
    """Remove skinmodes' bake from ``obj``: its modifier, shape keys, action and (optionally) file.

    Only a file this add-on recorded writing for this object, and that no
    other object uses, is deleted (see :func:`deletion_refused`); returns
    one line per file it kept, and why.  The file goes first: if it cannot
    be deleted, nothing else changes.
    """
    s = settings(obj)
    kept: list[str] = []
    if delete_file and s.bake_file:
        refused = deletion_refused(obj, s.bake_file)
        if refused:
            kept.append(f"kept {s.bake_file}: {refused}")
        else:
            try:
                if retire_file(obj, s.bake_file):
                    kept.append(f"kept {s.bake_file} until the .blend is saved: the saved .blend plays it")
            except OSError as exc:
                raise CacheError(f"could not delete {s.bake_file} ({exc.strerror}); remove it by hand") from exc
    mod = obj.modifiers.get(CACHE_MODIFIER)
    if mod is not None:
        obj.modifiers.remove(mod)
    clear_travel_keys(obj)  # the gait's travel keys, if a bake put them on the object; the user's transform back
    keys = obj.data.shape_keys
    if keys is not None:
        for name in baked_key_names(keys, SHAPE_KEY_PREFIX):
            obj.shape_key_remove(keys.key_blocks[name])
        if (
            s.bake_action
            and keys.animation_data is not None
            and keys.animation_data.action is not None
            and keys.animation_data.action.name == s.bake_action
        ):
            keys.animation_data.action = None
        if len(keys.key_blocks) == 1 and keys.get(BASIS_MARK) and s.bake_kind == "SHAPE_KEYS":
            obj.shape_key_remove(keys.key_blocks[0])  # the Basis the bake added, never the user's own
    if s.bake_action:
        action = bpy.data.actions.get(s.bake_action)
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)
    s.bake_files = "\n".join(
        line
        for line in s.bake_files.splitlines()
        if line.strip() and (not s.bake_file or resolved(line.split("\t")[0], obj) != resolved(s.bake_file, obj))
    )
    s.bake_kind = ""
    s.bake_file = ""
    s.bake_action = ""
    s.bake_key = ""
    return kept


def clear_character(obj: bpy.types.Object) -> list[str]:
    """Clear the bake of every mesh of ``obj``'s character that has one (``character.character_meshes``);
    returns their names."""
    meshes = [m for m in character_meshes(obj) if settings(m).bake_kind]
    for mesh in meshes:
        clear_bake(mesh)
    return [m.name for m in meshes]
