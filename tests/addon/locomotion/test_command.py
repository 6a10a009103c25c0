"""``skinmodes gait`` (skinmodes_addon/locomotion/command.py) in a separate process, as a pipeline runs it.

One generation (3 restarts of 12 rollouts, 12 finalists judged on 10 s) on a ~200-vertex blob, then a
15-frame bake: about 30 s with the process's start.  Figures are checked for shape, not size: a one-generation
gait is weak (the gaits' quality is tests/core/locomotion/test_gait.py's).
"""

import json
from pathlib import Path

import pytest

from tests.addon.helpers import run_cli


@pytest.fixture
def shot(slug, tmp_path):
    import bpy

    path = tmp_path / "slug.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def test_gait_finds_bakes_and_saves_with_a_json_summary(dev_zip, shot, tmp_path):
    import bpy

    args = ["gait", "--blend", str(shot), "--object", "Slug", "--generations", "1", "--seed", "2"]
    out = run_cli(dev_zip, tmp_path, *args, "--direction", "-X", "--bake")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("objective", "distance_per_cycle", "body_lengths_per_10s", "heading_deg", "evaluations", "seconds"):
        assert isinstance(summary[key], float | int), key
    assert summary["evaluations"] == 3 * 12 + 12 and summary["direction"] == "NEG_X"
    assert summary["note"].startswith("gait found, ") and 0.0 <= summary["heading_deg"] <= 180.0
    assert summary["bake"]["frames_baked"] == 16 and Path(summary["bake"]["files"][0]).exists()
    assert summary["saved"] == str(shot)
    bpy.ops.wm.open_mainfile(filepath=str(shot))
    obj = bpy.data.objects["Slug"]
    gait = json.loads(obj["skinmodes_gait"])
    assert gait["settings"]["seed"] == 2 and gait["settings"]["direction"] == [-1.0, 0.0, 0.0]
    assert obj.skinmodes.locomotion and obj.skinmodes.gait_generations == 1


def test_gait_errors_are_one_line_with_the_usual_exit_codes(dev_zip, shot, tmp_path):
    before = shot.read_bytes()
    out = run_cli(dev_zip, tmp_path, "gait", "--blend", str(shot), "--object", "Nobody")
    assert out.returncode == 1 and out.stderr.strip().splitlines()[-1].startswith("skinmodes: error: no object")
    out = run_cli(dev_zip, tmp_path, "gait", "--blend", str(shot), "--object", "Slug", "--direction", "up")
    assert out.returncode == 2 and "a direction is +X, -X, +Y or -Y" in out.stderr
    assert shot.read_bytes() == before
