"""Baking secondary motion: a point cache (.pc2 + Mesh Cache modifier) or shape keys.

A bake is a :class:`BakeJob`: a generator that advances one frame per step,
so the modal operator can show progress and honour Esc, while the CLI, the
Python API and tests run it to the end.  Until :meth:`BakeJob.commit`,
nothing in the scene or on disk changes except a temporary file next to the
destination: cancelling or failing leaves the scene and the disk exactly as
they were (frame restored, old bake untouched).  Commit replaces any previous
bake in one go.

One pass over the frame range, one ``frame_set`` per frame: it samples the
rig, reads the armature-deformed render positions (with skinmodes' own
outputs muted), steps the simulation and streams the frame out.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Generator
from pathlib import Path
from typing import cast

import bpy
import numpy as np

from .character import evaluated_coordinates, fcurves_of
from .core.errors import CacheError, SkinmodesError
from .core.pc2 import PC2Writer, check_writable
from .props import scene_of, settings
from .session import (
    CACHE_MODIFIER,
    SHAPE_KEY_PREFIX,
    Session,
    build_session,
    busy,
    current_session,
    outputs_muted,
    sample_range,
)

OUTPUTS = ("PC2", "SHAPE_KEYS")


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "object"


def pc2_path(obj: bpy.types.Object) -> tuple[str, Path]:
    """The point cache's relative (``//``) path stored in the modifier, and its absolute path."""
    if not bpy.data.filepath:
        raise SkinmodesError("save the .blend first: the point cache is written next to it (File > Save)")
    folder = settings(obj).cache_dir or "//skinmodes_cache/"
    rel = bpy.path.relpath(bpy.path.abspath(folder)) if not folder.startswith("//") else folder
    rel = rel.rstrip("/\\") + "/" + safe_name(obj.name) + ".pc2"
    return rel, Path(bpy.path.abspath(rel))


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
    W = session.character.bone_weights
    W = W / np.maximum(W.sum(axis=1, keepdims=True), 1e-12)
    L = np.einsum("kb,bij->kij", W, Lb)
    return np.linalg.inv(L)


class BakeJob:
    """Bake ``obj`` over its frame range; iterate :meth:`steps`, then :meth:`commit` (or :meth:`cancel`)."""

    def __init__(
        self,
        context: bpy.types.Context,
        obj: bpy.types.Object,
        output: str | None = None,
        frames: tuple[int, int] | None = None,
    ) -> None:
        self.scene = scene_of(context)
        self.obj = obj
        s = settings(obj)
        self.output = (output or s.output).upper()
        if self.output not in OUTPUTS:
            raise SkinmodesError(f"unknown output '{output}'; use pc2 or shapekeys")
        self.start, self.end = frames if frames is not None else s.frame_range(self.scene)
        if self.end < self.start:
            raise SkinmodesError(
                f"the frame range {self.start}-{self.end} is empty; set the end frame after the start frame"
            )
        self.messages: list[str] = []
        self.warnings: list[str] = []  # the simulation's guard: implausible motion, said in one line each
        self.max_offset = 0.0  # largest secondary offset, as a share of the character's size
        self.frames_done = 0
        self.seconds = 0.0
        self.files: list[str] = []
        self._writer: PC2Writer | None = None
        self._offsets: dict[int, np.ndarray] = {}
        self._original_frame = self.scene.frame_current
        self._closed = False
        self._gen: Generator[float, None, None] | None = None
        # Refuse impossible requests before any heavy work.
        if self.output == "PC2":
            self.rel_path, self.abs_path = pc2_path(obj)
            check_writable(self.abs_path.parent)
        else:
            keys = obj.data.shape_keys
            ad = keys.animation_data if keys is not None else None
            if ad is not None and ad.action is not None and ad.action.name != s.bake_action:
                raise SkinmodesError(
                    f"the shape keys of '{obj.name}' are animated by action '{ad.action.name}'; "
                    "skinmodes will not touch your keyframes: use Point Cache output instead"
                )

    @property
    def total(self) -> int:
        return self.end - self.start + 1

    def steps(self) -> Generator[float, None, None]:
        """Advance one frame per step; yields the fraction done (the generator is kept for :meth:`cancel`)."""
        self._gen = self._steps()
        return self._gen

    def _steps(self) -> Generator[float, None, None]:
        t0 = time.perf_counter()
        frames = (self.start, self.end)
        session = current_session(self.obj, self.scene, frames)
        if session is None:
            session = build_session(self.obj, self.scene, log=self.messages.append, frames=frames)
        self.session = session
        k = len(session.character.rest)
        if self.output == "PC2":
            self._writer = PC2Writer(self.abs_path, k, float(self.start), self.total)
        # The start state needs the rig's velocity (its first two frames) and the pre-roll's frames.
        sample_range(
            session,
            self.scene,
            [f for f in range(session.first, self.start + 2) if f <= self.end and f not in session.rig],
        )
        session.ensure_simulation()  # build the solver (and fail, if it must) before the first frame
        depsgraph = bpy.context.evaluated_depsgraph_get()
        buf = np.empty(3 * k, dtype=np.float32)
        with busy(), outputs_muted(self.obj):
            for f in range(self.start, self.end + 1):
                self.scene.frame_set(f)
                session.record(f, depsgraph)
                offsets = session.offsets_local(f)
                if self._writer is not None:
                    self._writer.write(evaluated_coordinates(self.obj, depsgraph, buf) + offsets)
                else:
                    self._offsets[f] = offsets
                self.frames_done += 1
                self.seconds = time.perf_counter() - t0
                yield self.frames_done / self.total
        self.warnings = list(session.ensure_simulation().warnings)
        self.max_offset = session.ensure_simulation().max_offset

    def run(self) -> BakeJob:
        """Run every step and commit; cancels cleanly on any error."""
        try:
            for _ in self.steps():
                pass
        except BaseException:
            self.cancel()
            raise
        self.commit()
        return self

    def _restore_frame(self) -> None:
        with busy():
            self.scene.frame_set(self._original_frame)

    def cancel(self) -> None:
        """Leave the scene and the disk as before the bake."""
        if self._closed:
            return
        self._closed = True
        if self._gen is not None:
            self._gen.close()  # leaves the muted-outputs block: every toggle is restored
        if self._writer is not None:
            self._writer.abort()
        self._offsets.clear()
        self._restore_frame()

    def commit(self) -> None:
        """Replace any previous bake with this one."""
        if self._closed:
            raise SkinmodesError("this bake was cancelled")
        self._closed = True
        try:
            s = settings(self.obj)
            # The old .pc2 goes unless the new bake replaces it at the same path.
            old_file = bpy.path.abspath(s.bake_file) if s.bake_kind == "PC2" and s.bake_file else ""
            keep_old = self._writer is not None and old_file and Path(old_file) == Path(self.abs_path)
            clear_bake(self.obj, delete_file=not keep_old)
            s = settings(self.obj)
            if self._writer is not None:
                path = self._writer.commit()
                self.files = [str(path)]
                add_cache_modifier(self.obj, self.rel_path, self.start)
                s.bake_file = self.rel_path
            else:
                s.bake_action = write_shape_keys(self.obj, self.session, self._offsets)
            s.live_preview = False
            s.bake_kind = self.output
            s.bake_start, s.bake_end = self.start, self.end
            s.bake_key = self.session.key
            s.bake_warning = self.warnings[0] if self.warnings else ""
        finally:
            if self._writer is not None:
                self._writer.abort()  # no-op after a successful commit
            self._restore_frame()


