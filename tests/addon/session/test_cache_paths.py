"""The cache folder the settings name, as an absolute path, whatever the working directory."""

import os
from pathlib import Path


def test_home_absolute_and_unsaved_relative_folders(addon, creature, tmp_path, monkeypatch):
    cache_paths = addon.session.cache_paths
    obj, _, _ = creature
    s = obj.skinmodes
    monkeypatch.chdir(tmp_path)  # never what a relative folder is relative to
    s.cache_dir = "~/caches/"
    assert cache_paths.cache_folder(s) == Path(os.path.expanduser("~/caches"))
    s.cache_dir = str(tmp_path / "a" / ".." / "b")
    assert cache_paths.cache_folder(s) == tmp_path / "b"
    s.cache_dir = "//here/"
    unsaved = cache_paths.unsaved_folder()
    assert cache_paths.cache_folder(s) == unsaved / "here"  # an unsaved file has no folder of its own
    assert unsaved.is_dir() and cache_paths.unsaved_folder() == unsaved and unsaved.name.startswith("skinmodes-")
