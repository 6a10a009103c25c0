"""Read real characters out of Blender into core arrays, so the core can be measured without Blender.

For each character of :data:`DUMPS` (the characters of ``testkit/real_characters.py``
with their locomotion clips, and the demo creature) :func:`dump` writes one ``.npz``
holding what the add-on hands the core: the :class:`core.pipeline.CharacterInput`
fields, the bone parents, the LBS parameters of every frame of the clip and its
hold (``p``: (frames, 12 b)), the frame range, fps and the frame the rig stops.
``testkit/where_it_moves.py`` reads them.  ``tools/rig_dump.py`` is its command line.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc
from testkit.build_extension import ADDON_MODULE

# name -> (character of real_characters.py, glTF animations of the clip); None: the demo creature.
DUMPS: dict[str, tuple[str, tuple[str, ...]] | None] = {
    "fox_walk": ("fox", ("Walk",)),
    "fox_run": ("fox", ("Run",)),
    "cesium_man": ("cesium_man_x100", rc._cesium_man_actions()),
    "robot_walk": ("robot", ("Walking",)),
    "robot_run": ("robot", ("Running",)),
    "robot_hand": ("robot_hand", ("Wave",)),
    "stag": ("stag", ("AnimalArmature|Gallop",)),
    "trex": ("trex", ("Armature|TRex_Run",)),
    "husky": ("husky", ("AnimalArmature|Gallop",)),
    "husky_walk": ("husky", ("AnimalArmature|Walk",)),
    "frog": ("frog", ("FrogArmature|Frog_Jump",)),
    "bee": ("bee", ("MonsterArmature|Flying",)),
    "dolphin": ("dolphin", ("Armature|Swim",)),
    "platformer": ("platformer", ("CharacterArmature|Run",)),
    "platformer_jump": ("platformer", ("CharacterArmature|Jump",)),
    "creature": None,
}


# The optional CharacterInput fields stored as ``input_<name>`` when the add-on set them.
OPTIONAL = ("stiffness", "density", "leak", "planted", "bone_parents", "rigid")


def character_input(d: Any) -> Any:
    """The :class:`core.pipeline.CharacterInput` a dump (an opened ``.npz``) holds, as the add-on built it."""
    from core.pipeline import CharacterInput

    extra = {k: d[f"input_{k}"] for k in OPTIONAL if f"input_{k}" in d}
    return CharacterInput(
        rest=d["rest"],
        faces=d["faces"],
        bone_weights=d["bone_weights"],
        bone_heads=d["bone_heads"],
        bone_tails=d["bone_tails"],
        **extra,
    )


def _loaded(bpy: Any, name: str) -> rc.Loaded:
    entry = DUMPS[name]
    if entry is None:
        from testkit import creature  # imports bpy

        rc.reset_scene(bpy)
        obj, arm = creature.build_creature(detail=24, frames=(1, 48))
        scene = bpy.context.scene
        fps = scene.render.fps / scene.render.fps_base
        end = 48 + math.ceil(rc.HOLD_SECONDS * fps)
        scene.frame_end = end
        for o in bpy.context.view_layer.objects:
            o.select_set(False)
        bpy.context.view_layer.objects.active = obj
        spec = rc.CharacterSpec(name="creature", role="demo", file="", mesh=obj.name, actions=(), tip_bone="tail.3")
        return rc.Loaded(spec, obj, arm, 1, 48, end, fps, 1.0)
    base, actions = entry
    spec = rc.spec(base)
    from dataclasses import replace

    return rc.load(bpy, replace(spec, name=name, actions=actions))


def dump(bpy: Any, name: str, path: Path) -> None:
    """Write character ``name``'s core input and per-frame rig parameters to ``path`` (.npz)."""
    character = importlib.import_module(ADDON_MODULE + ".character")
    api = importlib.import_module(ADDON_MODULE + ".api")
    loaded = _loaded(bpy, name)
    scene = bpy.context.scene
    scene.frame_set(loaded.start)
    inp, binding = character.read_character(loaded.obj, api.settings(loaded.obj), scene, loaded.start)
    bones = loaded.armature.data.bones
    index = {bname: i for i, bname in enumerate(binding.bones)}
    parents = []
    for bname in binding.bones:
        # The nearest deforming ancestor: a chain's root has -1.
        b = bones[bname].parent
        while b is not None and b.name not in index:
            b = b.parent
        parents.append(-1 if b is None else index[b.name])
    if binding.root:
        parents.append(-1)
    frames = range(loaded.start, loaded.end + 1)
    ps = []
    for f in frames:
        scene.frame_set(f)
        p, _ = character.sample_rig(loaded.obj, binding, bpy.context.evaluated_depsgraph_get())
        ps.append(p)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        rest=inp.rest,
        faces=inp.faces,
        bone_weights=inp.bone_weights,
        bone_heads=inp.bone_heads,
        bone_tails=inp.bone_tails,
        parents=np.asarray(parents, dtype=np.int64),
        bone_names=np.asarray(list(binding.bones) + ([""] if binding.root else [])),
        p=np.asarray(ps),
        start=loaded.start,
        stop=loaded.stop,
        end=loaded.end,
        fps=loaded.fps,
        # The masks the add-on read (planted feet, painted groups), so a core run sees what a bake sees.
        **{f"input_{k}": np.asarray(v) for k in OPTIONAL if (v := getattr(inp, k)) is not None},
    )
