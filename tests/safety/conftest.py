"""Fixtures of the safety suite.

The add-on lane's own fixtures (real Blender, the extension installed as
Blender installs it, a fresh scene per test, the small creature) are
imported, not copied; :func:`shot` adds a saved .blend with its caches next
to it.
"""

import pytest

from tests.addon.conftest import addon, bpy_scene, creature, dev_zip, fresh_scene  # noqa: F401


@pytest.fixture
def shot(creature, tmp_path):  # noqa: F811 - the imported fixture, requested by name
    """The creature saved as ``tmp_path/shot/shot.blend``, caches in ``//skinmodes_cache/`` beside it."""
    import bpy

    obj, arm, scene = creature
    obj.skinmodes.cache_dir = "//skinmodes_cache/"
    folder = tmp_path / "shot"
    folder.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / "shot.blend"))
    return obj, arm, scene, folder
