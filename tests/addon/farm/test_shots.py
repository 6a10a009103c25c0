"""Reading the shots: the same character in two shots has one key, read without preparing anything."""

import pytest

from tests.addon.farm.conftest import FRAMES


def test_the_same_character_in_two_shots_is_one_key(addon, shots):
    tasks = addon.farm.shots.read_shots([str(shots)], None, FRAMES)
    assert [(t.shot.rsplit("/", 1)[-1], t.object) for t in tasks] == [
        ("s1.blend", "Creature"),
        ("s2.blend", "Blob"),  # every skinned mesh of a shot, sorted by name
        ("s2.blend", "Creature"),
        ("s3.blend", "Blob"),
    ]
    keys = {(t.shot.rsplit("/", 1)[-1], t.object): t.character for t in tasks}
    assert keys["s1.blend", "Creature"] == keys["s2.blend", "Creature"]  # other animation, one character
    assert keys["s2.blend", "Blob"] == keys["s3.blend", "Blob"] != keys["s1.blend", "Creature"]
    assert not list(shots.rglob("*.npz")) and not list(shots.rglob("skinmodes_cache"))  # nothing prepared


def test_named_objects_and_bad_names(addon, shots):
    read = addon.farm.shots.read_shots
    tasks = read([str(shots / "s2.blend"), str(shots / "s3.blend")], ["Blob"], None)
    assert [t.object for t in tasks] == ["Blob", "Blob"]
    with pytest.raises(addon.api.SkinmodesError, match=r"no shot has an object named 'Blobb'"):
        read([str(shots)], ["Blob", "Blobb"], None)
    with pytest.raises(addon.api.SkinmodesError, match=r"neither a \.blend file nor a folder"):
        read([str(shots / "nothing.blend")], None, None)
    (shots.parent / "empty").mkdir()
    with pytest.raises(addon.api.SkinmodesError, match=r"no \.blend files in"):
        read([str(shots.parent / "empty")], None, None)


def test_a_shot_without_characters_asks_for_names(addon, tmp_path):
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "props.blend"))
    with pytest.raises(addon.api.SkinmodesError, match=r"props\.blend has no mesh with an Armature modifier"):
        addon.farm.shots.read_shots([str(tmp_path / "props.blend")], None, None)
