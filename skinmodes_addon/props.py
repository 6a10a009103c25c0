"""Per-object settings, saved with the .blend (and overridable in library overrides)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from .core.errors import SkinmodesError
from .core.settings import (
    BY_NAME,
    CONTACT_AUTO,
    CONTACT_KINDS,
    CONTACT_STICK,
    POSE_CONTACT_MODES,
    PRESETS,
    SETTINGS,
    Setting,
)

OVERRIDE = {"LIBRARY_OVERRIDABLE"}
# The operators' status: not a setting, so neither shown as a field nor animatable.
STATUS = {"HIDDEN"}
# Blender 4.5+ asks path properties to declare that they accept "//" paths.
PATH_OPTIONS = {"PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else set()
# The add-on's module name, bl_ext.<repository>.skinmodes: its preferences are filed under it.
ADDON = __package__ or ""
# Where caches go when neither the object nor the preferences name a folder.
FALLBACK_CACHE_DIR = "//skinmodes_cache/"


# Blender's last frame (MAXFRAME; the first is its negative): frame properties hold no other.
MAX_FRAME = 1_048_574


def status(kind: Any, name: str, description: str = "", **kw: Any) -> Any:
    """A status property the operators write: hidden, not animatable, overridable (kept by library overrides)."""
    options = set(STATUS)
    if kw.get("subtype") == "FILE_PATH":
        options |= PATH_OPTIONS
    return kind(name=name, description=description, options=options, override=OVERRIDE, **kw)


def _apply_preset(self: SkinmodesSettings, _context: bpy.types.Context) -> None:
    for name, value in PRESETS.get(self.material_preset, {}).items():
        self[name] = value


def _mark_custom(self: SkinmodesSettings, _context: bpy.types.Context) -> None:
    # Editing a value by hand leaves the preset; the enum then reads "Custom".
    preset = PRESETS.get(self.material_preset)
    if preset and any(abs(getattr(self, k) - v) > 1e-6 * max(abs(v), 1.0) for k, v in preset.items()):
        self["material_preset"] = [c.id for c in BY_NAME["material_preset"].choices].index("CUSTOM")


# Told (settings, context) when Live Preview is switched on or off: the preview adds its own
# handler on register (props imports nothing of the add-on, so the preview is not named here).
LIVE_PREVIEW_TOGGLED: list[Callable[[SkinmodesSettings, bpy.types.Context], None]] = []


def _toggle_preview(self: SkinmodesSettings, context: bpy.types.Context) -> None:
    for listener in list(LIVE_PREVIEW_TOGGLED):
        listener(self, context)


def blender_property(st: Setting) -> Any:
    """The bpy property for one core setting: same name, default, range and description.

    Only settings the simulation reads per frame are animatable; keying any
    other would promise an animation the simulation cannot follow.
    """
    kw: dict[str, Any] = {
        "name": st.label,
        "description": st.description,
        "override": OVERRIDE,
        "options": {"ANIMATABLE"} if st.animatable else set(),
        "default": st.default,
    }
    if st.name == "material_preset":
        kw["update"] = _apply_preset
    elif any(st.name in values for values in PRESETS.values()):
        kw["update"] = _mark_custom
    bounds = (("min", st.minimum), ("max", st.maximum), ("soft_min", st.soft_min), ("soft_max", st.soft_max))
    for key, value in bounds:
        if value is not None:
            kw[key] = int(value) if st.kind == "int" else value
    if st.kind == "enum":
        return EnumProperty(items=[(c.id, c.label, c.description) for c in st.choices], **kw)
    if st.kind == "bool":
        return BoolProperty(**kw)
    if st.kind == "int":
        return IntProperty(**kw)
    if st.kind == "float":
        return FloatProperty(precision=3, **kw)
    if st.subtype:
        kw["subtype"] = st.subtype
        kw["options"] = kw["options"] | PATH_OPTIONS
    return StringProperty(**kw)


# How a training pose finds its skin-on-skin contact (core.pipeline.ContactSpec).
CONTACT_ITEMS = [(c.id, c.label, c.description) for c in CONTACT_KINDS]


class SkinmodesPose(bpy.types.PropertyGroup):
    """A training pose of the pose-space modes: the rig pose at a frame, and its contact."""

    frame: IntProperty(
        name="Frame",
        description="The frame whose rig pose this is",
        min=-MAX_FRAME,
        max=MAX_FRAME,
        options=set(),
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    contact: EnumProperty(
        name="Contact",
        description="Where skin touches skin in this pose: those vertices do not jiggle there",
        items=CONTACT_ITEMS,
        default=CONTACT_AUTO,
        options=set(),
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    contact_group: StringProperty(
        name="Contact Group",
        description="Vertex group of the skin held still in this pose (weights above 0.5)",
        options=set(),
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    contact_mode: EnumProperty(
        name="Contact Mode",
        description="How this pose's contact acts: Stick holds the touching skin, One-Sided lets it part and slide",
        items=[(c.id, c.label, c.description) for c in POSE_CONTACT_MODES],
        default=CONTACT_STICK,
        options=set(),
        override=OVERRIDE,
    )  # type: ignore[valid-type]


class SkinmodesSettings(bpy.types.PropertyGroup):
    """Secondary-motion settings of one mesh object.

    The settings themselves (material, mask, subspace, simulation, output)
    are added from core/settings.py at the end of this module; the
    properties written here are view state and the operators' status.
    """

    if TYPE_CHECKING:  # the generated settings, for the type checker

        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

    # Frame range ----------------------------------------------------------
    # Not animatable: a keyed range would make the baked range depend on the current frame.
    use_scene_range: BoolProperty(
        name="Scene Range",
        description="Simulate the scene's frame range",
        default=True,
        options=set(),
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    frame_start: IntProperty(name="Start", default=1, min=-MAX_FRAME, max=MAX_FRAME, options=set(), override=OVERRIDE)  # type: ignore[valid-type]
    frame_end: IntProperty(name="End", default=250, min=-MAX_FRAME, max=MAX_FRAME, options=set(), override=OVERRIDE)  # type: ignore[valid-type]

    # Output -------------------------------------------------------------
    live_preview: BoolProperty(
        name="Live Preview",
        description="Show the secondary motion while scrubbing",
        default=False,
        options=set(),
        update=_toggle_preview,
    )  # type: ignore[valid-type]

    # Pose-space modes ----------------------------------------------------
    poses: CollectionProperty(
        type=SkinmodesPose,
        name="Poses",
        description="Training poses: frames whose contact shapes the modes near that pose",
        override={"LIBRARY_OVERRIDABLE", "USE_INSERTION"},
    )  # type: ignore[valid-type]

    # Inspect ------------------------------------------------------------
    inspect_mode: IntProperty(
        name="Mode", description="Skinning mode to show on the mesh", default=0, min=0, options=set(), override=OVERRIDE
    )  # type: ignore[valid-type]

    # Status, written by the operators ------------------------------------
    # Hidden (never shown as fields, never keyed: the panel shows them as text) and overridable, so a
    # library override keeps its bake through save and reopen, and Clear Bake works on it there.
    stat_tets: status(IntProperty, "Tets")  # type: ignore[valid-type]
    stat_vertices: status(IntProperty, "Simulation Vertices")  # type: ignore[valid-type]
    stat_modes: status(IntProperty, "Modes")  # type: ignore[valid-type]
    stat_clusters: status(IntProperty, "Clusters")  # type: ignore[valid-type]
    stat_seconds: status(FloatProperty, "Seconds")  # type: ignore[valid-type]
    stat_mesher: status(StringProperty, "Mesher")  # type: ignore[valid-type]
    stat_notes: status(StringProperty, "Mesher Notes", "What meshing did to which part, one per line")  # type: ignore[valid-type]
    stat_size: status(  # type: ignore[valid-type]
        FloatProperty,
        "Character Size",
        "Twice the largest distance of the simulated volume from its centre, m; offsets are given in % of it",
    )
    stat_physical_hz: status(FloatProperty, "Physical Wobble", "Slowest frequency with the physical material, Hz")  # type: ignore[valid-type]
    modes_key: status(StringProperty, "Modes Key", "Hash of the inputs the modes were computed for")  # type: ignore[valid-type]
    bake_kind: status(StringProperty, "Baked Output")  # type: ignore[valid-type]
    bake_file: status(StringProperty, "Baked File", subtype="FILE_PATH")  # type: ignore[valid-type]
    bake_start: status(IntProperty, "Baked Start")  # type: ignore[valid-type]
    bake_end: status(IntProperty, "Baked End")  # type: ignore[valid-type]
    bake_key: status(StringProperty, "Bake Key", "Hash of the inputs the bake was made from")  # type: ignore[valid-type]
    bake_action: status(StringProperty, "Bake Action", "Shape-key action created by the bake")  # type: ignore[valid-type]
    bake_warning: status(StringProperty, "Bake Warning", "The simulation guard's first warning, if any")  # type: ignore[valid-type]
    # What Clear Bake may delete: only files skinmodes wrote for this object (see bake.deletion).
    bake_files: status(StringProperty, "Baked Files", "Files skinmodes wrote for this object, one per line")  # type: ignore[valid-type]

    def frame_range(self, scene: bpy.types.Scene) -> tuple[int, int]:
        if self.use_scene_range:
            return scene.frame_start, scene.frame_end
        return self.frame_start, self.frame_end


def active_mesh(context: bpy.types.Context) -> bpy.types.Object:
    """The active object (operators' poll() has checked it is a skinned mesh)."""
    obj = context.active_object
    if obj is None:
        raise SkinmodesError("no active object; select the character's mesh")
    return obj


def scene_of(context: bpy.types.Context) -> bpy.types.Scene:
    scene = context.scene
    if scene is None:
        raise SkinmodesError("no scene in this context")
    return scene


def preferences() -> Any | None:
    """The add-on's preferences (preferences.SkinmodesPreferences), or None while it is not enabled."""
    entry = bpy.context.preferences.addons.get(ADDON)
    return None if entry is None else entry.preferences


def default_cache_dir() -> str:
    """The cache folder of objects whose own Cache Folder is empty: the preference, else //skinmodes_cache/."""
    return getattr(preferences(), "cache_dir", "") or FALLBACK_CACHE_DIR


def settings(obj: bpy.types.Object) -> SkinmodesSettings:
    """The skinmodes settings of ``obj`` (typed access to the dynamic ``Object.skinmodes``)."""
    return cast(SkinmodesSettings, getattr(obj, "skinmodes"))  # noqa: B009 - registered at run time


for _setting in SETTINGS:
    SkinmodesSettings.__annotations__[_setting.name] = blender_property(_setting)

CLASSES = (SkinmodesPose, SkinmodesSettings)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.skinmodes = PointerProperty(type=SkinmodesSettings, override=OVERRIDE)  # type: ignore[attr-defined, func-returns-value, arg-type]


def unregister() -> None:
    del bpy.types.Object.skinmodes  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
