"""Stage, build and validate the skinmodes extension with Blender's own tool.

The repository keeps the add-on (``skinmodes_addon/``) and the numeric core
(``core/``) side by side, with a committed link ``skinmodes_addon/core ->
../core`` so the add-on's relative imports of core resolve in the source tree;
an extension needs core copied in, with the manifest at the top.  ``stage``
assembles that layout:

    <dest>/blender_manifest.toml
    <dest>/__init__.py, props.py, ...   (from skinmodes_addon/)
    <dest>/core/                        (from core/, through the link; imported relatively)
    <dest>/wheels/*.whl                 (only for a release build)
    <dest>/LICENSE

``build`` downloads the wheels the manifest lists (into ``build/wheels``,
reused when present), stages, and runs ``blender_ext.py build
--split-platforms`` from the installed ``bpy`` module: one zip per platform,
each validated with ``blender_ext.py validate``.  ``tools/build_extension.py``
is its command line.

Standard library only: it runs in every environment, including the lint one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "blender_manifest.toml"
WHEEL_CACHE = ROOT / "build" / "wheels"
# The test lanes run side by side (tasks.py test): each stages the package in its own folder.
LANE = os.environ.get("SKINMODES_LANE", "")
WHEELS_BLOCK = re.compile(r"# BEGIN WHEELS\n.*?# END WHEELS\n", re.S)
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
# core/ rooms that only the tests and the benchmark use: never shipped.
VALIDATION_ROOMS = ("validation",)


def _ignore_addon(folder: str, names: list[str]) -> set[str]:
    """What ``stage`` leaves out of skinmodes_addon/: caches, and the link to core (copied on its own)."""
    left_out = set(IGNORE(folder, names))
    if Path(folder).resolve() == (ROOT / "skinmodes_addon").resolve():
        left_out.add("core")
    return left_out


def _ignore_core(folder: str, names: list[str]) -> set[str]:
    """What ``stage`` leaves out of core/: caches, and the validation room at core's top."""
    left_out = set(IGNORE(folder, names))
    if Path(folder).resolve() == (ROOT / "core").resolve():
        left_out |= {n for n in names if n in VALIDATION_ROOMS}
    return left_out


# Blender platform name -> the wheel platform-tag fragments that serve it.
PLATFORM_TAGS = {
    "linux-x64": ("manylinux", "linux_x86_64"),
    "macos-arm64": ("macosx_", "arm64"),
    "macos-x64": ("macosx_", "x86_64"),
    "windows-x64": ("win_amd64",),
}


def manifest() -> dict:
    with MANIFEST.open("rb") as fh:
        return tomllib.load(fh)


def _lane_folder(name: str) -> Path:
    """build/NAME, or build/NAME-LANE in a test lane other than the main one."""
    return ROOT / "build" / (f"{name}-{LANE}" if LANE else name)


def wheel_files() -> list[str]:
    """File names of the wheels the manifest lists."""
    return [Path(w).name for w in manifest().get("wheels", [])]


def wheel_serves(filename: str, platform: str) -> bool:
    """Whether a wheel file name can be installed on a Blender platform."""
    tag = filename[:-4].split("-")[-1]
    if tag == "any":
        return True
    frags = PLATFORM_TAGS[platform]
    return all(f in tag for f in frags) if platform.startswith("macos") else any(f in tag for f in frags)


def download_wheels(platforms: list[str] | None = None) -> list[Path]:
    """Fetch each wheel the manifest names, by its exact tags, into build/wheels.

    A wheel already in the cache is reused.  Each file name is parsed into
    distribution, version, Python tag and platform tags and handed to
    ``pip download --only-binary`` with exactly those, so pip can only pick
    that file; anything else it returns is an error.
    """
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in wheel_files():
        if platforms and not any(wheel_serves(name, p) for p in platforms):
            continue
        target = WHEEL_CACHE / name
        paths.append(target)
        if target.exists():
            continue
        dist, version, pytag, abi, plat = name[:-4].split("-")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(WHEEL_CACHE),
            f"{dist}=={version}",
        ]
        if plat != "any":
            cmd += ["--only-binary=:all:", "--implementation", "cp", "--abi", abi, "--python-version", pytag[2:]]
            for p in plat.split("."):
                cmd += ["--platform", p]
        print(f"downloading {name}", flush=True)
        # Into a folder of its own, then renamed: another lane may be fetching the same wheel.
        with tempfile.TemporaryDirectory(dir=WHEEL_CACHE, prefix=".download-") as tmp:
            cmd[cmd.index(str(WHEEL_CACHE))] = tmp
            subprocess.run(cmd, check=True)
            got = Path(tmp) / name
            if not got.exists():
                raise SystemExit(f"pip did not produce {name}; check the wheel name in blender_manifest.toml")
            os.replace(got, target)
    return paths


