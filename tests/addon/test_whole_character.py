"""A character of several meshes on one armature is simulated as one body (issue 38).

The platformer character of ``tests/assets/characters/Character.glb`` (Quaternius, CC0) comes as four
meshes on one armature: Arms, Body, Ears and Head, each skinned, the head and each ear bound to one bone.
Before issue 38 each mesh was simulated alone: the head followed its bone rigidly (0.0 %), one ear jiggled
(2.85 %) while its mirror twin was "far from the body" and never moved, and nothing tied the parts' jiggle
together.  Here every mesh is baked with the defaults (Whole Character on) and measured against its
rig-only motion, in % of the character's size (the bake summary's, the body's):

- every mesh bakes its own cache of its own vertex count, and all four report the same body
  (the same size, the same max offset: one simulation);
- the head moves (>= 0.1 %; alone it is a one-bone piece that follows its bone exactly);
- the two ears move alike (their peaks within a factor 1.5: mirrored parts behave alike);
- the body bakes the same whichever mesh is baked first (bit for bit: the same input in the same order).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from testkit import real_characters as rc
from testkit.dressed import TORSO, dominant_groups, dress
from tests.addon.helpers import run_cli

pytestmark = pytest.mark.slow

MESHES = ("Arms", "Body", "Ears", "Head")
HEAD_PCT = 0.1
EARS_RATIO = 1.5


def _load(bpy):
    spec = replace(rc.spec("platformer"), join_pieces=False, scale=1.0)
    loaded = rc.load(bpy, spec)
    meshes = {n: bpy.data.objects[n] for n in MESHES}
    for o in meshes.values():
        assert any(m.type == "ARMATURE" and m.object == loaded.armature for m in o.modifiers), o.name
    return loaded, meshes


def _bake_all(bpy, addon, work, order):
    """Per mesh: (offsets (frames, k, 3) world, rest-pose world positions (k, 3), summary, rig-only world
    positions (frames, k, 3))."""
    loaded, meshes = _load(bpy)
    scene = bpy.context.scene
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "platformer.blend"))
    summaries = {n: addon.api.bake(meshes[n], frames=(loaded.start, loaded.end), output="PC2") for n in order}
    # Where the meshes meet: their positions in the armature's rest pose.
    loaded.armature.data.pose_position = "REST"
    scene.frame_set(loaded.start)
    rest = {n: rc._world_positions(bpy, o) for n, o in meshes.items()}
    loaded.armature.data.pose_position = "POSE"
    read_pc2 = addon.core.io.pc2.read_pc2
    frames = range(loaded.start, loaded.end + 1)
    out = {}
    for n, obj in meshes.items():
        samples, _, _ = read_pc2(summaries[n]["files"][0])
        cache = obj.modifiers["Skinmodes Cache"]
        k = len(obj.data.vertices)
        rig, baked = np.empty((len(frames), k, 3)), np.empty((len(frames), k, 3))
        cache.show_viewport = False
        try:
            for i, f in enumerate(frames):
                scene.frame_set(f)
                rig[i] = rc._world_positions(bpy, obj)
                M = rc._object_to_world(bpy, obj)
                baked[i] = samples[i].astype(np.float64) @ M[:3, :3].T + M[:3, 3]
        finally:
            cache.show_viewport = True
        out[n] = (baked - rig, rest[n], summaries[n], rig)
    return out


@pytest.fixture(scope="module")
def baked(addon, tmp_path_factory):
    import bpy

    return _bake_all(bpy, addon, tmp_path_factory.mktemp("whole"), MESHES)


def test_every_mesh_bakes_its_own_cache_of_one_body(baked):
    sizes = {n: s["character_size"] for n, (_, _, s, _) in baked.items()}
    maxima = {n: s["max_offset_percent"] for n, (_, _, s, _) in baked.items()}
    assert len(set(sizes.values())) == 1, sizes
    assert len(set(maxima.values())) == 1, maxima
    files = {s["files"][0] for _, _, s, _ in baked.values()}
    assert len(files) == len(MESHES)
    # The summary says which body: the head's names the other three.
    head = baked["Head"][2]["messages"]
    assert "simulated with 'Arms', 'Body', 'Ears' as one body (Whole Character)" in head, head


def test_preserve_volume_and_a_second_armature_modifier_are_said(addon):
    import bpy

    _load(bpy)
    head = bpy.data.objects["Head"]
    head.modifiers[0].use_deform_preserve_volume = True
    second = head.modifiers.new("Armature.001", "ARMATURE")
    second.object = head.modifiers[0].object
    _, binding = addon.character.read_character(
        head, head.skinmodes, bpy.context.scene, bpy.context.scene.frame_current
    )
    notes = addon.character.rig_notes(head, binding)
    assert any("preserves volume" in n and "'Head'" in n for n in notes), notes
    assert any("'Head' has 2 Armature modifiers" in n for n in notes), notes


def test_the_head_moves_and_the_ears_move_alike(baked):
    size = next(iter(baked.values()))[2]["character_size"]
    pct = {n: 100.0 * np.linalg.norm(u, axis=2) / size for n, (u, _, _, _) in baked.items()}
    print({n: round(float(p.max()), 3) for n, p in pct.items()})
    assert pct["Head"].max() >= HEAD_PCT
    # The ears: the mesh's two halves, split at the median x of the rest pose.
    rest = baked["Ears"][1]
    side = rest[:, 0] > np.median(rest[:, 0])
    left, right = pct["Ears"][:, side].max(), pct["Ears"][:, ~side].max()
    print(f"ears {left:.3f} % and {right:.3f} %")
    assert min(left, right) > 0 and max(left, right) / min(left, right) <= EARS_RATIO


def test_the_body_is_the_same_whichever_mesh_bakes_first(addon, baked, tmp_path):
    import bpy

    again = _bake_all(bpy, addon, tmp_path / "reversed", tuple(reversed(MESHES)))
    for n in MESHES:
        assert np.array_equal(again[n][0], baked[n][0]), n


# ------------------------------------------------------------------ seams: the fox cut in two at its tail


def _cut_at_tail(bpy, obj):
    """Split ``obj`` into two meshes at its tail, as a studio separates a part: the faces whose vertices are
    all bound mostly to tail bones go to a new object "fox_tail"; the cut's vertices are in both, at the
    same place (a seam).  Both keep the Armature modifier and the weights."""
    import bmesh

    tail = obj.copy()
    tail.data = obj.data.copy()
    tail.name = "fox_tail"
    bpy.context.scene.collection.objects.link(tail)
    groups = {g.index for g in obj.vertex_groups if "Tail" in g.name}
    in_tail = np.array(
        [bool(v.groups) and max(v.groups, key=lambda g: g.weight).group in groups for v in obj.data.vertices]
    )
    for o, keep_tail in ((obj, False), (tail, True)):
        bm = bmesh.new()
        bm.from_mesh(o.data)
        doomed = [f for f in bm.faces if all(in_tail[v.index] for v in f.verts) != keep_tail]
        bmesh.ops.delete(bm, geom=doomed, context="FACES")
        bm.to_mesh(o.data)
        bm.free()
    return tail


def _seam_gap(bpy, addon, work, whole):
    """The largest change of the gap between the cut's twin vertices over the clip, in % of the size, and
    the tail tip's peak offset in %."""
    loaded = rc.load(bpy, rc.spec("fox"))
    body = loaded.obj
    tail = _cut_at_tail(bpy, body)
    for o in (body, tail):
        o.skinmodes.whole_character = whole
    scene = bpy.context.scene
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "fox_cut.blend"))
    s_body = addon.api.bake(body, frames=(loaded.start, loaded.end), output="PC2")
    s_tail = addon.api.bake(tail, frames=(loaded.start, loaded.end), output="PC2")
    size = float(s_body["character_size"])
    scene.frame_set(loaded.start)
    Pb, Pt = rc._world_positions(bpy, body), rc._world_positions(bpy, tail)
    from scipy.spatial import cKDTree

    dist, j = cKDTree(Pt).query(Pb)
    twins = np.flatnonzero(dist <= 1e-6 * size)
    assert twins.size >= 4, "the cut must leave twin vertices on both meshes"
    worst, tip = 0.0, 0.0
    for f in range(loaded.start, loaded.end + 1):
        scene.frame_set(f)
        b, t = rc._world_positions(bpy, body), rc._world_positions(bpy, tail)
        worst = max(worst, float(np.linalg.norm(b[twins] - t[j[twins]], axis=1).max()))
        tip = max(tip, float(np.linalg.norm(t - _rig_only(bpy, tail), axis=1).max()))
    return 100.0 * worst / size, 100.0 * tip / size, s_body, s_tail


