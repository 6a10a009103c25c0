"""Issue 12, item 4: cache folders mean what they say.

Before: ``cache_dir = "//"`` wrote ``/Creature.pc2`` at the filesystem root,
relative and ``~`` folders resolved against the working directory, and
every unsaved file cached into one shared ``skinmodes_cache`` folder in the
system temp directory.
"""

import os
import stat
import tempfile
from pathlib import Path

import pytest


def baked_file(bpy, addon, obj):
    addon.api.bake(obj, output="PC2")
    mod = obj.modifiers["Skinmodes Cache"]
    path = Path(os.path.normpath(bpy.path.abspath(mod.filepath)))
    assert path.is_file() and mod.filepath == obj.skinmodes.bake_file
    return path


def test_double_slash_is_the_blend_s_folder(addon, shot):
    import bpy

    obj, _, _scene, folder = shot
    obj.skinmodes.cache_dir = "//"
    stem = addon.bake.cache_stem(obj)
    path = baked_file(bpy, addon, obj)
    assert path == folder / f"{stem}.pc2"
    assert obj.skinmodes.bake_file == f"//{stem}.pc2"
    assert not Path("/", f"{stem}.pc2").exists()
    assert list(folder.glob("tets-*.npz")) and list(folder.glob("model-*.npz"))  # the subspace caches too


@pytest.mark.parametrize("setting", ["caches/sub/", "//caches/sub/", "./caches/sub"])
def test_relative_folders_are_relative_to_the_blend_not_the_cwd(addon, shot, tmp_path, monkeypatch, setting):
    import bpy

    obj, _, _scene, folder = shot
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    obj.skinmodes.cache_dir = setting
    path = baked_file(bpy, addon, obj)
    assert path.parent == folder / "caches" / "sub"
    assert list(path.parent.glob("model-*.npz"))
    assert not any(elsewhere.iterdir())


def test_tilde_is_the_home_folder(addon, shot, tmp_path, monkeypatch):
    import bpy

    obj, _, _scene, folder = shot
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # what expanduser reads on POSIX
    monkeypatch.setenv("USERPROFILE", str(home))  # and on Windows
    obj.skinmodes.cache_dir = "~/skinmodes/"
    path = baked_file(bpy, addon, obj)
    assert path.parent == home / "skinmodes"
    assert not (folder / "~").exists()


def test_unsaved_files_get_a_private_folder_of_their_own_and_a_message(addon, creature):
    import bpy

    obj, _, _scene = creature
    obj.skinmodes.cache_dir = "//skinmodes_cache/"
    assert not bpy.data.filepath
    private = addon.session.unsaved_folder()
    assert addon.session.cache_folder(obj.skinmodes) == private / "skinmodes_cache"
    assert addon.session.unsaved_folder() == private  # one per process, made once
    assert private != Path(tempfile.gettempdir()) / "skinmodes_cache"
    assert private.name.startswith("skinmodes-unsaved-") and private.parent == Path(tempfile.gettempdir())
    assert stat.S_IMODE(private.stat().st_mode) == 0o700  # mkdtemp's: other users cannot read or plant files
    summary = addon.api.bake(obj, output="SHAPE_KEYS")
    notes = [m for m in summary["messages"] if "save the .blend first" in m]
    assert len(notes) == 1 and "\n" not in notes[0] and "farm" in notes[0]
    assert list((private / "skinmodes_cache").glob("tets-*.npz"))
    # A point cache needs a saved file (it must outlive the session): refused in one line.
    with pytest.raises(addon.core.errors.SkinmodesError, match=r"save the \.blend first"):
        addon.api.bake(obj, output="PC2")


@pytest.mark.parametrize("name", ["../../escape", "a/b\\c", "..", "/etc/passwd"])
def test_writes_never_leave_the_chosen_folder(addon, shot, tmp_path, name):
    import bpy

    obj, _, _scene, folder = shot
    obj.name = name
    path = baked_file(bpy, addon, obj)
    assert path.parent == folder / "skinmodes_cache"
    assert {p.parent for p in folder.rglob("*") if p.is_file()} <= {folder, folder / "skinmodes_cache"}
    assert [p.name for p in tmp_path.iterdir()] == ["shot"]
