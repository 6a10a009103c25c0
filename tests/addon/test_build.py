"""The release package: built with Blender's own tool, validated, installed with its wheels.

The build downloads the wheels the manifest lists (cached in build/wheels).
The Linux package is installed into a fresh Blender profile in a separate
process, where scipy and wildmeshing must import from the extension's own
site-packages, the way they will on a user's machine.
"""

import os
import re
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

from testkit import build_extension

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def linux_zip(tmp_path_factory):
    (z,) = build_extension.build(tmp_path_factory.mktemp("dist"), platforms=["linux-x64"])
    return z


def test_manifest_declares_what_the_issue_asks():
    m = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert (m["id"], m["type"], m["blender_version_min"]) == ("skinmodes", "add-on", "4.2.0")
    assert m["license"] == ["SPDX:GPL-3.0-or-later"]
    assert set(m["permissions"]) == {"files"}
    assert set(m["platforms"]) == {"linux-x64", "macos-arm64", "macos-x64", "windows-x64"}
    wheels = [Path(w).name for w in m["wheels"]]
    for py in ("cp311", "cp313"):
        for plat in ("manylinux", "macosx_12_0_arm64", "macosx_10_13_x86_64", "win_amd64"):
            assert any(w.startswith("scipy-") and py in w and plat in w for w in wheels), (py, plat)


# Wheels that ship only because a wheel the add-on imports needs them (its Requires-Dist).
REQUIRED_BY = {"svgwrite": "wildmeshing"}


def test_every_wheel_is_imported_by_the_addon_or_needed_by_one_that_is():
    """A wheel nothing imports is megabytes in every zip for nothing (pyamg was, issue 11)."""
    m = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    dists = {Path(w).name.split("-")[0].lower() for w in m["wheels"]}
    source = "\n".join(p.read_text() for folder in ("core", "skinmodes_addon") for p in (ROOT / folder).rglob("*.py"))
    imported = set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", source, re.M))
    for dist in sorted(dists):
        assert dist in imported or REQUIRED_BY.get(dist) in imported, f"nothing imports {dist}: drop its wheels"
    assert "pyamg" not in dists


def test_linux_package_has_core_nested_and_the_linux_wheels(linux_zip):
    names = zipfile.ZipFile(linux_zip).namelist()
    assert "blender_manifest.toml" in names and "__init__.py" in names and "core/dynamics/simulator.py" in names
    # The add-on's rooms travel with it.
    assert {"registry.py", "session/__init__.py", "session/jobs.py", "bake/__init__.py", "bake/job.py"} <= set(names)
    # Every shipped room is there; the validation room (reference, scenes) is not.
    rooms = {n.split("/")[1] for n in names if n.startswith("core/") and n.count("/") == 2}
    assert {"geometry", "model", "subspace", "dynamics", "io"} <= rooms
    assert not any(n.startswith("core/validation/") for n in names)
    wheels = [n for n in names if n.endswith(".whl")]
    assert wheels and all("win_amd64" not in w and "macosx" not in w for w in wheels)
    assert any(w.startswith("wheels/scipy-") and "cp311" in w for w in wheels)
    assert not any(w.startswith("wheels/pyamg-") for w in wheels)


def test_linux_package_installs_and_its_wheels_import_inside_blender(linux_zip, tmp_path):
    script = textwrap.dedent(f"""
        import importlib.machinery, importlib.util, os, sys
        import bpy
        bpy.ops.extensions.package_install_files(filepath={str(linux_zip)!r}, repo="user_default",
                                                 enable_on_install=True)
        assert "bl_ext.user_default.skinmodes" in bpy.context.preferences.addons
        profile = os.environ["BLENDER_USER_RESOURCES"]
        site = [p for p in sys.path if p.startswith(profile) and p.endswith("site-packages")]
        assert site, sys.path
        for name in [m for m in list(sys.modules) if m.split(".")[0] in ("scipy", "wildmeshing")]:
            del sys.modules[name]
        # Blender puts the extension's site-packages after the environment's: load the two from it
        # by path (their submodules follow their package's __path__).
        for name in ("scipy", "wildmeshing"):
            spec = importlib.machinery.PathFinder.find_spec(name, [site[0]])
            sys.modules[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(sys.modules[name])
        import scipy.sparse.linalg, wildmeshing
        for mod in (scipy, wildmeshing):
            assert mod.__file__.startswith(site[0]), mod.__file__
        import bl_ext.user_default.skinmodes.core.dynamics.simulator
        print("OK", scipy.__version__, flush=True)
        # Two copies of scipy's compiled modules now share this process (the
        # environment's, dropped from sys.modules, and the extension's); skip
        # interpreter teardown, which is not what this test is about.
        from testkit.blender_process import leave
        leave(0)
    """)
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "profile"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "OK 1.15.3" in out.stdout