def _rig_only(bpy, obj):
    cache = obj.modifiers["Skinmodes Cache"]
    cache.show_viewport = False
    try:
        return rc._world_positions(bpy, obj)
    finally:
        cache.show_viewport = True


# The limit for a seam's gap; the twins start at the same place, so the gap is its change.
SEAM_PCT = 0.1


def test_a_seam_between_two_meshes_stays_closed(addon, tmp_path):
    import bpy

    gap, tip, s_body, s_tail = _seam_gap(bpy, addon, tmp_path / "whole", whole=True)
    print(f"whole character: seam gap {gap:.4f} %, tail tip {tip:.2f} %")
    assert s_body["character_size"] == s_tail["character_size"]
    assert gap <= SEAM_PCT
    assert tip >= 1.0  # the tail still follows through (the uncut fox's tip: 5.5 %, docs/where_it_moves.md)


def test_each_mesh_alone_opens_the_seam(addon, tmp_path):
    """What Whole Character fixes: simulated alone, the two meshes part at the cut."""
    import bpy

    gap, tip, _, _ = _seam_gap(bpy, addon, tmp_path / "alone", whole=False)
    print(f"alone: seam gap {gap:.4f} %, tail tip {tip:.2f} %")
    assert gap > 10 * SEAM_PCT


