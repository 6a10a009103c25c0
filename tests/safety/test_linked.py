"""Issue 12, item 8: linked objects and library overrides.

Before: a bake of a linked object reported success and was lost on save; on a
library override the bake status was not overridable, so after reopening the
add-on forgot the bake and Clear Bake was unavailable.

A real library: the creature is saved in ``lib/lib.blend`` inside a
collection, linked into ``shot/shot.blend`` with ``bpy.data.libraries.load``
and overridden with ``Collection.override_hierarchy_create`` (what Object >
Library Override > Make does, without a UI).  Playback after reopening is
compared exactly: the same .pc2 file through the same modifiers.
"""

import numpy as np
import pytest

from tests.addon.helpers import differences, disk_fingerprint, evaluated, full_fingerprint


@pytest.fixture
def library(creature, tmp_path):
    """The creature (with a Subdivision after its Armature) saved in a library, linked into a saved shot."""
    import bpy

    obj, arm, scene = creature
    obj.skinmodes.cache_dir = "//skinmodes_cache/"
    obj.modifiers.new("Subdivision", "SUBSURF").levels = 1
    char = bpy.data.collections.new("Char")
    scene.collection.children.link(char)
    for o in (obj, arm):
        for c in list(o.users_collection):
            c.objects.unlink(o)
        char.objects.link(o)
    (tmp_path / "lib").mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "lib" / "lib.blend"))
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    (tmp_path / "shot").mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot" / "shot.blend"))
    with bpy.data.libraries.load(str(tmp_path / "lib" / "lib.blend"), link=True, relative=True) as (_src, dst):
        dst.collections = ["Char"]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 24
    return dst.collections[0], scene, tmp_path / "shot"


def local(bpy, name):
    return next(o for o in bpy.data.objects if o.name == name and o.library is None)


def make_active(bpy, obj):
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)


def test_baking_a_linked_object_is_refused_before_any_work(addon, library):
    import bpy

    char, scene, folder = library
    scene.collection.children.link(char)  # the linked collection itself, as File > Link places it
    obj = bpy.data.objects["Creature"]
    assert obj.library is not None and obj.override_library is None
    make_active(bpy, obj)
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    for run in (lambda: addon.api.bake(obj, output="PC2"), lambda: addon.api.compute_modes(obj)):
        with pytest.raises(addon.core.errors.SkinmodesError) as err:
            run()
        line = str(err.value)
        assert "\n" not in line and "is linked from lib.blend" in line and "Library Override > Make" in line
    with pytest.raises(RuntimeError, match=r"is linked from lib\.blend"):
        bpy.ops.skinmodes.bake(output="PC2")
    after = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    assert not differences(before, after), differences(before, after)[:5]
    assert not (folder / "skinmodes_cache").exists()


def test_an_override_keeps_its_bake_through_save_and_reopen_and_clear_bake_works(addon, library):
    """The refusal's advice works: the override bakes, and keeps the bake."""
    import bpy

    char, scene, folder = library
    char.override_hierarchy_create(scene, bpy.context.view_layer)
    obj = local(bpy, "Creature")
    assert obj.override_library is not None
    make_active(bpy, obj)
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    status = {name: getattr(obj.skinmodes, name) for name in addon.bake.BAKE_STATUS}
    assert status["bake_kind"] == "PC2"
    pc2 = folder / status["bake_file"].removeprefix("//")
    assert pc2.is_file()
    scene.frame_set(12)
    shown = evaluated(bpy, obj)
    stack = [m.name for m in obj.modifiers]
    assert stack == ["Armature", "Skinmodes Cache", "Subdivision"]

    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    obj = local(bpy, "Creature")
    assert {name: getattr(obj.skinmodes, name) for name in addon.bake.BAKE_STATUS} == status
    assert [m.name for m in obj.modifiers] == stack
    bpy.context.scene.frame_set(12)
    assert np.array_equal(evaluated(bpy, obj), shown)  # the same file through the same modifiers

    make_active(bpy, obj)
    assert bpy.ops.skinmodes.clear_bake.poll()
    assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    # The saved shot.blend plays the file until it is saved without it (test_unsaved_rebakes.py).
    assert pc2.exists() and obj.modifiers.get("Skinmodes Cache") is None and not obj.skinmodes.bake_kind
    bpy.ops.wm.save_mainfile()
    assert not pc2.exists()
    bpy.ops.wm.open_mainfile(filepath=str(folder / "shot.blend"))
    obj = local(bpy, "Creature")
    assert not obj.skinmodes.bake_kind and [m.name for m in obj.modifiers] == ["Armature", "Subdivision"]


def test_shape_keys_on_an_override_whose_mesh_is_linked_are_refused(addon, library):
    """Shape keys would go into the library's mesh; the advice (a Point Cache) is the previous test's bake."""
    import bpy

    char, scene, folder = library
    char.override_hierarchy_create(scene, bpy.context.view_layer)
    obj = local(bpy, "Creature")
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="SHAPE_KEYS")
    line = str(err.value)
    assert "\n" not in line and line.endswith("bake a Point Cache instead")
    after = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    assert not differences(before, after), differences(before, after)[:5]
