"""Material presets through Blender's own preset system: the preset button in the Material panel's header.

The menu lists the presets the extension ships (presets/skinmodes/material/
beside this file, the one definition core/settings.py reads) and the user's
own, which "Add Preset" saves in Blender's user scripts folder
(scripts/presets/skinmodes/material/) where they can be shared as files.
The shipped folder is made visible to ``bpy.utils.preset_paths`` with
``bpy.utils.register_preset_path``; nothing is copied, so no user file is
ever written or overwritten on start-up.  Blender itself refuses to remove a
preset inside an extension, and to save one under a name that exists.
"""

from __future__ import annotations

import os

import bpy
from bl_operators.presets import AddPresetBase

from .core.settings import PRESET_SUBDIR, PRESETS

# The folder holding presets/<PRESET_SUBDIR>/ (Blender's layout for add-on presets).
PRESET_ROOT = os.path.dirname(os.path.abspath(__file__))
SHIPPED_FOLDER = os.path.join(PRESET_ROOT, "presets", *PRESET_SUBDIR.split("/"))
# What a material preset holds: which shipped preset it is (or CUSTOM) first, so the values that
# follow are the ones kept, then every value the shipped presets set.
MATERIAL_VALUES = ("material_preset", *next(iter(PRESETS.values())))


class SKINMODES_MT_material_presets(bpy.types.Menu):
    """Material presets: the shipped ones and your own"""

    bl_label = "Material Presets"
    preset_subdir = PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    preset_add_operator = "skinmodes.material_preset_add"

    def draw(self, context: bpy.types.Context) -> None:
        self.draw_preset(context)


class SKINMODES_OT_material_preset_add(AddPresetBase, bpy.types.Operator):  # type: ignore[misc]
    """Save the material settings of the active object as a preset, or remove one of yours"""

    bl_idname = "skinmodes.material_preset_add"
    bl_label = "Add Material Preset"
    preset_menu = SKINMODES_MT_material_presets.__name__
    preset_subdir = PRESET_SUBDIR
    preset_defines = ["settings = bpy.context.object.skinmodes"]
    preset_values = [f"settings.{name}" for name in MATERIAL_VALUES]

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.object
        return obj is not None and obj.type == "MESH"


CLASSES = (SKINMODES_MT_material_presets, SKINMODES_OT_material_preset_add)


def register() -> None:
    bpy.utils.register_preset_path(PRESET_ROOT)  # type: ignore[attr-defined]  # Blender 4.2+, not in the stubs
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    bpy.utils.unregister_preset_path(PRESET_ROOT)  # type: ignore[attr-defined]
