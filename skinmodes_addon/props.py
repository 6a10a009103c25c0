"""Per-object settings, saved with the .blend (and overridable in library overrides)."""

from __future__ import annotations

from typing import cast

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from .core.errors import SkinmodesError
from .core.materials import PRESETS

OVERRIDE = {"LIBRARY_OVERRIDABLE"}
# Blender 4.5+ asks path properties to declare that they accept "//" paths.
PATH_OPTIONS = {"PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else set()

PRESET_ITEMS = [
    ("JELLY", "Jelly", "Very soft and wobbly (E = 2 kPa)"),
    ("FAT", "Fat", "Soft tissue: bellies, cheeks (E = 10 kPa)"),
    ("MUSCLE", "Muscle", "Firmer flesh (E = 50 kPa)"),
    ("RUBBER", "Rubber", "Stiff, quick vibrations (E = 1 MPa)"),
    ("CUSTOM", "Custom", "Your own Young's modulus, Poisson ratio and density"),
]


def _apply_preset(self: SkinmodesSettings, _context: bpy.types.Context) -> None:
    values = PRESETS.get(self.material_preset)
    if values is None:
        return
    self["youngs_modulus"] = values["youngs_modulus"]
    self["poisson_ratio"] = values["poisson_ratio"]
    self["density"] = values["density"]


def _mark_custom(self: SkinmodesSettings, _context: bpy.types.Context) -> None:
    # Editing a value by hand leaves the preset; the enum then reads "Custom".
    preset = PRESETS.get(self.material_preset)
    if preset and any(abs(getattr(self, k) - v) > 1e-9 * max(abs(v), 1.0) for k, v in preset.items()):
        self["material_preset"] = [i[0] for i in PRESET_ITEMS].index("CUSTOM")


def _toggle_preview(self: SkinmodesSettings, context: bpy.types.Context) -> None:
    from . import preview  # late import: preview imports this module

    preview.on_toggle(self, context)


class SkinmodesSettings(bpy.types.PropertyGroup):
    """Secondary-motion settings of one mesh object."""

    # Material -----------------------------------------------------------
    material_preset: EnumProperty(
        name="Preset", items=PRESET_ITEMS, default="FAT", update=_apply_preset, override=OVERRIDE
    )  # type: ignore[valid-type]
    youngs_modulus: FloatProperty(
        name="Stiffness",
        description="Young's modulus in pascals: higher is stiffer and jiggles faster",
        default=PRESETS["FAT"]["youngs_modulus"],
        min=10.0,
        max=1.0e9,
        soft_min=100.0,
        soft_max=1.0e7,
        precision=0,
        update=_mark_custom,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    poisson_ratio: FloatProperty(
        name="Poisson Ratio",
        description="Volume preservation: 0 is ARAP (fastest), 0.45 nearly incompressible",
        default=PRESETS["FAT"]["poisson_ratio"],
        min=0.0,
        max=0.49,
        update=_mark_custom,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    density: FloatProperty(
        name="Density",
        description="Mass density in kg/m³ (water is 1000)",
        default=PRESETS["FAT"]["density"],
        min=1.0,
        max=1.0e5,
        update=_mark_custom,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    stiffness_group: StringProperty(
        name="Stiffness Mask",
        description="Vertex group scaling stiffness: 0 is 10% as stiff, 1 is 100%",
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    density_group: StringProperty(
        name="Density Mask",
        description="Vertex group scaling density: 0 is half as dense, 1 is 1.5 times",
        override=OVERRIDE,
    )  # type: ignore[valid-type]

    # Momentum-leak mask -------------------------------------------------
    leak_mode: EnumProperty(
        name="Mask",
        items=[
            ("AUTO", "Automatic", "The skin swings freely, the core follows the rig"),
            ("GROUP", "Vertex Group", "Paint where the flesh swings (1) and where it follows the rig (0)"),
        ],
        default="AUTO",
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    leak_group: StringProperty(name="Leak Group", default="skinmodes_leak", override=OVERRIDE)  # type: ignore[valid-type]

    # Subspace -----------------------------------------------------------
    modes: IntProperty(
        name="Modes",
        description="Skinning eigenmodes: more gives richer, slower motion",
        default=16,
        min=1,
        max=128,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    clusters: IntProperty(
        name="Clusters",
        description="Rotation clusters: more gives finer non-linear detail",
        default=100,
        min=1,
        max=5000,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    target_tets: IntProperty(
        name="Tet Resolution",
        description="Target number of tetrahedra of the simulation mesh",
        default=15000,
        min=500,
        max=2_000_000,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    tet_method: EnumProperty(
        name="Mesher",
        items=[
            ("AUTO", "Automatic", "fTetWild (wildmeshing) where available, else the built-in lattice"),
            ("WILDMESHING", "fTetWild", "Robust tetrahedralisation that follows the surface"),
            ("LATTICE", "Lattice", "Built-in lattice inside the surface; works on any input"),
        ],
        default="AUTO",
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    loose_parts: EnumProperty(
        name="Loose Parts",
        items=[
            ("OWN_VOLUME", "Simulate", "Loose parts outside the body get a volume of their own"),
            ("SKIP", "Skip", "Loose parts outside the body only follow the rig"),
        ],
        default="OWN_VOLUME",
        override=OVERRIDE,
    )  # type: ignore[valid-type]

    # Simulation ---------------------------------------------------------
    substeps: IntProperty(
        name="Sub-steps", description="Solver steps per frame", default=2, min=1, max=32, override=OVERRIDE
    )  # type: ignore[valid-type]
    iterations: IntProperty(
        name="Iterations",
        description="Local-global iterations per step (cap)",
        default=10,
        min=1,
        max=200,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    damping: FloatProperty(
        name="Extra Damping",
        description="Damping of the secondary motion, per second",
        default=0.0,
        min=0.0,
        max=1000.0,
        soft_max=20.0,
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    use_scene_range: BoolProperty(
        name="Scene Range", description="Simulate the scene's frame range", default=True, override=OVERRIDE
    )  # type: ignore[valid-type]
    frame_start: IntProperty(name="Start", default=1, override=OVERRIDE)  # type: ignore[valid-type]
    frame_end: IntProperty(name="End", default=250, override=OVERRIDE)  # type: ignore[valid-type]

    # Output -------------------------------------------------------------
    live_preview: BoolProperty(
        name="Live Preview",
        description="Show the secondary motion while scrubbing",
        default=False,
        update=_toggle_preview,
    )  # type: ignore[valid-type]
    output: EnumProperty(
        name="Output",
        items=[
            ("PC2", "Point Cache", "A .pc2 file next to the .blend and a Mesh Cache modifier; renders anywhere"),
            ("SHAPE_KEYS", "Shape Keys", "One shape key per frame under the armature; for FBX and glTF export"),
        ],
        default="PC2",
        override=OVERRIDE,
    )  # type: ignore[valid-type]
    cache_dir: StringProperty(
        name="Cache Folder",
        description="Where point caches and subspace caches go",
        default="//skinmodes_cache/",
        subtype="DIR_PATH",
        options=PATH_OPTIONS,
        override=OVERRIDE,
    )  # type: ignore[valid-type]

    # Inspect ------------------------------------------------------------
    inspect_mode: IntProperty(
        name="Mode", description="Skinning mode to show on the mesh", default=0, min=0, override=OVERRIDE
    )  # type: ignore[valid-type]

    # Status, written by the operators ------------------------------------
    stat_tets: IntProperty(name="Tets", default=0)  # type: ignore[valid-type]
    stat_vertices: IntProperty(name="Simulation Vertices", default=0)  # type: ignore[valid-type]
    stat_modes: IntProperty(name="Modes", default=0)  # type: ignore[valid-type]
    stat_clusters: IntProperty(name="Clusters", default=0)  # type: ignore[valid-type]
    stat_seconds: FloatProperty(name="Seconds", default=0.0)  # type: ignore[valid-type]
    stat_mesher: StringProperty(name="Mesher")  # type: ignore[valid-type]
    modes_key: StringProperty(name="Modes Key", description="Hash of the inputs the modes were computed for")  # type: ignore[valid-type]
    bake_kind: StringProperty(name="Baked Output")  # type: ignore[valid-type]
    bake_file: StringProperty(name="Baked File", subtype="FILE_PATH", options=PATH_OPTIONS)  # type: ignore[valid-type]
    bake_start: IntProperty(name="Baked Start")  # type: ignore[valid-type]
    bake_end: IntProperty(name="Baked End")  # type: ignore[valid-type]
    bake_key: StringProperty(name="Bake Key", description="Hash of the inputs the bake was made from")  # type: ignore[valid-type]
    bake_action: StringProperty(name="Bake Action", description="Shape-key action created by the bake")  # type: ignore[valid-type]

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


def settings(obj: bpy.types.Object) -> SkinmodesSettings:
    """The skinmodes settings of ``obj`` (typed access to the dynamic ``Object.skinmodes``)."""
    return cast(SkinmodesSettings, getattr(obj, "skinmodes"))  # noqa: B009 - registered at run time


CLASSES = (SkinmodesSettings,)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.skinmodes = PointerProperty(type=SkinmodesSettings, override=OVERRIDE)  # type: ignore[attr-defined, func-returns-value, arg-type]


def unregister() -> None:
    del bpy.types.Object.skinmodes  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
