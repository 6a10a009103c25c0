"""Material presets through Blender's own preset system: the preset button in the Material panel's header.

The menu lists the presets the extension ships (presets/skinmodes/material/
beside this file: core.settings.PRESETS written as Blender preset files, see
core.settings.preset_file_text) and the user's own, which "Add Preset" saves in Blender's user scripts folder
(scripts/presets/skinmodes/material/) where they can be shared as files.
A preset is applied by reading its values (never running it) and checking
them all first: a file with a value out of range or an unknown setting is
refused in one line and changes nothing, where Blender's own preset
operator would have clamped it silently.  A preset of yours named like a
shipped one is listed once, and yours is the one applied.
The shipped folder is made visible to ``bpy.utils.preset_paths`` with
``bpy.utils.register_preset_path``; nothing is copied, so no user file is
ever written or overwritten on start-up.  Blender itself refuses to remove a
preset inside an extension, and to save one under a name that exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy
from bl_operators.presets import AddPresetBase
from bpy.props import StringProperty

from .core.errors import SkinmodesError
from .core.settings import PRESET_LABELS, PRESET_SUBDIR, PRESETS, read_preset, validate_all

# The folder holding presets/<PRESET_SUBDIR>/ (Blender's layout for add-on presets).
PRESET_ROOT = os.path.dirname(os.path.abspath(__file__))
SHIPPED_FOLDER = os.path.join(PRESET_ROOT, "presets", *PRESET_SUBDIR.split("/"))
# id -> the shipped preset's file, named by its label (its text: core.settings.preset_file_text).
SHIPPED_FILES = {pid: Path(SHIPPED_FOLDER) / f"{label}.py" for pid, label in PRESET_LABELS.items()}
# What a material preset holds: which shipped preset it is (or CUSTOM) first, so the values that
# follow are the ones kept, then every value the shipped presets set.
MATERIAL_VALUES = ("material_preset", *next(iter(PRESETS.values())))


class SKINMODES_MT_material_presets(bpy.types.Menu):
    """Material presets: the shipped ones and your own"""

    bl_label = "Material Presets"
    preset_subdir = PRESET_SUBDIR
    preset_operator = "skinmodes.material_preset_apply"
    preset_add_operator = "skinmodes.material_preset_add"

    def draw(self, _context: bpy.types.Context) -> None:
        """Blender's preset list (Menu.path_menu), each name once: the user's folders before the shipped one."""
        paths = bpy.utils.preset_paths(self.preset_subdir)
        shipped = [p for p in paths if os.path.normpath(p) == os.path.normpath(SHIPPED_FOLDER)]
        seen: set[str] = set()

        def first(name: str) -> bool:
            if name.lower() in seen:
                return False
            seen.add(name.lower())
            return True

        self.path_menu(
            [p for p in paths if p not in shipped] + shipped,
            self.preset_operator,
            filter_ext=lambda ext: ext.lower() == ".py",
            filter_path=first,
            add_operator=self.preset_add_operator,
            display_name=lambda name: bpy.path.display_name(name, title_case=False),
        )


class SKINMODES_OT_material_preset_apply(bpy.types.Operator):
    """Apply this material preset to the active object (its values are checked first)"""

    bl_idname = "skinmodes.material_preset_apply"
    bl_label = "Apply Material Preset"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(subtype="FILE_PATH", options={"SKIP_SAVE", "HIDDEN"})  # type: ignore[valid-type]
    menu_idname: StringProperty(options={"SKIP_SAVE", "HIDDEN"})  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.object
        return obj is not None and obj.type == "MESH"

    def execute(self, context: bpy.types.Context) -> set[str]:  # type: ignore[override]
        name = bpy.path.display_name(os.path.basename(self.filepath), title_case=False)
        try:
            values = read_preset(Path(self.filepath))
            checked = validate_all(values)
        except (SkinmodesError, OSError, SyntaxError, ValueError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.report({"ERROR"}, f"preset '{name}' was not applied ({why}); fix or remove {self.filepath}")
            return {"CANCELLED"}
        s = context.object.skinmodes  # type: ignore[union-attr]
        for key in values:  # in the file's order: the preset's id first, then its values (see MATERIAL_VALUES)
            setattr(s, key, checked[key])
        menu = getattr(bpy.types, self.menu_idname, None)
        if menu is not None:
            menu.bl_label = name  # as Blender's own preset operator does: the menu shows the last choice
        return {"FINISHED"}


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


CLASSES = (SKINMODES_MT_material_presets, SKINMODES_OT_material_preset_apply, SKINMODES_OT_material_preset_add)


def register() -> None:
    bpy.utils.register_preset_path(PRESET_ROOT)  # type: ignore[attr-defined]  # Blender 4.2+, not in the stubs
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    bpy.utils.unregister_preset_path(PRESET_ROOT)  # type: ignore[attr-defined]
