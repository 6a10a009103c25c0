"""The add-on's preferences (Edit › Preferences › Add-ons › Skinmodes): a default cache folder and a thread count."""

from __future__ import annotations

from typing import Any

import bpy
from bpy.props import IntProperty, StringProperty

from . import threads
from .props import ADDON, FALLBACK_CACHE_DIR, PATH_OPTIONS, preferences


def _apply_threads(self: SkinmodesPreferences, _context: bpy.types.Context) -> None:
    threads.limit_threads(self.threads)


class SkinmodesPreferences(bpy.types.AddonPreferences):
    """Settings of the add-on itself, kept with Blender's preferences rather than in any .blend."""

    bl_idname = ADDON

    cache_dir: StringProperty(  # type: ignore[valid-type]
        name="Default Cache Folder",
        description=(
            "Where point caches and subspace caches go for objects whose own Cache Folder is empty "
            "(// is the .blend's folder)"
        ),
        default=FALLBACK_CACHE_DIR,
        subtype="DIR_PATH",
        options=PATH_OPTIONS,
    )
    threads: IntProperty(  # type: ignore[valid-type]
        name="Threads",
        description=(
            "Most threads the OpenBLAS libraries of numpy and scipy may use in this Blender process, for "
            "other add-ons' and scripts' numpy work (0: their own default, every core; never more than the "
            "machine's cores). Skinmodes itself always prepares and simulates on one BLAS thread, so a bake "
            "is the same bits on every machine. Applied at once and at start-up; Blender's own threads are "
            "set under System"
        ),
        default=0,
        min=0,
        max=1024,
        soft_max=64,
        update=_apply_threads,
    )

    def draw(self, _context: bpy.types.Context) -> None:
        draw_rows(self.layout, self)


def draw_rows(layout: bpy.types.UILayout, prefs: SkinmodesPreferences) -> None:
    """The two settings, and which libraries Threads reaches on this machine (or that it reaches none)."""
    col = layout.column()
    col.prop(prefs, "cache_dir")
    col.prop(prefs, "threads")
    found = threads.blas_libraries()
    if not found:
        col.label(text="No OpenBLAS found under numpy or scipy: Threads has no effect here", icon="INFO")
    for lib in found:
        col.label(text=f"{lib.owner}: {lib.path.name}, {lib.threads} threads", icon="INFO")


def apply(prefs: Any | None = None) -> None:
    """Put the stored preferences into effect (at start-up the thread count is only in the saved preferences)."""
    prefs = prefs if prefs is not None else preferences()
    if prefs is not None and prefs.threads > 0:
        threads.limit_threads(prefs.threads)


CLASSES = (SkinmodesPreferences,)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    apply()


def unregister() -> None:
    threads.limit_threads(0)  # the counts they had before: disabling the add-on leaves no trace
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
