"""Live preview while scrubbing: persistent frame-change handlers.

The preview never touches the rest mesh.  The secondary offsets of the
current frame are written to a point attribute (``skinmodes_offset``), and a
small Geometry Nodes modifier right after the Armature modifier adds them to
the deformed positions, so the modifiers after it (Subdivision, Solidify...)
act on the jiggled mesh, as on a bake's.  When modifiers above the Armature
modifier give it other vertices than the mesh's own (a Mirror), the offsets
are held by a small mesh outside the scene instead, sampled by vertex index.

Any frame, reached forwards, backwards or by jumping, shows the state the
bake would write for it: both ask the session's FrameSimulation, which
simulates forward from the nearest cached state.

The offsets are written before the frame is evaluated (frame_change_pre),
so they cost no second evaluation of the object; after it (frame_change_post)
the frame's rig is compared with its sample and only a changed pose is
re-shown.  The rig is sampled once per frame of the range when the preview
is turned on; afterwards each frame's sample is checked as the frame is shown, and
edits to actions or the armature drop the samples (they are taken again,
outside the handler, on a timer, a slice of frames per tick).

With a UI, a preview without modes never blocks: it shows the rig-only mesh
and starts Compute Modes' background job (:func:`request_modes`), which
refreshes the preview when it is done.  Headless, everything happens in the
calling thread, as scripts expect.
"""

from __future__ import annotations

import functools
import time
from typing import Any, cast

import bpy
import numpy as np
from bpy.app.handlers import persistent

from .character import is_object_rig, place_after_armature, renumbering_modifiers
from .core.errors import SkinmodesError
from .props import LIVE_PREVIEW_TOGGLED, SkinmodesSettings, scene_of, settings
from .registry import ERRORS, RESAMPLING, SHOWN, STARTING, forget_objects
from .session.jobs import finish_job, running_job
from .session.muting import OFFSET_ATTRIBUTE, PREVIEW_MODIFIER, is_busy
from .session.session import build_session, current_session, object_by_uid, sample_range, session_for

NODE_GROUP = "Skinmodes Offset"
# Seconds of rig sampling per timer tick: the rest of the tick is Blender's, so the UI stays responsive.
RESAMPLE_BUDGET = 0.05


# The node group's object input: the holder of the offsets when the Armature modifier deforms
# other vertices than the mesh's own (a Mirror above it), see :func:`write_offsets`.
HOLDER_SOCKET = "Offsets"
HOLDER_PREFIX = "Skinmodes Offsets "


def offset_node_group() -> bpy.types.GeometryNodeTree:
    """The shared node group: Set Position with Offset = the offset attribute, read from the mesh
    itself or, by vertex index, from the holder object (whichever there is; the other adds 0)."""
    ng = bpy.data.node_groups.get(NODE_GROUP)
    if ng is not None and ng.bl_idname == "GeometryNodeTree" and _holder_socket(ng) is not None:
        return ng
    if ng is None or ng.bl_idname != "GeometryNodeTree":
        ng = cast(bpy.types.GeometryNodeTree, bpy.data.node_groups.new(NODE_GROUP, "GeometryNodeTree"))  # type: ignore[arg-type]
    else:  # made by an earlier version, without the holder input: rebuilt in place, its users keep it
        ng.nodes.clear()
        ng.interface.clear()
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket(HOLDER_SOCKET, in_out="INPUT", socket_type="NodeSocketObject")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    # Any: the stubs' node socket types are too narrow.
    gin: Any = ng.nodes.new("NodeGroupInput")
    gout = ng.nodes.new("NodeGroupOutput")
    setpos = ng.nodes.new("GeometryNodeSetPosition")
    own: Any = ng.nodes.new("GeometryNodeInputNamedAttribute")
    held: Any = ng.nodes.new("GeometryNodeInputNamedAttribute")
    for attr in (own, held):
        attr.data_type = "FLOAT_VECTOR"
        attr.inputs["Name"].default_value = OFFSET_ATTRIBUTE
    info: Any = ng.nodes.new("GeometryNodeObjectInfo")
    info.transform_space = "ORIGINAL"  # the holder's values as written, whatever its transform
    sample: Any = ng.nodes.new("GeometryNodeSampleIndex")
    sample.data_type, sample.domain = "FLOAT_VECTOR", "POINT"
    index = ng.nodes.new("GeometryNodeInputIndex")
    add: Any = ng.nodes.new("ShaderNodeVectorMath")
    add.operation = "ADD"
    for node, x, y in (
        (gin, -700, 0),
        (own, -400, -150),
        (held, -700, -300),
        (info, -700, -150),
        (index, -700, -450),
        (sample, -450, -300),
        (add, -250, -150),
        (setpos, -50, 0),
        (gout, 150, 0),
    ):
        node.location = (x, y)
    ng.links.new(gin.outputs[0], setpos.inputs["Geometry"])
    ng.links.new(gin.outputs[HOLDER_SOCKET], info.inputs["Object"])
    ng.links.new(info.outputs["Geometry"], sample.inputs["Geometry"])
    ng.links.new(held.outputs["Attribute"], sample.inputs["Value"])
    ng.links.new(index.outputs["Index"], sample.inputs["Index"])
    ng.links.new(own.outputs["Attribute"], add.inputs[0])
    ng.links.new(sample.outputs[0], add.inputs[1])
    ng.links.new(add.outputs[0], setpos.inputs["Offset"])
    ng.links.new(setpos.outputs[0], gout.inputs[0])
    return ng