def test_who_is_in_the_body(addon):
    """The platformer's four meshes touch: one body from any of them.  The robot's two skinned hands lie a
    body's width apart (its other parts are bone-parented props): each is its own body, as it was alone; in
    one volume the mesher would drop the farther hand as far from the body.  Whole Character off on a mesh
    takes it out of the others' body."""
    import bpy

    members = addon.character.character_members
    _load(bpy)
    names = {n: [o.name for o in members(bpy.data.objects[n])] for n in MESHES}
    assert all(v == list(MESHES) for v in names.values()), names
    bpy.data.objects["Ears"].skinmodes.whole_character = False
    assert [o.name for o in members(bpy.data.objects["Head"])] == ["Arms", "Body", "Head"]
    assert [o.name for o in members(bpy.data.objects["Ears"], False)] == ["Ears"]
    rc.load(bpy, rc.spec("robot_hand"))
    assert [o.name for o in members(bpy.data.objects["Hand.R"])] == ["Hand.R"]


# ------------------------------------------------------------------ the command line and the API


@pytest.fixture
def platformer_shot(addon, tmp_path):
    """The platformer saved as a shot: its four meshes on CharacterArmature, a 12-frame range, a coarse volume."""
    import bpy

    _load(bpy)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.target_tets = 3000
    path = tmp_path / "platformer.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def test_the_command_line_bakes_every_mesh_of_an_armature(dev_zip, platformer_shot, tmp_path):
    import json

    out = run_cli(
        dev_zip,
        tmp_path,
        "bake",
        "--blend",
        str(platformer_shot),
        "--armature",
        "CharacterArmature",
        "--frames",
        "0-12",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["armature"] == "CharacterArmature" and summary["saved"] == str(platformer_shot)
    assert [s["object"] for s in summary["objects"]] == list(MESHES)
    assert all(Path(s["files"][0]).exists() for s in summary["objects"])
    assert len({s["character_size"] for s in summary["objects"]}) == 1  # one body
    out = run_cli(dev_zip, tmp_path, "clear", "--blend", str(platformer_shot), "--armature", "CharacterArmature")
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["cleared"] == list(MESHES)
    assert not any(Path(s["files"][0]).exists() for s in summary["objects"])


def test_a_failing_mesh_leaves_the_whole_character_as_it_was(dev_zip, platformer_shot, tmp_path):
    """The head, taken out of the body, asks for a stiffness group it lacks: the three meshes before it bake,
    then the head fails; nothing of the four changed on disk (the .blend, no point cache left)."""
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(platformer_shot))
    head = bpy.data.objects["Head"]
    head.skinmodes.whole_character = False
    head.skinmodes.stiffness_group = "nosuch"
    bpy.ops.wm.save_mainfile()
    before = platformer_shot.read_bytes()
    out = run_cli(
        dev_zip,
        tmp_path,
        "bake",
        "--blend",
        str(platformer_shot),
        "--armature",
        "CharacterArmature",
        "--frames",
        "0-12",
    )
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skinmodes: error: 'Head' of the character: vertex group 'nosuch' not found"), last
    assert last.endswith("no mesh of it changed"), last
    assert platformer_shot.read_bytes() == before
    assert not list(platformer_shot.parent.rglob("*.pc2")), "a point cache of the failed character was left"


