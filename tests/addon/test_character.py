"""Reading a rigged mesh out of Blender into the core's CharacterInput (skinmodes_addon/character.py).

Everything runs in real Blender (the bpy module) on real objects, and the
main test reads them back from a saved .blend.  The rig is a cube (8
vertices, 12 triangles) with two deforming bones, a control bone that does
not deform, and vertex groups painted with values exact in float32, so
weights are compared exactly: Blender stores them as float32 and the reader
only widens them to float64.
"""

import numpy as np
import pytest

from tests.addon.helpers import modifiers_fingerprint

# Painted weights per vertex of the cube: (lower, upper).  Vertex 6 has weights
# below Blender's threshold (it is not moved by the Armature modifier), vertex 7
# none at all: both follow the object through the root column.
PAINTED = {0: (1.0, 0.0), 1: (0.75, 0.25), 2: (0.5, 0.5), 3: (0.25, 0.75), 4: (0.0, 1.0), 5: (0.5, 0.0)}
TINY = 2.0**-15  # about 3e-5, exact in float32, below the 1e-4 threshold


def rigged_cube(bpy, name="Box"):
    """A cube with an Armature modifier; returns (mesh object, armature object)."""
    scene = bpy.context.scene
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = (2.0, 1.0, 1.0)
    obj.location = (1.0, 2.0, 3.0)  # translation does not enter the rest shape, only the linear part
    arm_data = bpy.data.armatures.new(name + "Rig")
    arm = bpy.data.objects.new(name + "Rig", arm_data)
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    for bone, head, tail in (
        ("lower", (0, 0, -1), (0, 0, 0)),
        ("upper", (0, 0, 0), (0, 0, 1)),
        ("ctrl", (0, 1, 0), (0, 1, 1)),
    ):
        eb = arm_data.edit_bones.new(bone)
        eb.head, eb.tail = head, tail
    bpy.ops.object.mode_set(mode="OBJECT")
    arm_data.bones["ctrl"].use_deform = False
    groups = {n: obj.vertex_groups.new(name=n) for n in ("upper", "lower", "ctrl", "unrelated")}  # not bone order
    for v, (lo, up) in PAINTED.items():
        if lo:
            groups["lower"].add([v], lo, "REPLACE")
        if up:
            groups["upper"].add([v], up, "REPLACE")
    groups["lower"].add([6], TINY, "REPLACE")
    groups["ctrl"].add(list(range(8)), 1.0, "REPLACE")  # a bone that does not deform: ignored
    groups["unrelated"].add(list(range(8)), 1.0, "REPLACE")  # no bone of that name: ignored
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    bpy.context.view_layer.objects.active = obj
    return obj, arm


def read(addon, bpy, obj):
    scene = bpy.context.scene
    return addon.character.read_character(obj, obj.skinmodes, scene, scene.frame_current)


def test_a_saved_blend_reads_back_as_bones_weights_rest_and_faces(addon, tmp_path):
    import bpy

    obj, _ = rigged_cube(bpy)
    bpy.context.scene.unit_settings.scale_length = 0.5  # 1 Blender unit is half a metre
    local = np.array([v.co for v in obj.data.vertices])
    path = tmp_path / "cube.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["Box"]
    before = modifiers_fingerprint(obj)

    inp, binding = read(addon, bpy, obj)

    assert binding.armature == "BoxRig" and binding.unit == 0.5
    assert sorted(binding.bones) == ["lower", "upper"]  # deforming bones with a group; ctrl and unrelated left out
    assert binding.root  # vertices 6 and 7 are not moved by any bone
    W = inp.bone_weights
    assert W.shape == (8, 3) and W.dtype == np.float64
    lo, up = binding.bones.index("lower"), binding.bones.index("upper")
    expected = np.zeros((8, 3))
    for v, (a, b) in PAINTED.items():
        expected[v, [lo, up]] = a, b
    expected[6, lo] = TINY
    expected[[6, 7], 2] = 1.0  # the root column, last
    assert np.array_equal(W, expected)  # exact: every value above is exact in float32
    # Rest in metres: local coordinates through the object's linear map and the unit scale; the
    # inputs are small binary fractions, so the only round-off is float32 matrix storage (1e-12 is ample).
    assert np.abs(inp.rest - local * np.array([2.0, 1.0, 1.0]) * 0.5).max() < 1e-12
    assert inp.faces.shape == (12, 3) and inp.faces.dtype == np.int64
    assert np.array_equal(np.unique(inp.faces), np.arange(8))
    assert inp.stiffness is None and inp.density is None and inp.leak is None
    assert modifiers_fingerprint(obj) == before  # the Armature modifier was muted while reading, and put back
    # The weights are ones the core accepts: rows normalised like Blender's modifier, no vertex unskinned.
    rig = addon.core.model.rig.LBSRig.from_weights(W)
    assert np.allclose(rig.weights.sum(axis=1), 1.0, rtol=0, atol=1e-15)  # one division per entry