def _holder_socket(ng: bpy.types.NodeTree) -> str | None:
    """The identifier of the node group's holder input (what the modifier stores it under), or None."""
    for item in ng.interface.items_tree:
        if getattr(item, "in_out", "") == "INPUT" and item.name == HOLDER_SOCKET:
            return cast(str, getattr(item, "identifier"))  # noqa: B009 - a socket, not a panel
    return None


def attach(obj: bpy.types.Object) -> None:
    """Add the preview modifier right after the Armature modifier, showing no offset yet.

    There it adds the offsets to the mesh the simulation deforms (the
    Armature modifier's output); the modifiers after it act on the result.
    """
    mod = obj.modifiers.get(PREVIEW_MODIFIER)
    if mod is None:
        mod = cast(bpy.types.NodesModifier, obj.modifiers.new(PREVIEW_MODIFIER, "NODES"))
        mod.node_group = offset_node_group()
        mod.show_expanded = False
    place_after_armature(obj, mod)
    mesh = obj.data
    if mesh.attributes.get(OFFSET_ATTRIBUTE) is None:
        mesh.attributes.new(OFFSET_ATTRIBUTE, "FLOAT_VECTOR", "POINT")


def detach(obj: bpy.types.Object) -> None:
    mod = obj.modifiers.get(PREVIEW_MODIFIER)
    if mod is not None:
        _set_holder(obj, mod, None)
        obj.modifiers.remove(mod)
    attr = obj.data.attributes.get(OFFSET_ATTRIBUTE)
    if attr is not None:
        obj.data.attributes.remove(attr)
    ng = bpy.data.node_groups.get(NODE_GROUP)
    if ng is not None and ng.users == 0:
        bpy.data.node_groups.remove(ng)


def _set_holder(obj: bpy.types.Object, mod: bpy.types.Modifier, holder: bpy.types.Object | None) -> None:
    """Make ``holder`` the preview modifier's holder; a previous holder no one else uses is deleted."""
    ng = cast(bpy.types.NodesModifier, mod).node_group
    key = _holder_socket(ng) if ng is not None else None
    if key is None:
        return
    old = cast(Any, mod).get(key)  # an ID property: the stubs do not know Blender's get()
    if old is holder:
        return
    mod[key] = holder
    nodes = cast(bpy.types.NodesModifier, mod)
    nodes.node_group = nodes.node_group  # an ID property set by hand tags no update: re-link the depsgraph
    if isinstance(old, bpy.types.Object) and old.name.startswith(HOLDER_PREFIX) and old.users == 0:
        mesh = old.data
        bpy.data.objects.remove(old)
        if isinstance(mesh, bpy.types.Mesh) and mesh.users == 0:
            bpy.data.meshes.remove(mesh)