def test_the_api_bakes_a_character_from_its_armature_or_any_mesh(addon, tmp_path):
    import bpy

    loaded, _ = _load(bpy)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "api.blend"))
    api = addon.api
    assert [o.name for o in api.character_meshes(loaded.armature)] == list(MESHES)
    assert [o.name for o in api.character_meshes(bpy.data.objects["Ears"])] == list(MESHES)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.target_tets = 3000
    out = api.bake_character(loaded.armature, frames=(0, 6))
    assert [s["object"] for s in out] == list(MESHES)
    assert all(bpy.data.objects[n].modifiers.get("Skinmodes Cache") is not None for n in MESHES)
    with pytest.raises(addon.api.SkinmodesError, match="needs a mesh object"):
        api.character_meshes(None)


def test_the_panel_lists_the_characters_meshes_each_with_its_switch(addon):
    import bpy

    from tests.addon.test_ui import draw, props, texts

    _load(bpy)
    bpy.context.view_layer.objects.active = bpy.data.objects["Head"]
    drawn = draw(bpy, addon.ui.SKINMODES_PT_main.draw)
    assert props(drawn) == ["whole_character"] * (1 + len(MESHES))
    shown = texts(drawn)
    assert shown[0] == "Rig: CharacterArmature" and all(n in shown for n in MESHES), shown


# ------------------------------------------------------------------ layers: a shirt over the fox, eyes in its head


def _clip(bpy, loaded, objs):
    """Per object, (frames, k, 3) world positions baked and rig-only."""
    baked: dict[str, list] = {o.name: [] for o in objs}
    rig: dict[str, list] = {o.name: [] for o in objs}
    for f in range(loaded.start, loaded.end + 1):
        bpy.context.scene.frame_set(f)
        for o in objs:
            baked[o.name].append(rc._world_positions(bpy, o))
            rig[o.name].append(_rig_only(bpy, o))
    return {n: np.array(v) for n, v in baked.items()}, {n: np.array(v) for n, v in rig.items()}


