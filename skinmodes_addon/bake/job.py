"""Baking secondary motion: a point cache (.pc2 + Mesh Cache modifier) or shape keys.

A bake is a :class:`BakeJob`: a generator that advances one frame per step,
so the modal operator can show progress and honour Esc, while the CLI, the
Python API and tests run it to the end.  Until :meth:`BakeJob.commit`,
nothing in the scene or on disk changes except a temporary file next to the
destination: cancelling or failing leaves the scene and the disk exactly as
they were (frame restored, old bake untouched).  The commit is a
transaction (see ``transaction``).

One pass over the frame range, one ``frame_set`` per frame: it samples the
rig, reads what the Armature modifier outputs (skinmodes' own outputs and
every modifier after the Armature modifier muted), steps the simulation and
streams that plus the offsets out.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from ..character import armature_output, check_object, different_topology_error, evaluated_coordinates
from ..core.errors import RigError, SkinmodesError
from ..core.io.atomic import remove_stale_partials
from ..core.io.cache_names import model_cache_file
from ..core.io.pc2 import PC2Writer, check_writable
from ..core.pipeline import check_frame_range
from ..object_rig import still_note
from ..props import scene_of, settings
from ..session.cache_paths import cache_folder, names_fixed_folder
from ..session.muting import busy, outputs_muted
from ..session.session import build_session, current_session, drop_session, sample_range
from ..session.signals import raise_if_stopped, report_progress
from .deletion import ABANDONED_AGE, remove_abandoned_partials, remove_test_bakes
from .disk import check_room, disk_error
from .naming import pc2_path
from .outputs import OldBake, drop_old_bake, inverse_skinning_matrices, refuse_shape_keys_for_stack
from .transaction import NewBake, commit_error, put_in_place
from .travel import TravelKeys, keys_aside, refuse_animated_transform, settle_travel_action, travel_cache, wants_keys
from .undo import Undo, set_all

OUTPUTS = ("PC2", "SHAPE_KEYS")


# The object's properties a session build writes (restored if the bake that built it fails).
SESSION_STATUS = frozenset(
    (
        "stat_tets",
        "stat_vertices",
        "stat_modes",
        "stat_clusters",
        "stat_seconds",
        "stat_mesher",
        "stat_notes",
        "stat_size",
        "stat_physical_hz",
        "modes_key",
    )
)


def rig_follows_mesh(obj: bpy.types.Object, armature: str) -> str:
    """A constraint of the armature (or of one of its bones) that targets ``obj``, as "bone 'X': 'Copy Location'";
    "" if none does.  Such a rig depends on the mesh the simulation deforms."""
    arm = bpy.data.objects.get(armature)
    if arm is None:
        return ""
    owners = [("the armature", arm.constraints)]
    owners += [(f"bone '{pb.name}'", pb.constraints) for pb in (arm.pose.bones if arm.pose is not None else [])]
    for owner, constraints in owners:
        for c in constraints:
            if getattr(c, "target", None) == obj and not c.mute:
                return f"{owner}: '{c.name}'"
    return ""


@dataclass
class SharedBody:
    """A whole character's simulation shared by its meshes' bakes: the body's offsets per frame (n, 3) and
    the simulation that produced them (its warnings, its max offset, its solver figures)."""

    offsets: dict[int, np.ndarray] = field(default_factory=dict)
    simulation: Any = None


class BakeJob:
    """Bake ``obj`` over its frame range; iterate :meth:`steps`, then :meth:`commit` (or :meth:`cancel`)."""

    def __init__(
        self,
        context: bpy.types.Context,
        obj: bpy.types.Object,
        output: str | None = None,
        frames: tuple[int, int] | None = None,
        keep_previous: bool = False,
        shared: dict[tuple[object, ...], SharedBody] | None = None,
    ) -> None:
        self.scene = scene_of(context)
        # A whole character's bakes (bake/character_job.py): the body's offsets, simulated by the first of its
        # meshes and read by the others (Session.share_key).
        self._shared = shared
        # A test bake (the command line's --no-save): never overwrite or delete the file the saved .blend plays.
        self.keep_previous = keep_previous
        self.obj = obj
        s = settings(obj)
        self.output = (output or s.output).upper()
        if self.output not in OUTPUTS:
            raise SkinmodesError(f"unknown output '{output}'; use pc2 or shapekeys")
        self.start, self.end = check_frame_range(*(frames if frames is not None else s.frame_range(self.scene)))
        self.messages: list[str] = []
        self.warnings: list[str] = []  # the simulation's guard: implausible motion, said in one line each
        self.max_offset = 0.0  # largest secondary offset, as a share of the character's size
        self.frames_done = 0
        self.seconds = 0.0
        self.files: list[str] = []
        self._writer: PC2Writer | None = None
        self._offsets: dict[int, np.ndarray] = {}
        self._original_frame = self.scene.frame_current
        self._started = time.time()  # temporary files older than this are a killed run's leftovers
        self._frame = self.start  # the frame being baked, for messages
        self._solving = False  # inside the simulation's step (its failures are not the rig's)
        self._stats: dict[str, object] = {}
        self._closed = False
        self._gen: Generator[float, None, None] | None = None
        self._travel: TravelKeys | None = None  # the gait's travel keyed on the object (Travel: On the Object)
        self.simulation: Any = None  # the FrameSimulation that simulated the frames (a shared body's: the first mesh's)
        # Refuse impossible requests before any heavy work.
        check_object(obj)
        if wants_keys(obj):
            refuse_animated_transform(obj)
        if self.output == "PC2":
            self.rel_path, self.abs_path = pc2_path(obj, keep_own=keep_previous)
            # Proved, not created: a bake refused later (a rig problem) leaves no empty folder;
            # PC2Writer creates it once the bake writes.
            check_writable(self.abs_path.parent, create=False)
            check_room(self.abs_path.parent, self.total, len(obj.data.vertices))
        else:
            if obj.data.library is not None or obj.data.override_library is not None:
                raise SkinmodesError(
                    f"the mesh of '{obj.name}' comes from a library and cannot take new shape keys; "
                    "bake a Point Cache instead"
                )
            twins = [o.name for o in bpy.data.objects if o.data == obj.data and o != obj]
            if twins:
                shown = ", ".join(f"'{n}'" for n in twins[:3]) + (
                    f" and {len(twins) - 3} more" if len(twins) > 3 else ""
                )
                raise SkinmodesError(
                    f"the mesh of '{obj.name}' is shared with {shown} (a linked duplicate): shape keys would move "
                    "them too; make it single-user (Object > Relations > Make Single User > Object & Data) "
                    "or bake a Point Cache"
                )
            keys = obj.data.shape_keys
            ad = keys.animation_data if keys is not None else None
            if ad is not None and ad.action is not None and ad.action.name != s.bake_action:
                raise SkinmodesError(
                    f"the shape keys of '{obj.name}' are animated by action '{ad.action.name}'; "
                    "skinmodes will not touch your keyframes: use Point Cache output instead"
                )
            refuse_shape_keys_for_stack(obj)

    @property
    def total(self) -> int:
        return self.end - self.start + 1

    def steps(self) -> Generator[float, None, None]:
        """Advance one frame per step; yields the fraction done (the generator is kept for :meth:`cancel`)."""
        s = settings(self.obj)
        # Building a session rewrites the modes' statistics; a bake that fails puts them back too.
        self._stats = {name: getattr(s, name) for name in s.bl_rna.properties.keys() if name in SESSION_STATUS}
        self._gen = self._steps()
        return self._gen

    def _steps(self) -> Generator[float, None, None]:
        """The frames, with any failure turned into one line (cancelling keeps the disk and scene)."""
        try:
            with keys_aside(self.obj):  # skinmodes' own travel keys are an output: the bake reads without them
                yield from self._frames()
        except SkinmodesError:
            raise
        except OSError as exc:
            raise disk_error(exc, self._target()) from exc
        except np.linalg.LinAlgError as exc:
            if self._solving:  # the simulation's own algebra, not the rig's
                raise SkinmodesError(
                    f"frame {self._frame}: the simulation's solver failed ({exc}); nothing was changed: "
                    "raise Sub-steps or lower the stiffness, or Compute Modes again"
                ) from exc
            raise RigError(
                f"frame {self._frame}: the rig cannot be inverted there ({exc}); "
                "a bone or object scaled to 0? fix the rig at that frame"
            ) from exc
        except Exception as exc:
            raise SkinmodesError(
                f"bake failed at frame {self._frame} ({type(exc).__name__}: {exc}); nothing was changed"
            ) from exc

    def _target(self) -> str:
        return self.abs_path.name if self.output == "PC2" else f"the caches of '{self.obj.name}'"

    def _frames(self) -> Generator[float, None, None]:
        t0 = time.perf_counter()
        self._clean_leftovers()
        if not bpy.data.filepath and not names_fixed_folder(settings(self.obj)):
            self.messages.append(
                f"this .blend is not saved: its caches are in {cache_folder(settings(self.obj))} for this session "
                "only; save the .blend first for farm use"
            )
        frames = (self.start, self.end)
        session = current_session(self.obj, self.scene, frames)
        if session is not None and session.object_name != self.obj.name:
            drop_session(self.obj)  # renamed since: the session finds its object by the old name
            session = None
        if session is None:
            session = build_session(self.obj, self.scene, log=self.messages.append, frames=frames)
        self.session = session
        self._clean_leftovers(model_key=session.prepared.key)
        follows = rig_follows_mesh(self.obj, session.binding.armature)
        if follows:
            self.messages.append(
                f"the rig follows '{self.obj.name}' itself ({follows}): it reads the mesh skinmodes moves, so the "
                "preview and the bake differ; make the constraint target another object (an empty) instead"
            )
        outside = [int(p.frame) for p in settings(self.obj).poses if not self.start <= p.frame <= self.end]
        if outside:
            shown = ", ".join(map(str, outside[:5])) + (" …" if len(outside) > 5 else "")
            self.messages.append(
                f"training pose(s) at frame {shown} lie outside the baked frames {self.start}-{self.end}: "
                "they still shape the modes; remove them in the Pose-Space panel if that is not meant"
            )
        k = session.vertex_count
        if self.output == "PC2":
            self._writer = PC2Writer(self.abs_path, k, float(self.start), self.total)
        # The start state needs the rig's velocity (its first two frames) and the pre-roll's frames.
        sample_range(
            session,
            self.scene,
            [f for f in range(session.first, self.start + 2) if f <= self.end and f not in session.rig],
        )
        session.ensure_simulation()  # build the solver (and fail, if it must) before the first frame
        self._travel = TravelKeys.of(self.obj, session) if wants_keys(self.obj) else None
        depsgraph = bpy.context.evaluated_depsgraph_get()
        buf = np.empty(3 * k, dtype=np.float32)
        # The modifiers after the Armature modifier are muted: the evaluated mesh is its output, the
        # mesh the simulation deforms; on playback they act on it with the offsets added.
        key = session.share_key() if self._shared is not None else None
        body = None if key is None or self._shared is None else self._shared.setdefault(key, SharedBody())
        with busy(), outputs_muted(self.obj), armature_output(self.obj):
            for f in range(self.start, self.end + 1):
                raise_if_stopped()
                self._frame = f
                self.scene.frame_set(f)
                session.record(f, depsgraph)
                self._solving = True
                offsets = session.offsets_local(f) if body is None else session.offsets_local(f, body.offsets)
                self._solving = False
                if self._travel is not None:
                    offsets = travel_cache(self._travel, self.obj, session, f, depsgraph, offsets)
                if self._writer is not None:
                    rig = evaluated_coordinates(self.obj, depsgraph, buf)
                    if len(rig) != k:
                        raise different_topology_error(self.obj, f, len(rig), k)
                    self._writer.write(rig + offsets)
                else:
                    # Shape keys act before the armature: store the rest-space offset, computed
                    # now so a rig that cannot be inverted fails here, before anything is written.
                    delta = np.einsum("kij,kj->ki", inverse_skinning_matrices(session, f), offsets)
                    self._offsets[f] = delta.astype(np.float32)
                self.frames_done += 1
                self.seconds = time.perf_counter() - t0
                if (10 * self.frames_done) // self.total != (10 * (self.frames_done - 1)) // self.total:
                    report_progress("baking frames", self.frames_done / self.total)  # every tenth
                yield self.frames_done / self.total
        simulation = session.ensure_simulation()
        if body is not None and body.simulation is None:
            body.simulation = simulation  # the one that simulated the frames: its guard and its figures
        ran = simulation if body is None or body.simulation is None else body.simulation
        self.warnings = list(ran.warnings)
        self.max_offset = ran.max_offset
        self.simulation = ran
        still = still_note(self.obj.name, session.binding, session.rig, self.start, self.end)
        if still and not session.gait:  # an object rig that never moves and plays no gait: its bake is its rest shape
            self.messages.append(still)

    def _clean_leftovers(self, model_key: str | None = None) -> None:
        """Delete temporary files that killed runs left for this object (never a live run's, see core.io.pc2)."""
        targets: list[Path] = []
        if model_key is not None:
            # The reduced model's cache file, named as core.pipeline.prepare_character names it.
            targets.append(model_cache_file(cache_folder(settings(self.obj)), model_key))
        elif self.output == "PC2":
            targets.append(self.abs_path)
        elif bpy.data.filepath:
            targets.append(pc2_path(self.obj)[1])
        removed = [p for target in targets for p in remove_stale_partials(target, self._started)]
        if removed:
            self.messages.append(
                f"removed {len(removed)} temporary file(s) that an interrupted bake of '{self.obj.name}' left in "
                f"{removed[0].parent}"
            )
        if model_key is not None:
            abandoned = remove_abandoned_partials(cache_folder(settings(self.obj)), time.time() - ABANDONED_AGE)
            if abandoned:
                self.messages.append(
                    f"removed {len(abandoned)} temporary file(s) of caches no longer in use from {abandoned[0].parent}"
                )

    def run(self) -> BakeJob:
        """Run every step and commit; cancels cleanly on any error."""
        try:
            for _ in self.steps():
                pass
            raise_if_stopped()  # the last chance to stop before the bake replaces anything
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
        try:
            if self._gen is not None:
                self._gen.close()  # leaves the muted-outputs block: every toggle is restored
        finally:
            try:
                self._abandon()
            finally:
                self._restore_frame()

    def _abandon(self) -> None:
        """Drop what was built aside (the temporary file, the offsets) and restore the statistics."""
        self._offsets.clear()
        try:
            if self._writer is not None:
                self._writer.abort()  # no-op after a successful commit
        finally:
            s = settings(self.obj)
            changed = {name: value for name, value in self._stats.items() if getattr(s, name) != value}
            set_all(s, changed)
            if changed:
                drop_session(self.obj)  # its statistics are gone: the next use rebuilds it (from the caches)

    def commit(self) -> None:
        """Replace any previous bake with this one, completely or not at all (see the module notes).

        Raises a one-line :class:`SkinmodesError` (or the interrupting
        exception itself: KeyboardInterrupt, SystemExit) after undoing every
        change when anything fails before the new file is renamed into place.
        """
        if self._closed:
            raise SkinmodesError("this bake was cancelled")
        if self.frames_done != self.total:
            self.cancel()
            raise SkinmodesError(f"the bake stopped after {self.frames_done} of {self.total} frames; bake again")
        self._closed = True
        obj = self.obj
        old = OldBake.of(obj)
        undo = Undo()
        try:
            with busy():
                self.files = put_in_place(obj, self._new_bake(), old, undo)
        except BaseException as exc:
            failed = undo.run()
            try:
                self._abandon()
            finally:
                self._restore_frame()
            if not isinstance(exc, Exception):
                raise  # an interrupt stays an interrupt; the scene and disk are restored
            raise commit_error(exc, self._target(), failed) from exc
        # Point of no return: the new bake is in place; what is left is clean-up.
        self.messages.extend(drop_old_bake(obj, old, self.output))
        if self.output == "PC2" and not self.keep_previous:
            self.messages.extend(remove_test_bakes(obj, self.abs_path))
        elif self.output == "PC2":
            self.messages.append(
                f"a test bake: nothing saved plays {self.abs_path.name}; the object's next saved bake removes it"
            )
        settle_travel_action(obj, old.travel_action)
        self._offsets.clear()
        self._restore_frame()

    def _new_bake(self) -> NewBake:
        """The finished bake, as the transaction puts it in place."""
        pc2 = self._writer is not None
        return NewBake(
            output=self.output,
            start=self.start,
            end=self.end,
            key=self.session.key,
            warning=self.warnings[0] if self.warnings else "",
            writer=self._writer,
            rel_path=self.rel_path if pc2 else "",
            abs_path=self.abs_path if pc2 else Path(),
            offsets=self._offsets,
            keep_previous=self.keep_previous,
            travel=self._travel,
        )