def _holder(obj: bpy.types.Object, mod: bpy.types.Modifier, count: int) -> bpy.types.Mesh | None:
    """The mesh holding ``count`` offsets for the preview of ``obj``: made (outside every scene) when needed.

    Needed when the Armature modifier deforms other vertices than the mesh's
    own: modifiers above it (a Mirror) made them, so no attribute of the mesh
    can hold one offset each; the node group samples the holder by index.
    A holder another object also uses (a duplicate's) is never written.
    """
    ng = cast(bpy.types.NodesModifier, mod).node_group
    key = _holder_socket(ng) if ng is not None else None
    if key is None:
        return None
    holder = cast(Any, mod).get(key)
    if (
        not isinstance(holder, bpy.types.Object)
        or holder.type != "MESH"
        or holder.users > 1
        or len(holder.data.vertices) != count
    ):
        mesh = bpy.data.meshes.new(HOLDER_PREFIX + obj.name)
        mesh.vertices.add(count)
        mesh.attributes.new(OFFSET_ATTRIBUTE, "FLOAT_VECTOR", "POINT")
        holder = bpy.data.objects.new(HOLDER_PREFIX + obj.name, mesh)
        _set_holder(obj, mod, holder)
    return cast(bpy.types.Mesh, holder.data)


def write_offsets(obj: bpy.types.Object, offsets: np.ndarray) -> None:
    """Show ``offsets`` (k, 3), one per vertex the Armature modifier deforms (nothing without the preview modifier).

    Written to the mesh's own attribute when those are the mesh's own vertices
    (see ``character.renumbering_modifiers``), else to the holder (:func:`_holder`); the other place is emptied, so
    exactly one adds to the positions.
    """
    mod = obj.modifiers.get(PREVIEW_MODIFIER)
    if mod is None:
        return
    mesh = cast(bpy.types.Mesh, obj.data)
    data = np.ascontiguousarray(offsets, dtype=np.float32).ravel()
    own = mesh.attributes.get(OFFSET_ATTRIBUTE)
    if len(offsets) == len(mesh.vertices) and not renumbering_modifiers(obj):
        _set_holder(obj, mod, None)
        if own is None:
            own = mesh.attributes.new(OFFSET_ATTRIBUTE, "FLOAT_VECTOR", "POINT")
        own.data.foreach_set("vector", data)
        mesh.update()
        return
    if own is not None:
        mesh.attributes.remove(own)
        mesh.update()
    holder = _holder(obj, mod, len(offsets))
    if holder is not None:
        holder.attributes[OFFSET_ATTRIBUTE].data.foreach_set("vector", data)
        holder.update()


def clear_offsets(obj: bpy.types.Object) -> None:
    """Show the rig alone: zero offsets wherever they are held."""
    mod = obj.modifiers.get(PREVIEW_MODIFIER)
    ng = cast(bpy.types.NodesModifier, mod).node_group if mod is not None else None
    key = _holder_socket(ng) if ng is not None else None
    holder = cast(Any, mod).get(key) if mod is not None and key is not None else None
    count = len(holder.data.vertices) if isinstance(holder, bpy.types.Object) and holder.type == "MESH" else 0
    write_offsets(obj, np.zeros((count or len(cast(bpy.types.Mesh, obj.data).vertices), 3)))


def _preview_objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [o for o in scene.objects if o.type == "MESH" and settings(o).live_preview]


def show_sampled_frame(obj: bpy.types.Object, scene: bpy.types.Scene) -> bool:
    """Before the frame is evaluated: write its offsets if its rig is already sampled.

    Written before evaluation, the offsets ride along with the frame's own
    depsgraph update; written after it (frame_change_post), they tag the mesh
    and Blender evaluates the object a second time.  Returns True if written.
    """
    session = current_session(obj, scene)
    f = scene.frame_current
    if session is None or not (session.start <= f <= session.end) or session.missing_frames(f):
        return False
    write_offsets(obj, session.offsets_local(f))
    SHOWN[obj.session_uid] = (f, session.key)
    return True


