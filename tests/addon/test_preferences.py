"""The add-on's preferences (preferences.py): the default cache folder and the BLAS thread count.

Paths are compared exactly (both sides are normalised absolute paths); thread
counts are integers read back from the libraries themselves.
"""

from pathlib import Path

import pytest

from tests.addon.test_ui import draw, texts


@pytest.fixture
def prefs(addon):
    """The add-on's preferences, put back as they were after the test."""
    import bpy

    p = bpy.context.preferences.addons[addon.__name__].preferences
    before = (p.cache_dir, p.threads)
    yield p
    p.cache_dir, p.threads = before


def test_the_default_cache_folder_serves_objects_whose_own_folder_is_empty(addon, creature, prefs, tmp_path):
    import bpy

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    s = obj.skinmodes
    folder = addon.session.cache_folder
    assert prefs.cache_dir == "//skinmodes_cache/"  # the factory default: beside the .blend, as before
    s.cache_dir = ""
    assert folder(s) == tmp_path / "skinmodes_cache"
    prefs.cache_dir = "//studio_cache/"  # "//" is the .blend's folder
    assert folder(s) == tmp_path / "studio_cache"
    prefs.cache_dir = str(tmp_path / "farm" / "caches") + "/"
    assert folder(s) == tmp_path / "farm" / "caches"
    s.cache_dir = "//mine/"  # an object's own folder always wins
    assert folder(s) == tmp_path / "mine"
    prefs.cache_dir = ""  # an empty preference falls back to //skinmodes_cache/
    s.cache_dir = ""
    assert folder(s) == tmp_path / "skinmodes_cache"


def test_a_bake_writes_its_point_cache_into_the_default_cache_folder(addon, creature, prefs, tmp_path):
    import bpy

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    obj.skinmodes.cache_dir = ""
    prefs.cache_dir = "//from_preferences/"
    scene.frame_end = 4
    assert bpy.ops.skinmodes.bake() == {"FINISHED"}
    assert Path(bpy.path.abspath(obj.skinmodes.bake_file)).parent == tmp_path / "from_preferences"
    assert list((tmp_path / "from_preferences").glob("*.pc2"))


def test_threads_limit_every_openblas_and_zero_gives_their_count_back(addon, prefs):
    libraries = addon.threads.blas_libraries()
    assert {lib.owner for lib in libraries} == {"numpy", "scipy"}, libraries  # both wheels bundle OpenBLAS
    original = {lib.path: lib.threads for lib in libraries}
    target = 2 if 1 in original.values() else 1  # differs from at least one library's own count
    prefs.threads = target
    assert {lib.threads for lib in libraries} == {target}
    prefs.threads = 0
    assert {lib.path: lib.threads for lib in libraries} == original


def test_disabling_the_add_on_gives_the_threads_back(addon):
    import addon_utils
    import bpy

    libraries = addon.threads.blas_libraries()
    original = {lib.path: lib.threads for lib in libraries}
    prefs = bpy.context.preferences.addons[addon.__name__].preferences
    prefs.threads = 2 if 1 in original.values() else 1
    addon_utils.disable(addon.__name__, default_set=True)
    try:
        assert {lib.path: lib.threads for lib in libraries} == original
    finally:
        addon_utils.enable(addon.__name__, default_set=True)
    assert bpy.context.preferences.addons[addon.__name__].preferences.threads == 0


def test_the_preferences_show_what_threads_applies_to(addon, prefs):
    import bpy

    prefs.threads = 1
    shown = draw(bpy, lambda me, _context: addon.preferences.draw_rows(me.layout, prefs))
    fields = [i["rna"].split("[")[0] for i in shown if "rna" in i]
    assert fields == ["SkinmodesPreferences.cache_dir", "SkinmodesPreferences.threads"]
    libraries = addon.threads.blas_libraries()
    assert [f"{lib.owner}: {lib.path.name}, 1 threads" for lib in libraries] == texts(shown)[-len(libraries) :]


def test_a_new_object_uses_the_preference_and_its_panel_says_so(addon, creature, prefs, tmp_path):
    """A new object's Cache Folder is empty: the preference serves it without the user clearing anything."""
    import bpy

    from tests.addon.test_ui import draw, texts

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    obj.skinmodes.property_unset("cache_dir")  # as on a new object (the fixture sets a folder)
    assert obj.skinmodes.cache_dir == ""  # the setting's default (core/settings.py)
    prefs.cache_dir = "//studio_cache/"
    assert addon.session.cache_folder(obj.skinmodes) == tmp_path / "studio_cache"
    assert "Default: //studio_cache/" in texts(draw(bpy, addon.ui.SKINMODES_PT_output.draw))
    obj.skinmodes.cache_dir = "//mine/"  # an object's own folder: no hint
    assert not any(t.startswith("Default:") for t in texts(draw(bpy, addon.ui.SKINMODES_PT_output.draw)))
