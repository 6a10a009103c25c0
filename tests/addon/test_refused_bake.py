"""A refused bake leaves no empty ``skinmodes_cache/`` folder behind (issue 11, item 9).

The default cache folder is ``//skinmodes_cache/``, next to the saved .blend.
Each case is refused before anything is written, so the folder must not exist
afterwards; a bake that is accepted creates it.
"""

import pytest

from tests.addon.helpers import flatten
from tests.addon.test_bad_input import report_of


@pytest.fixture
def saved(creature, tmp_path):
    """The creature saved as tmp_path/shot.blend, with the default cache folder."""
    import bpy

    obj, arm, _ = creature
    obj.skinmodes.cache_dir = ""  # the default: //skinmodes_cache/
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    return obj, arm, tmp_path / "skinmodes_cache"


def test_a_rig_problem_refuses_the_bake_before_any_folder_exists(addon, saved):
    import bpy

    _, arm, folder = saved
    for b in arm.data.bones:
        b.use_deform = False
    assert "no deforming bones" in report_of(bpy, bpy.ops.skinmodes.bake, output="PC2")
    assert not folder.exists()


def test_a_flat_mesh_refuses_the_bake_before_any_folder_exists(addon, saved):
    import bpy

    obj, _, folder = saved
    flatten(obj)
    assert "flat" in report_of(bpy, bpy.ops.skinmodes.bake, output="PC2")
    assert not folder.exists()


def test_animated_shape_keys_refuse_the_bake_before_any_folder_exists(addon, saved):
    import bpy

    obj, _, folder = saved
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Smile").keyframe_insert("value", frame=1)
    assert "will not touch your keyframes" in report_of(bpy, bpy.ops.skinmodes.bake, output="SHAPE_KEYS")
    assert not folder.exists()


def test_an_unwritable_cache_folder_refuses_the_bake_and_creates_nothing(addon, saved, tmp_path):
    import bpy

    obj, _, _ = saved
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    obj.skinmodes.cache_dir = str(blocker / "deeper" / "cache") + "/"
    before = sorted(tmp_path.rglob("*"))
    assert "cannot write" in report_of(bpy, bpy.ops.skinmodes.bake, output="PC2")
    assert sorted(tmp_path.rglob("*")) == before
    assert blocker.read_text() == "a file where a folder should be"


def test_an_accepted_bake_creates_the_folder(addon, saved):
    import bpy

    _, _, folder = saved
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    assert (folder / "Creature.pc2").exists() or any(folder.glob("*.pc2"))