def refresh(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph | None = None) -> None:
    """Show the secondary motion of the current frame on ``obj``."""
    shown = SHOWN.pop(obj.session_uid, None)
    session = session_for(obj)
    if (
        shown is not None
        and session is not None
        and depsgraph is not None
        and shown == (scene.frame_current, session.key)  # nothing can edit the mesh between pre and post
        and not session.record(scene.frame_current, depsgraph)
    ):
        return  # the pre-frame handler showed this frame, and the rig is as sampled
    session = current_session(obj, scene)
    if session is None:
        if _interactive():
            # Never block the UI: the modes are computed in the background (Compute Modes'
            # modal job); the rig-only mesh shows until it finishes and refreshes the preview.
            clear_offsets(obj)
            request_modes(obj)
            return
        job = running_job(obj)
        if job is not None and job.wait():
            session = finish_job(job)  # a script started one: wait for it rather than compute twice
        else:
            session = build_session(obj, scene)
        sample_range(session, scene, session.missing_frames(session.end))
    f = scene.frame_current
    if session.start <= f <= session.end:
        if depsgraph is not None:
            # The handler's depsgraph is already at f: checking its rig is free
            # and catches pose edits made without keyframes.
            session.record(f, depsgraph)
        missing = session.missing_frames(f)
        if missing:
            if bpy.app.background:
                sample_range(session, scene, missing)
            else:
                clear_offsets(obj)
                _schedule_resample(obj)
                return
    write_offsets(obj, session.offsets_local(f))
    ERRORS.pop(obj.session_uid, None)


def _interactive() -> bool:
    """Whether there is a UI to keep responsive (and an event loop to run timers and modal jobs)."""
    wm = bpy.context.window_manager
    return not bpy.app.background and wm is not None and len(wm.windows) > 0


def request_modes(obj: bpy.types.Object) -> None:
    """Start computing the modes of ``obj`` in the background, unless it is already under way.

    Deferred to a timer: frame handlers and property updates must not start
    operators.  The job is Compute Modes' modal one (status bar, Esc).
    """
    uid = obj.session_uid
    if uid in STARTING or running_job(obj) is not None:
        return
    STARTING.add(uid)
    bpy.app.timers.register(functools.partial(_start_modes, uid), first_interval=0.0)


def _window_showing(obj: bpy.types.Object) -> bpy.types.Window | None:
    return next((w for w in bpy.context.window_manager.windows if obj.name in w.view_layer.objects), None)


def _start_modes(uid: int) -> None:
    STARTING.discard(uid)
    obj = object_by_uid(uid)
    if obj is None or not settings(obj).live_preview or running_job(obj) is not None:
        return None
    window = _window_showing(obj)
    try:
        if window is not None:
            compute = getattr(bpy.ops, "skinmodes").compute_modes  # noqa: B009 - registered at run time
            with bpy.context.temp_override(window=window, active_object=obj, object=obj):
                if compute.poll():
                    compute("INVOKE_DEFAULT", for_preview=True)
                    return None
        # Compute Modes cannot run here (not in Object Mode, or the object is in no
        # window's view layer): compute in this thread, as the preview always did.
        scene = window.scene if window is not None else scene_of(bpy.context)
        session = build_session(obj, scene)
        sample_range(session, scene, session.missing_frames(scene.frame_current))
        refresh(obj, scene)
    except SkinmodesError as exc:
        give_up(uid, str(exc))
    return None


def give_up(uid: int, message: str) -> None:
    """The modes for a preview could not be computed: say why in the panel and turn the preview off.

    Left on, every frame change would start the same failing job again.  A
    preview that still has a valid session (its modes were recomputed by
    hand) is left alone.
    """
    obj = object_by_uid(uid)
    if obj is None or not settings(obj).live_preview:
        return
    scene = scene_of(bpy.context)
    if current_session(obj, scene) is not None:
        return
    ERRORS[uid] = f"Live Preview turned off: {message}"
    settings(obj).live_preview = False  # detaches the preview (on_toggle)


def _schedule_resample(obj: bpy.types.Object) -> None:
    uid = obj.session_uid
    if uid not in RESAMPLING:
        RESAMPLING.add(uid)
        bpy.app.timers.register(functools.partial(_resample, uid), first_interval=0.05)


