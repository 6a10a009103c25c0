"""Issue 28: ``skinmodes farm`` writes a bundle that ``openjd check`` passes and ``openjd run`` runs whole:
each character prepared once, every bake equal bit for bit to a bake on the desk, and a Bake task without
its prepared model refused in one line with nothing written."""

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.farm_jobs import ROOT
from tests.addon.farm.conftest import SHOTS
from tests.addon.helpers import run_cli

pytest.importorskip("openjd.cli", reason="openjd-cli is in requirements/main.txt (tests only)")
OPENJD = [sys.executable, "-m", "openjd"]


def openjd(*args, timeout=600):
    return subprocess.run([*OPENJD, *args], capture_output=True, text=True, timeout=timeout)


def files_in(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def desk_bakes(blender, folder):
    """Bake every object of every shot in ``folder`` with the plain command, one after another as on one desk
    (each prepares its own character into //skinmodes_cache/): {(shot, object): the .pc2's bytes}."""
    out = {}
    for shot, parts in SHOTS.items():
        for name, *_ in parts:
            args = ["-b", "--command", "skinmodes", "bake", "--blend", str(folder / f"{shot}.blend"), "--object", name]
            done = subprocess.run([str(blender), *args, "--frames", "1-8"], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            out[shot, name] = Path(json.loads(done.stdout)["files"][0]).read_bytes()
    return out


def test_a_farm_job_prepares_each_character_once_and_bakes_as_the_desk_does(
    addon, dev_zip, shots, fake_blender, tmp_path
):
    desk = tmp_path / "desk"
    shutil.copytree(shots, desk)
    bundle, cache = tmp_path / "bundle", tmp_path / "farm_cache"
    out = run_cli(
        dev_zip, tmp_path, "farm", str(shots), "--out", str(bundle), "--cache-dir", str(cache), "--frames", "1-8"
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert (summary["shots"], summary["prepare_tasks"], summary["bake_tasks"], summary["bake_steps"]) == (3, 2, 4, 2)
    assert sorted(summary["characters"].values()) == ["s1.blend:Creature", "s2.blend:Blob"]
    flamenco = json.loads(Path(summary["flamenco_job"]).read_text())  # the same job for Flamenco (test_flamenco)
    assert flamenco["settings"]["cache_dir"] == str(cache) and (bundle / "skinmodes_bake.js").is_file()
    template = bundle / "template.yaml"
    check = openjd("check", str(template))
    assert check.returncode == 0 and "passes validation" in check.stdout, check.stdout + check.stderr
    values = (bundle / "parameter_values.yaml").read_text()
    assert '"CacheDir"' in values and str(cache) in values
    blender = f"Blender={fake_blender}"
    assert summary["run_locally"] == f"openjd run {template} -p file://{bundle / 'openjd_parameters.yaml'}"
    params = ("-p", f"file://{bundle / 'openjd_parameters.yaml'}", "-p", blender)

    # Bake before Prepare: each task refuses in one line; no shot, no cache file changes.
    before = files_in(shots)
    run = openjd("run", str(template), *params, "--step", "Bake", "--no-run-dependencies")
    assert run.returncode != 0
    said = [line for line in run.stdout.splitlines() if "skinmodes: error:" in line]
    assert said and "no prepared model for 'Creature'" in said[0] and "Prepare" in said[0], run.stdout[:3000]
    assert files_in(shots) == before
    assert not list(cache.glob("*.pc2")) and not list(cache.glob("*.npz"))
    refused = [json.loads(p.read_text()) for p in (cache / "reports").glob("bake-*.json")]
    assert [r["exit_code"] for r in refused] == [1]  # openjd run stops at the first failed task; it says why
    assert all(r["error"].startswith("skinmodes: error: no prepared model for") for r in refused)

    t0 = time.perf_counter()
    run = openjd("run", str(template), *params)
    wall = time.perf_counter() - t0
    assert run.returncode == 0, run.stdout[-5000:]
    assert run.stdout.count("openjd_progress: 100.0") >= 6  # every Prepare and Bake task said it finished
    job = json.loads((cache / "reports" / "job.json").read_text())
    assert (job["prepared"], job["baked"], job["failed"]) == (2, 4, [])
    assert len(list(cache.glob("model-*.npz"))) == 2  # one prepared model per character, shared by its shots
    assert len(set(job["files"])) == 4  # one shared folder, and no two shots' caches share a name
    print(f"farm job: {wall:.1f} s wall for 2 prepares and 4 bakes ({job['prepare_seconds']} s preparing)")

    # Each saved shot plays its farm caches; each cache is bit for bit the desk's.
    farm = {}
    for report in job["reports"]:
        if report["command"] == "bake":
            farm[Path(report["blend"]).stem, report["object"]] = Path(report["summary"]["files"][0]).read_bytes()
    assert farm == desk_bakes(fake_blender, desk)
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(shots / "s2.blend"))
    for name in ("Creature", "Blob"):  # two objects of one shot, baked in two steps: both saves kept
        mod = bpy.data.objects[name].modifiers["Skinmodes Cache"]
        assert Path(bpy.path.abspath(mod.filepath)).resolve().parent == cache.resolve()


def test_the_documented_commands_parse_as_written(addon):
    """docs/farm.md's skinmodes command lines are the command line's own spelling (run for real above)."""
    doc = (ROOT / "docs" / "farm.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        line.strip() for line in (doc + readme).splitlines() if "blender" in line and "--command skinmodes" in line
    ]
    lines = [line for line in lines if line.startswith(("blender -b ", "blender --background ")) and " farm " in line]
    lines += [line for line in doc.splitlines() if line.startswith("blender -b shot.blend")]
    assert len(lines) >= 3, lines
    for line in lines:
        words = shlex.split(line)
        args = addon.cli.parser().parse_args(words[words.index("skinmodes") + 1 :])
        assert args.command in ("farm", "bake")
        assert args.command != "bake" or args.prepared_only
    assert "openjd run bundle/template.yaml -p file://bundle/openjd_parameters.yaml" in doc
    assert "    openjd run bundle/template.yaml\n" in readme  # the cache inside the bundle: its default
    assert "deadline bundle submit bundle/" in doc