def add_cache_modifier(obj: bpy.types.Object, rel_path: str, start: int) -> bpy.types.Modifier:
    """A Mesh Cache modifier playing the .pc2 back, last in the stack (pinned there when Blender can)."""
    mod = cast(bpy.types.MeshCacheModifier, obj.modifiers.new(CACHE_MODIFIER, "MESH_CACHE"))
    mod.cache_format = "PC2"
    mod.filepath = rel_path
    mod.time_mode = "FRAME"
    mod.play_mode = "SCENE"
    mod.deform_mode = "OVERWRITE"
    mod.interpolation = "LINEAR"
    mod.frame_start = float(start)
    mod.frame_scale = 1.0
    if hasattr(mod, "use_pin_to_last"):
        mod.use_pin_to_last = True
    return mod


def write_shape_keys(obj: bpy.types.Object, session: Session, offsets: dict[int, np.ndarray]) -> str:
    """One shape key per frame, keyed so exactly that frame's key is active; returns the action name."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    keys = obj.data.shape_keys
    basis = keys.reference_key
    flat = np.empty(3 * len(obj.data.vertices))
    basis.data.foreach_get("co", flat)
    rest = flat.reshape(-1, 3)
    if keys.animation_data is None:
        keys.animation_data_create()
    action = bpy.data.actions.new(f"{SHAPE_KEY_PREFIX}{safe_name(obj.name)}")
    keys.animation_data.action = action
    for f in sorted(offsets):
        kb = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{f:05d}", from_mix=False)
        kb.relative_key = basis
        delta = np.einsum("kij,kj->ki", inverse_skinning_matrices(session, f), offsets[f])
        kb.data.foreach_set("co", (rest + delta).astype(np.float32).ravel())
        kb.value = 0.0
        for frame, value in ((f - 1, 0.0), (f, 1.0), (f + 1, 0.0)):
            kb.value = value
            kb.keyframe_insert("value", frame=frame)
    for fc in fcurves_of(action):
        for kp in fc.keyframe_points:
            kp.interpolation = "CONSTANT"
    return action.name


def clear_bake(obj: bpy.types.Object, delete_file: bool = True) -> None:
    """Remove skinmodes' bake from ``obj``: its modifier, shape keys, action and (optionally) file."""
    s = settings(obj)
    mod = obj.modifiers.get(CACHE_MODIFIER)
    if mod is not None:
        obj.modifiers.remove(mod)
    keys = obj.data.shape_keys
    if keys is not None:
        for kb in [kb for kb in keys.key_blocks if kb.name.startswith(SHAPE_KEY_PREFIX)]:
            obj.shape_key_remove(kb)
        if (
            s.bake_action
            and keys.animation_data is not None
            and keys.animation_data.action is not None
            and keys.animation_data.action.name == s.bake_action
        ):
            keys.animation_data.action = None
        if len(keys.key_blocks) == 1 and keys.key_blocks[0].name == "Basis" and s.bake_kind == "SHAPE_KEYS":
            obj.shape_key_remove(keys.key_blocks[0])
    if s.bake_action:
        action = bpy.data.actions.get(s.bake_action)
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)
    if delete_file and s.bake_file:
        try:
            path = Path(bpy.path.abspath(s.bake_file))
            if path.suffix == ".pc2" and path.exists():
                os.unlink(path)
        except OSError as exc:
            raise CacheError(f"could not delete {s.bake_file} ({exc.strerror}); remove it by hand") from exc
    s.bake_kind = ""
    s.bake_file = ""
    s.bake_action = ""
    s.bake_key = ""