def _resample(uid: int) -> float | None:
    """Sample the missing rig frames for up to RESAMPLE_BUDGET seconds; again next tick if some are left.

    Frames are sampled in order, so the frame on screen is shown as soon as
    the frames up to it are in, before the rest of the range.
    """
    obj = object_by_uid(uid)
    scene = scene_of(bpy.context)
    session = session_for(obj) if obj is not None else None
    if obj is None or session is None or not settings(obj).live_preview:
        RESAMPLING.discard(uid)
        return None
    try:
        f = scene.frame_current
        waiting = bool(session.missing_frames(f))
        t0 = time.perf_counter()
        chunk = 2
        while (missing := session.missing_frames(session.end)) and time.perf_counter() - t0 < RESAMPLE_BUDGET:
            t1 = time.perf_counter()
            sample_range(session, scene, missing[:chunk])
            per_frame = (time.perf_counter() - t1) / min(chunk, len(missing))
            chunk = max(1, int((RESAMPLE_BUDGET - (time.perf_counter() - t0)) / max(per_frame, 1e-4)))
        if waiting and not session.missing_frames(f):
            refresh(obj, scene)
    except SkinmodesError as exc:
        ERRORS[uid] = str(exc)
        RESAMPLING.discard(uid)
        return None
    if session.missing_frames(session.end):
        return 0.0
    RESAMPLING.discard(uid)
    return None


@persistent
def on_frame_change_pre(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph | None = None) -> None:
    if is_busy():
        return
    for obj in _preview_objects(scene):
        try:
            show_sampled_frame(obj, scene)
        except SkinmodesError:
            SHOWN.pop(obj.session_uid, None)  # the post handler reports it


@persistent
def on_frame_change(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph | None = None) -> None:
    if is_busy():
        return
    for obj in _preview_objects(scene):
        try:
            refresh(obj, scene, depsgraph)
        except SkinmodesError as exc:
            ERRORS[obj.session_uid] = str(exc)
            clear_offsets(obj)


@persistent
def on_depsgraph_update(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """Drop rig samples when animation or the armature is edited (not during playback)."""
    if is_busy():
        return
    previews = _preview_objects(scene)
    if not previews:
        return
    edited = False
    for upd in depsgraph.updates:
        idb = upd.id.original if upd.id is not None else None
        if isinstance(idb, (bpy.types.Action, bpy.types.Armature)):
            edited = True
        elif (
            isinstance(idb, bpy.types.Object)
            and upd.is_updated_transform
            and (
                idb.type == "ARMATURE" or (idb in previews and is_object_rig(idb))  # an object rig moved by hand
            )
        ):
            edited = not bpy.context.screen or not bpy.context.screen.is_animation_playing
    if not edited:
        return
    for obj in previews:
        session = session_for(obj)
        if session is not None:
            session.invalidate()
            if not bpy.app.background:
                _schedule_resample(obj)


@persistent
def on_load(_filepath: str = "") -> None:
    # Sessions, jobs and Show Mode's view addresses belong to the previous file; previews rebuild on the
    # next frame change.
    forget_objects()


def on_toggle(group: SkinmodesSettings, context: bpy.types.Context) -> None:
    """Live Preview switched on or off from the panel (property update)."""
    obj = group.id_data
    if not group.live_preview:
        job = running_job(obj)
        if job is not None and job.for_preview:
            job.cancel()  # its modal operator sees it and cleans up
        detach(obj)
        return
    if group.bake_kind:
        ERRORS[obj.session_uid] = "this object has a bake; Clear Bake to preview again"
        group["live_preview"] = False
        return
    attach(obj)
    try:
        refresh(obj, scene_of(context))
    except SkinmodesError as exc:
        ERRORS[obj.session_uid] = str(exc)
        group["live_preview"] = False
        detach(obj)


HANDLERS = (
    (bpy.app.handlers.frame_change_pre, on_frame_change_pre),
    (bpy.app.handlers.frame_change_post, on_frame_change),
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
    (bpy.app.handlers.load_post, on_load),
)


def register() -> None:
    for handler_list, fn in HANDLERS:
        if fn not in handler_list:
            handler_list.append(fn)
    if on_toggle not in LIVE_PREVIEW_TOGGLED:
        LIVE_PREVIEW_TOGGLED.append(on_toggle)


def unregister() -> None:
    for handler_list, fn in HANDLERS:
        # Remove by name too: after a reload of the add-on the function objects differ.
        for h in list(handler_list):
            if h is fn or (getattr(h, "__module__", None) == fn.__module__ and h.__name__ == fn.__name__):
                handler_list.remove(h)  # type: ignore[arg-type]
    while on_toggle in LIVE_PREVIEW_TOGGLED:
        LIVE_PREVIEW_TOGGLED.remove(on_toggle)