def test_painted_masks_are_read_and_the_leak_group_only_when_asked(addon):
    import bpy

    obj, _ = rigged_cube(bpy)
    mask = obj.vertex_groups.new(name="mask")
    mask.add([0, 1, 2, 3], 0.25, "REPLACE")
    s = obj.skinmodes
    s.stiffness_group = s.density_group = s.leak_group = "mask"
    s.leak_mode = "AUTO"
    inp, _ = read(addon, bpy, obj)
    painted = np.array([0.25] * 4 + [0.0] * 4)  # 0 where a vertex is not in the group; exact in float32
    assert np.array_equal(inp.stiffness, painted) and np.array_equal(inp.density, painted)
    assert inp.leak is None  # the automatic mask ignores the group
    s.leak_mode = "GROUP"
    inp, _ = read(addon, bpy, obj)
    assert np.array_equal(inp.leak, painted)


def test_every_bone_weighted_vertex_is_bound_and_no_root_column_is_added(addon):
    import bpy

    obj, _ = rigged_cube(bpy)
    obj.vertex_groups["lower"].add([6, 7], 1.0, "REPLACE")
    inp, binding = read(addon, bpy, obj)
    assert not binding.root and inp.bone_weights.shape == (8, 2)


def refused(addon, bpy, obj):
    """The one-line message read_character refuses ``obj`` with; the modifier stack must be as it was."""
    before = modifiers_fingerprint(obj)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        read(addon, bpy, obj)
    assert modifiers_fingerprint(obj) == before
    message = str(err.value)
    assert "\n" not in message
    return message


def test_bad_rigs_are_refused_in_one_line_and_change_nothing(addon):
    import bpy

    obj, arm = rigged_cube(bpy)
    for vg in obj.vertex_groups:
        vg.add(list(range(8)), 0.0, "REPLACE")
    assert "all bone weights of 'Box' are zero" in refused(addon, bpy, obj)
    obj.vertex_groups["upper"].add([2], TINY, "REPLACE")  # below Blender's threshold still counts as none
    assert "are zero" in refused(addon, bpy, obj)
    obj.vertex_groups["upper"].add([5], float("nan"), "REPLACE")
    line = refused(addon, bpy, obj)
    assert "vertex group 'upper'" in line and "NaN weights on 1 vertex (index 5)" in line
    obj.vertex_groups["upper"].add([5], 1.0, "REPLACE")
    obj.skinmodes.stiffness_group = "gone"
    assert "vertex group 'gone' not found on 'Box'" in refused(addon, bpy, obj)
    obj.skinmodes.stiffness_group = ""
    obj.modifiers["Armature"].use_vertex_groups = False
    assert "enable Bind To > Vertex Groups" in refused(addon, bpy, obj)
    obj.modifiers["Armature"].use_vertex_groups = True
    for bone in ("lower", "upper"):
        obj.vertex_groups[bone].name = "old." + bone
    assert "no vertex groups named after deforming bones of 'BoxRig'" in refused(addon, bpy, obj)
    for bone in arm.data.bones:
        bone.use_deform = False
    assert "armature 'BoxRig' has no deforming bones" in refused(addon, bpy, obj)
    obj.modifiers["Armature"].object = None
    assert "the Armature modifier 'Armature' of 'Box' has no armature" in refused(addon, bpy, obj)


def test_a_mesh_without_faces_is_refused(addon):
    import bpy

    obj, _ = rigged_cube(bpy)
    obj.data.clear_geometry()
    assert "'Box' has no faces" in refused(addon, bpy, obj)