def stage(dest: Path, with_wheels: bool = False) -> Path:
    """Assemble the extension's source tree at ``dest`` (replaced if present)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(ROOT / "skinmodes_addon", dest, ignore=_ignore_addon)
    # core/ itself, not the link: the same files, and a checkout without symlinks stages the same.
    shutil.copytree(ROOT / "core", dest / "core", ignore=_ignore_core)
    shutil.copy2(ROOT / "LICENSE", dest / "LICENSE")
    text = MANIFEST.read_text()
    if with_wheels:
        (dest / "wheels").mkdir()
        for w in download_wheels():
            shutil.copy2(w, dest / "wheels" / w.name)
    else:
        # A development stage relies on the environment's scipy; Blender would
        # refuse a manifest naming wheels that are not in the package.
        text = WHEELS_BLOCK.sub("", text)
    (dest / "blender_manifest.toml").write_text(text)
    return dest


def blender_ext() -> Path:
    """Path of Blender's extension tool inside the installed ``bpy`` module."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bpy is not installed in this environment; run: python3.11 tasks.py build")
    base = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(base.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        raise SystemExit(f"blender_ext.py not found under {base}")
    return found[-1]


def _ext(*args: str) -> None:
    subprocess.run([sys.executable, str(blender_ext()), *args], check=True)


def build(out: Path, platforms: list[str] | None = None) -> list[Path]:
    """Build one validated zip per platform (all the manifest's by default)."""
    src = stage(_lane_folder("stage") / "skinmodes", with_wheels=True)
    if platforms:
        # Restrict the staged manifest (and wheels) to the requested platforms.
        text = (src / "blender_manifest.toml").read_text()
        text = re.sub(r"platforms = \[.*?\]", "platforms = [" + ", ".join(f'"{p}"' for p in platforms) + "]", text)
        keep = {n for n in wheel_files() if any(wheel_serves(n, p) for p in platforms)}
        text = WHEELS_BLOCK.sub(
            "# BEGIN WHEELS\nwheels = [\n"
            + "".join(f'  "./wheels/{n}",\n' for n in wheel_files() if n in keep)
            + "]\n# END WHEELS\n",
            text,
        )
        (src / "blender_manifest.toml").write_text(text)
        for w in (src / "wheels").iterdir():
            if w.name not in keep:
                w.unlink()
    out.mkdir(parents=True, exist_ok=True)
    _ext("build", "--source-dir", str(src), "--output-dir", str(out), "--split-platforms")
    m = manifest()
    zips = [out / f"{m['id']}-{m['version']}-{p.replace('-', '_')}.zip" for p in (platforms or m["platforms"])]
    for z in zips:
        if not z.exists():
            raise SystemExit(f"expected {z} from blender_ext build")
        _ext("validate", str(z))
    return zips


def dev_zip(out: Path) -> Path:
    """A wheel-less package for tests: the environment already has scipy."""
    src = stage(_lane_folder("stage-dev") / "skinmodes", with_wheels=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    _ext("build", "--source-dir", str(src), "--output-filepath", str(out))
    _ext("validate", str(out))
    return out


ADDON_MODULE = "bl_ext.user_default.skinmodes"


def install_dev(work: Path) -> ModuleType:
    """Install a dev package into the running ``bpy`` once per process, as a user does; return the add-on module.

    Everything that drives the add-on from Python (the demo, the benchmark's
    Blender sections, the real-characters harness) installs through here: a
    second install would re-register the add-on under the caller's feet.
    work: a folder for the package; the installed copy lives in the profile
    BLENDER_USER_RESOURCES names (set it before bpy is first imported).
    """
    import bpy  # only callers with the bpy module get here; this file stays standard-library otherwise

    if ADDON_MODULE not in bpy.context.preferences.addons:
        zip_path = dev_zip(work / "skinmodes-dev.zip")
        result = bpy.ops.extensions.package_install_files(
            filepath=str(zip_path), repo="user_default", enable_on_install=True
        )
        if result != {"FINISHED"} or ADDON_MODULE not in bpy.context.preferences.addons:
            raise RuntimeError(f"the extension built at {zip_path} did not install into Blender")
    return importlib.import_module(ADDON_MODULE)
