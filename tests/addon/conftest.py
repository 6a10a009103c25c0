"""Fixtures for tests in real Blender (the bpy module).

The add-on is installed the way Blender installs an extension: a package is
built with Blender's own extension tool and installed with
``bpy.ops.extensions.package_install_files`` (the "Install from Disk" path)
into the temporary user profile set up in ``tests/conftest.py``.  Between
tests the scene is reset with ``read_homefile(use_empty=True,
use_factory_startup=True)``, which keeps add-ons registered.
"""

from __future__ import annotations

import importlib

import pytest

from testkit import build_extension
from testkit.build_extension import ADDON_MODULE


@pytest.fixture(scope="session")
def dev_zip(tmp_path_factory):
    return build_extension.dev_zip(tmp_path_factory.mktemp("dist") / "skinmodes-dev.zip")


@pytest.fixture(scope="session")
def addon(dev_zip):
    import bpy

    result = bpy.ops.extensions.package_install_files(
        filepath=str(dev_zip), repo="user_default", enable_on_install=True
    )
    assert result == {"FINISHED"}
    assert ADDON_MODULE in bpy.context.preferences.addons, "the extension did not enable"
    return importlib.import_module(ADDON_MODULE)


@pytest.fixture(autouse=True)
def fresh_scene(request):
    """An empty scene, and no per-process state of an earlier test (registry.reset), before every add-on test."""
    if "addon" in request.fixturenames or "bpy_scene" in request.fixturenames:
        import bpy

        bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
        request.getfixturevalue("addon").registry.reset()
    yield


@pytest.fixture
def bpy_scene(addon):
    import bpy

    return bpy.context.scene


@pytest.fixture
def creature(addon, tmp_path):
    """A small creature (about 600 vertices) with a 4-bone chain and a 24-frame hop."""
    import bpy

    from testkit.creature import build_creature

    obj, arm = build_creature(detail=16, frames=(1, 24))
    s = obj.skinmodes
    s.cache_dir = str(tmp_path / "cache") + "/"
    s.target_tets = 3000
    s.modes = 8
    s.clusters = 30
    s.substeps = 1
    return obj, arm, bpy.context.scene