@pytest.fixture(scope="module")
def dressed(addon, tmp_path_factory):
    """The fox running, dressed (:func:`_dress`), baked as one character from its armature: (baked, rig-only
    world positions per mesh over the clip, the shirt's source vertices, the size, the bake summaries)."""
    import bpy

    loaded = rc.load(bpy, replace(rc.spec("fox"), actions=("Run",)))
    fox, arm = loaded.obj, loaded.armature
    src = dress(bpy, fox, arm, float(np.linalg.norm(np.array(fox.dimensions))))
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path_factory.mktemp("dressed") / "dressed.blend"))
    out = addon.api.bake_character(arm, frames=(loaded.start, loaded.end))
    objs = [bpy.data.objects[n] for n in ("fox", "shirt", "eyes")]
    baked, rig = _clip(bpy, loaded, objs)
    tris = np.array([t.vertices[:] for t in fox.data.loop_triangles])
    return baked, rig, src, float(out[0]["character_size"]), out, dominant_groups(fox), tris


def test_the_layers_are_one_body_with_the_fox(dressed):
    *_, out, _, _ = dressed
    assert [s["object"] for s in out] == ["eyes", "fox", "shirt"]
    assert len({s["character_size"] for s in out}) == 1, "the eyes, inside the head, are of its body"


# Known short (issue 38, open): the shirt reads the jiggle of the volume at its own place, 0.3 % of the size
# out from the belly, and the jiggle's variation across that lift (largest at its edge by the hind legs and
# the tail) lets it sink 0.156 % on the run.  Reading the jiggle of the surface under it instead (a tried
# "layer" rule) measured 0.183 %: no better, so it was left out.
@pytest.mark.xfail(strict=True, reason="issue 38: the shirt sinks 0.156 % of the size into the belly > 0.1 %")
def test_a_shirt_never_sinks_into_the_belly(dressed):
    """Each shirt vertex against the point of the belly under it (its closest point on the fox's torso on
    the first frame, carried by the fox's baked and rig-only surfaces): along their rig-only gap (the
    normal, as the pose carries it), the baked gap is never smaller by more than 0.1 % of the size, so the
    jiggle never pushes the shirt into the body further than the rig puts it."""
    from core.geometry.surface import closest_surface_points

    baked, rig, src, size, _, dom, tris = dressed
    torso = tris[np.isin(dom[tris], list(TORSO)).all(axis=1)]
    _, face, bary = closest_surface_points(rig["fox"][0], torso, rig["shirt"][0])
    corners = torso[face]  # (k, 3)

    def under(P: np.ndarray) -> np.ndarray:
        return np.einsum("kc,fkci->fki", bary, P[:, corners])

    rig_gap = rig["shirt"] - under(rig["fox"])
    normal = rig_gap / np.linalg.norm(rig_gap, axis=2, keepdims=True)
    gap = np.einsum("fki,fki->fk", baked["shirt"] - under(baked["fox"]), normal)
    deeper = 100.0 * float((np.linalg.norm(rig_gap, axis=2) - gap).max()) / size
    belly = 100.0 * float(np.linalg.norm(baked["fox"][:, src] - rig["fox"][:, src], axis=2).max()) / size
    print(f"shirt deeper than with the rig alone by {deeper:.4f} % (belly peak {belly:.3f} %)")
    assert belly > 10 * SEAM_PCT, "the belly must move for the test to mean anything"
    assert deeper <= SEAM_PCT


def test_eyes_ride_the_heads_flesh(dressed):
    """Neither left still (their peak offset at least a tenth of the 20 fox vertices nearest them) nor
    jiggled out of the head (every eye vertex inside the baked fox on every frame: winding number)."""
    from scipy.spatial import cKDTree

    from core.geometry.winding import winding_numbers

    baked, rig, _, size, _, _, tris = dressed
    _, near = cKDTree(rig["fox"][0]).query(rig["eyes"][0].mean(axis=0), k=20)
    flesh_peak = float(np.linalg.norm(baked["fox"][:, near] - rig["fox"][:, near], axis=2).max())
    eyes_peak = float(np.linalg.norm(baked["eyes"] - rig["eyes"], axis=2).max())
    outside = max(
        int((np.abs(winding_numbers(baked["fox"][i], tris, baked["eyes"][i])) < 0.5).sum())
        for i in range(len(baked["eyes"]))
    )
    print(
        f"eyes peak {100 * eyes_peak / size:.3f} %, the flesh around {100 * flesh_peak / size:.3f} %; outside {outside}"
    )
    assert eyes_peak >= 0.1 * flesh_peak > 0
    assert outside == 0


