"""Where the motion goes on real characters with the defaults (issue 31).

Locomotion clips that then stop (a 1.5 s hold on the last pose), baked through the
Python API with every setting at its default, offsets ``baked - rig-only`` in % of
the character's size (the bake summary's; testkit/real_characters.py's harness):

- the appendage tip (a tail, else a hand) peaks at >= 1 % of the size: it follows through;
- vertices the rig puts on the ground (within 1 % of the size of that frame's lowest
  point) move <= 0.5 %: planted feet do not slide;
- plausibility as before: max <= 25 %, first frame <= 1 %, settled <= 1 % one second
  after the rig stops.

Before issue 31 the fox's tail tip moved 0.02 % and its paws 3-5 % (python -m tools.where_it_moves).
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from testkit import real_characters as rc

pytestmark = pytest.mark.slow

TIP_PCT = 1.0
GROUNDED_PCT = 0.5
MAX_PCT = 25.0
FIRST_PCT = 1.0
SETTLED_PCT = 1.0
# The robot is plates (its hard-surface share 85 %, core/model/rigid.py): by default each follows its bone
# (issue 37), so its finger tip moves by the round-off of the reconstruction only.
RIGID_TIP_PCT = 1e-3
RIGID = {"robot_run"}

# name -> (character of real_characters.py, its animations, the appendage tip's bone)
CASES = {
    "fox_walk": ("fox", ("Walk",), "b_Tail03_014"),
    "fox_run": ("fox", ("Run",), "b_Tail03_014"),
    "cesium_man": ("cesium_man_x100", None, "Node_15"),
    "robot_run": ("robot", ("Running",), "Middle2.L"),
    "trex": ("trex", None, "Tail5"),
    # The stag's tail is 4 % of the diagonal, 12 tets: no eigenmode reaches it, so its bones' own
    # weights join the subspace (core/subspace/skinning_modes.py).  Before: 0.0085 %.
    "stag": ("stag", None, "Tail3"),
    "creature": (None, None, "tail.3"),
}


def _load(bpy, name):
    base, actions, _ = CASES[name]
    if base is None:
        from testkit.creature import build_creature

        rc.reset_scene(bpy)
        obj, arm = build_creature(detail=24, frames=(1, 48))
        scene = bpy.context.scene
        fps = scene.render.fps / scene.render.fps_base
        scene.frame_end = 48 + math.ceil(rc.HOLD_SECONDS * fps)
        bpy.context.view_layer.objects.active = obj
        spec = rc.CharacterSpec(name="creature", role="demo", file="", mesh=obj.name, actions=(), tip_bone="tail.3")
        return rc.Loaded(spec, obj, arm, 1, 48, scene.frame_end, fps, 1.0)
    spec = rc.spec(base)
    return rc.load(bpy, spec if actions is None else replace(spec, name=name, actions=actions))


def _bone_vertices(obj, bone):
    """Render vertices whose largest weight is ``bone``'s (k,) bool; one pass at test time."""
    index = obj.vertex_groups[bone].index
    out = np.zeros(len(obj.data.vertices), dtype=bool)
    for v in obj.data.vertices:
        if v.groups:
            out[v.index] = max(v.groups, key=lambda g: g.weight).group == index
    return out


def _bake(bpy, addon, name, work):
    """(offsets % (frames, k), rig-only world positions (frames, k, 3), size, loaded, summary)."""
    api = addon.api
    read_pc2 = addon.core.io.pc2.read_pc2
    loaded = _load(bpy, name)
    scene, obj = bpy.context.scene, loaded.obj
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / f"{name}.blend"))
    summary = api.bake(obj, frames=(loaded.start, loaded.end), output="PC2")
    size = float(summary["character_size"])  # the one size the add-on reports offsets in
    samples, _, _ = read_pc2(summary["files"][0])
    cache = obj.modifiers["Skinmodes Cache"]
    frames = range(loaded.start, loaded.end + 1)
    rig = np.empty((len(frames), len(obj.data.vertices), 3))
    baked = np.empty_like(rig)
    cache.show_viewport = False
    try:
        for i, f in enumerate(frames):
            scene.frame_set(f)
            rig[i] = rc._world_positions(bpy, obj)
            M = rc._object_to_world(bpy, obj)
            baked[i] = samples[i].astype(np.float64) @ M[:3, :3].T + M[:3, 3]
    finally:
        cache.show_viewport = True
    return rc.offsets_percent(baked, rig, size), rig, size, loaded, summary


@pytest.fixture(scope="module")
def baked(addon, tmp_path_factory):
    import bpy

    done = {}

    def get(name):
        if name not in done:
            done[name] = _bake(bpy, addon, name, tmp_path_factory.mktemp(name))
        return done[name]

    return get


# Known short (issue 37, open): with the flesh calibrated part by part, thin parts that the rig swings answer
# 0.1-0.35 of a / (2 pi f)^2 at their tips where bodies answer 0.8-1.8: Cesium Man's hand reaches 0.44 % of the
# size on his walk and the T-Rex's tail tip 0.66 %, under the 1 % asked (before issue 37: 1.1 % and 2.3 %).
SHORT = {"cesium_man": "cesium hand 0.44 % < 1 %", "trex": "trex tail tip 0.66 % < 1 %"}
TIP_CASES = [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=f"issue 37: {SHORT[n]}")) if n in SHORT else n
    for n in CASES
]


@pytest.mark.parametrize("name", TIP_CASES)
def test_appendages_follow_through_and_planted_feet_stay(baked, name):
    pct, rig, size, loaded, summary = baked(name)
    z = rig[..., 2]
    grounded = (z - z.min(axis=1, keepdims=True)) <= 0.01 * size
    tip = _bone_vertices(loaded.obj, CASES[name][2])
    settle = loaded.stop + math.ceil(rc.SETTLE_SECONDS * loaded.fps) - loaded.start
    figures = (
        f"{name}: tip {pct[:, tip].max():.3g} %, grounded {pct[grounded].max():.3g} %, max {pct.max():.3g} %, "
        f"first {pct[:2].max():.3g} %, settled {pct[settle:].max():.3g} %; warnings {summary.get('warnings')}"
    )
    print(figures)
    assert grounded.any() and tip.any(), figures
    if name in RIGID:
        assert pct[:, tip].max() <= RIGID_TIP_PCT, figures
    else:
        assert pct[:, tip].max() >= TIP_PCT, figures
    assert pct[grounded].max() <= GROUNDED_PCT, figures
    assert pct.max() <= MAX_PCT, figures
    assert pct[:2].max() <= FIRST_PCT, figures
    assert pct[settle:].max() <= SETTLED_PCT, figures


def test_create_editable_mask_writes_the_automatic_mask(addon, creature):
    """The creature's tail (an appendage) is written as 1 (swings through), its belly as 0.5 (the skin swings)."""
    import bpy

    obj, _, _ = creature
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.skinmodes.create_mask() == {"FINISHED"}
    group = obj.vertex_groups[obj.skinmodes.leak_group]
    values = np.array([group.weight(v.index) for v in obj.data.vertices])
    tail = _bone_vertices(obj, "tail.3")
    body = _bone_vertices(obj, "body")
    assert np.median(values[tail]) > 0.9
    assert abs(np.median(values[body]) - 0.5) < 0.05
