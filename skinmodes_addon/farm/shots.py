"""The shots of a farm job and their characters: each object's content hash, read in Blender without preparing.

Two objects are one character when the model cache would give them one
file: the same :func:`core.pipeline.character_key` (rest mesh, weights,
painted masks, subspace and material settings), read exactly as a bake
reads it (:func:`session.request.read_request`).
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy

from ..character import armature_modifier
from ..core.errors import SkinmodesError
from ..core.pipeline import character_key
from ..object_rig import set_up_for_secondary_motion
from ..props import scene_of
from ..session.request import read_request
from .template import BakeTask


def shot_files(paths: list[str]) -> list[Path]:
    """The .blend files named, folders replaced by the .blend files in them (sorted; not their subfolders)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(os.path.abspath(os.path.expanduser(raw)))
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix == ".blend" and p.is_file())
        elif path.is_file() and path.suffix == ".blend":
            found.append(path)
        else:
            raise SkinmodesError(f"{raw} is neither a .blend file nor a folder of them")
    if not found:
        raise SkinmodesError(f"no .blend files in {', '.join(paths)}")
    return list(dict.fromkeys(found))  # a file named twice is one shot


def skinned_meshes() -> list[str]:
    """The open file's own meshes with an Armature modifier that has its armature, and its meshes without an
    armature set up to jiggle (``object_rig.set_up_for_secondary_motion``): the objects to bake."""
    names: list[str] = []
    for obj in bpy.data.objects:
        mod = armature_modifier(obj) if obj.type == "MESH" and obj.library is None else None
        if (mod is not None and mod.object is not None) or set_up_for_secondary_motion(obj):
            names.append(obj.name)
    return sorted(names)


def open_shot(path: Path) -> None:
    """Open the .blend ``path``, or say in one line that it cannot be read (Blender's own error is a
    RuntimeError that starts "Error: Cannot read file")."""
    try:
        bpy.ops.wm.open_mainfile(filepath=str(path))
    except RuntimeError as exc:
        why = str(exc).strip().removeprefix("Error:").strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise SkinmodesError(f"{path.name} cannot be opened: it is damaged or not a .blend file ({why})") from exc


def read_shot(path: Path, wanted: list[str] | None, frames: tuple[int, int] | None) -> list[BakeTask]:
    """Open ``path`` and return a task per object to bake: those of ``wanted`` it has, else its skinned meshes."""
    open_shot(path)
    names = [n for n in wanted if n in bpy.data.objects] if wanted else skinned_meshes()
    if not names and not wanted:
        raise SkinmodesError(
            f"{path.name} has no mesh with an Armature modifier and no object set up to jiggle; name the objects "
            "with --object"
        )
    scene = scene_of(bpy.context)
    tasks = []
    for name in names:
        try:
            request = read_request(bpy.data.objects[name], scene, frames)
        except SkinmodesError as exc:
            raise SkinmodesError(f"{path.name}: {exc}") from exc
        key = character_key(request.character, request.subspace, request.material)
        tasks.append(BakeTask(shot=str(path), object=name, character=key))
    return tasks


def read_shots(
    paths: list[str], wanted: list[str] | None, frames: tuple[int, int] | None, skipped: list[str] | None = None
) -> list[BakeTask]:
    """Every task of every shot; refuses an object name that no shot has (a typo would bake nothing).

    skipped: None to refuse the whole job at the first shot that cannot be read; a list to go on without
    it (a farm job: one damaged shot must not stop a folder of them), one line per shot appended, naming
    the shot and why.  Refused either way when no shot is left.
    """
    tasks: list[BakeTask] = []
    for path in shot_files(paths):
        try:
            tasks += read_shot(path, wanted, frames)
        except SkinmodesError as exc:
            if skipped is None:
                raise
            skipped.append(f"skipped {exc}")
    missing = sorted(set(wanted or ()) - {t.object for t in tasks})
    if missing and (tasks or not skipped):  # with every shot skipped, why they were is the line
        raise SkinmodesError(f"no shot has an object named {', '.join(repr(n) for n in missing)}")
    if not tasks:
        why = f": {skipped[0].removeprefix('skipped ')}" if skipped else ""
        raise SkinmodesError(f"none of the shots has an object to bake{why}")
    return tasks
