"""The names of an object's bake files: a safe, readable stem plus a short hash of the object's identity.

One point cache per object and .blend: its name is the object's name made
safe plus a short hash of its full name, library and .blend
(:func:`cache_stem`), in the folder the settings name
(:func:`session.cache_paths.cache_folder`).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path
from typing import cast

import bpy

from ..core.errors import SkinmodesError
from ..props import settings
from ..session.cache_paths import cache_folder, names_fixed_folder, unsaved_folder

# Hex digits of the identity hash in file names: 40 bits, so two objects' names
# meet by chance about once in a trillion pairs.
STEM_HASH = 10


# Characters of the readable part of a file name (Blender names have up to 63 bytes).
STEM_NAME = 40


def safe_name(name: str) -> str:
    """``name`` as a portable file-name part: ASCII letters, digits and ``_.-``.

    Accents are dropped (``Körper`` → ``Korper``), anything else becomes
    ``_``; never empty, never hidden, never a path.  Not unique on its own
    (``Body L`` and ``Body_L`` agree): :func:`cache_stem` adds the identity.
    """
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_name).strip("._-")[:STEM_NAME].strip("._-") or "object"


def object_identity(obj: bpy.types.Object) -> str:
    """What tells one object from every other: its full name (with its library's) and the library's file."""
    library = obj.library.filepath if obj.library is not None else ""
    return f"{obj.name_full}\n{library}"


UNSAVED = "unsaved "


def unsaved_identity() -> str:
    """This process's unsaved file, as :func:`blend_identity` names it."""
    return f"{UNSAVED}{unsaved_folder()}"


def blend_identity(folder: Path) -> str:
    """The open .blend as seen from ``folder``: its path relative to it (:func:`unsaved_identity` while unsaved).

    Relative, so moving a project (the .blend and ``//`` caches together)
    keeps it; two .blend files, in one folder or in two that share an
    absolute cache folder, never agree.
    """
    if not bpy.data.filepath:
        # Unsaved: this process's own folder tells it from another unsaved session baking into the same
        # absolute Cache Folder (two of them would otherwise share the names of their objects' files).
        return unsaved_identity()
    blend = os.path.abspath(bpy.data.filepath)
    try:
        relative = os.path.relpath(blend, folder)
    except ValueError:  # another drive (Windows)
        relative = blend
    return os.path.normcase(relative).replace(os.sep, "/")


def cache_stem(obj: bpy.types.Object, salt: int = 0) -> str:
    """The stem of the object's file names: its name made safe, a dash, a short hash of its identity.

    The identity is the object's (:func:`object_identity`) and the .blend's
    (:func:`blend_identity`), so shots in one folder holding the same
    character never share a file; ``salt`` > 0 gives the other names
    :func:`pc2_path` falls back to when another object plays this one.
    """
    folder = cache_folder(settings(obj))
    identity = f"{object_identity(obj)}\n{blend_identity(folder)}" + (f"\n{salt}" if salt else "")
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:STEM_HASH]
    return f"{safe_name(obj.name)}-{digest}"


def blend_relative(path: Path) -> str:
    """``path`` as Blender stores file paths: relative to the .blend (``//``) where it can be."""
    if not bpy.data.filepath:  # nothing to be relative to (bpy.path.relpath would take the working directory)
        return str(path)
    try:
        return bpy.path.relpath(str(path))
    except ValueError:  # another drive (Windows): only the absolute path reaches it
        return str(path)


def pc2_path(obj: bpy.types.Object, keep_own: bool = False) -> tuple[str, Path]:
    """The point cache's path as the modifier stores it (``//``-relative) and its absolute path.

    Always ``<cache folder>/<cache_stem>.pc2``: the name holds no separator,
    so the file never leaves the folder the settings name.  A name another
    object of this file plays (a renamed object's old name, now taken by a
    new one) is skipped for the next salted one; ``keep_own`` skips the
    object's own file too (a test bake that must leave the saved one alone).
    """
    if not bpy.data.filepath and not names_fixed_folder(settings(obj)):
        raise SkinmodesError(
            "save the .blend first: the point cache is written next to it (File > Save), "
            "or set an absolute Cache Folder"
        )
    folder = cache_folder(settings(obj))
    for salt in range(1000):
        path = folder / f"{cache_stem(obj, salt)}.pc2"
        if not user_of(obj, normalised(str(path)), include_self=keep_own):
            break
    return blend_relative(path), path


def resolved(stored: str, obj: bpy.types.Object | None = None) -> str:
    """A stored (``//`` or absolute) path as a comparable absolute path."""
    library = obj.library if obj is not None else None
    return os.path.normcase(os.path.normpath(bpy.path.abspath(stored, library=library)))


def normalised(path: str) -> str:
    return os.path.normcase(os.path.normpath(path))


def user_of(obj: bpy.types.Object, target: str, include_self: bool = False) -> str:
    """The name of an object (other than ``obj``, unless ``include_self``) that plays or claims ``target``."""
    for other in bpy.data.objects:
        if (other == obj and not include_self) or other.type != "MESH":
            continue
        caches = [cast(bpy.types.MeshCacheModifier, m) for m in other.modifiers if m.type == "MESH_CACHE"]
        paths = [m.filepath for m in caches if m.filepath]
        paths.append(settings(other).bake_file)
        if any(p and resolved(p, other) == target for p in paths):
            return other.name
    return ""