def test_bake_character_in_the_panel_bakes_every_mesh_or_none(addon, tmp_path):
    """The Output panel offers Bake Character on a mesh of a several-mesh armature; it bakes the four meshes
    (synchronously here: no window).  With the head failing (its own stiffness group missing), no mesh gets
    a bake and no point cache is written: every mesh simulates before any bake is replaced."""
    import bpy

    from tests.addon.test_ui import draw, operators

    _load(bpy)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.target_tets = 3000
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "panel.blend"))
    bpy.context.view_layer.objects.active = bpy.data.objects["Body"]
    assert operators(draw(bpy, addon.ui.SKINMODES_PT_output.draw)) == ["skinmodes.bake", "skinmodes.bake_character"]
    head = bpy.data.objects["Head"]
    head.skinmodes.whole_character = False
    head.skinmodes.stiffness_group = "nosuch"
    with pytest.raises(RuntimeError, match="'Head' of the character: vertex group 'nosuch' not found"):
        bpy.ops.skinmodes.bake_character()
    assert not any(bpy.data.objects[n].skinmodes.bake_kind for n in MESHES)
    assert not list(tmp_path.rglob("*.pc2")) and not list(tmp_path.rglob("*.partial"))
    head.skinmodes.stiffness_group = ""
    head.skinmodes.whole_character = True
    assert bpy.ops.skinmodes.bake_character() == {"FINISHED"}
    assert all(bpy.data.objects[n].skinmodes.bake_kind == "PC2" for n in MESHES)
    assert len(list(tmp_path.rglob("*.pc2"))) == len(MESHES)
    assert operators(draw(bpy, addon.ui.SKINMODES_PT_output.draw))[-1] == "skinmodes.clear_character"
    assert bpy.ops.skinmodes.clear_character() == {"FINISHED"}
    assert not any(bpy.data.objects[n].skinmodes.bake_kind for n in MESHES) and not list(tmp_path.rglob("*.pc2"))


def test_with_the_armature_selected_the_panel_shows_the_character(addon):
    """Issue 38: select the armature, and the sidebar shows its character: the meshes with their switches,
    Bake Character; the operators run from the armature too (here: the poll)."""
    import bpy

    from tests.addon.test_ui import draw, operators, props, texts

    loaded, _ = _load(bpy)
    bpy.context.view_layer.objects.active = loaded.armature
    assert addon.ui.SKINMODES_PT_armature.poll(bpy.context)
    assert not addon.ui.SKINMODES_PT_main.poll(bpy.context)
    drawn = draw(bpy, addon.ui.SKINMODES_PT_armature.draw)
    assert texts(drawn)[0] == "Character: CharacterArmature"
    assert props(drawn) == ["whole_character"] * len(MESHES)
    assert operators(drawn) == ["skinmodes.bake_character"]
    assert bpy.ops.skinmodes.bake_character.poll()


def test_a_mask_the_other_meshes_lack_is_refused_naming_them(addon):
    """The body's meshes read the baked mesh's masks: a group on the head only is refused in one line that
    names the mesh without it and the two ways out; nothing changes."""
    import bpy

    _load(bpy)
    head = bpy.data.objects["Head"]
    head.vertex_groups.new(name="soft").add(range(len(head.data.vertices)), 1.0, "REPLACE")
    head.skinmodes.stiffness_group = "soft"
    with pytest.raises(addon.api.SkinmodesError) as err:
        addon.character.read_character(head, head.skinmodes, bpy.context.scene, bpy.context.scene.frame_current)
    line = str(err.value)
    assert line.startswith("vertex group 'soft' not found on 'Arms'") and "as one body (Whole Character)" in line
    assert "turn Whole Character off on it" in line and "\n" not in line
