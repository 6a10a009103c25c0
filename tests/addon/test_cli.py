"""The headless command: the documented exit codes and JSON summary, in a separate process."""

import json
from pathlib import Path

import pytest

from tests.addon.helpers import run_cli


@pytest.fixture
def shot(addon, tmp_path):
    import bpy

    from testkit.creature import build_creature

    obj, _ = build_creature(detail=12, frames=(1, 12))
    obj.skinmodes.target_tets = 2000
    obj.skinmodes.modes = 6
    obj.skinmodes.clusters = 20
    path = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def test_cli_bakes_a_saved_scene_and_prints_json(dev_zip, shot, tmp_path):
    out = run_cli(
        dev_zip, tmp_path, "bake", "--blend", str(shot), "--object", "Creature", "--frames", "1-12", "--output", "pc2"
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["frames"] == [1, 12] and summary["frames_baked"] == 12
    assert summary["output"] == "pc2" and summary["seconds"] > 0
    assert Path(summary["files"][0]).exists() and summary["saved"] == str(shot)
    # The saved file now plays the cache back; clearing it works from the CLI too.
    out = run_cli(dev_zip, tmp_path, "clear", "--blend", str(shot), "--object", "Creature")
    assert out.returncode == 0 and json.loads(out.stdout.strip().splitlines()[-1])["cleared"]


def test_cli_errors_are_one_line_with_exit_code_1(dev_zip, shot, tmp_path):
    out = run_cli(dev_zip, tmp_path, "bake", "--blend", str(shot), "--object", "Nobody")
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skinmodes: error: no object named 'Nobody'")
    out = run_cli(dev_zip, tmp_path, "bake", "--blend", str(shot), "--object", "Creature", "--frames", "9-3")
    assert out.returncode == 1 and "frame range" in out.stderr.strip().splitlines()[-1]
    # A flag derived from core/settings.py, out of its range: one line naming it and its range; the file unchanged.
    before = shot.read_bytes()
    out = run_cli(dev_zip, tmp_path, "bake", "--blend", str(shot), "--object", "Creature", "--wobble-hz", "0")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == "skinmodes: error: wobble_hz must lie in [0.05, 100], got 0.0"
    assert shot.read_bytes() == before


def test_every_setting_has_a_flag_and_the_flags_reach_the_bake(dev_zip, shot, tmp_path):
    from core.settings import SETTINGS

    out = run_cli(dev_zip, tmp_path, "bake", "--help")
    for st in SETTINGS:
        if st.name != "output":
            assert st.flag in out.stdout, st.flag
    out = run_cli(
        dev_zip,
        tmp_path,
        *("bake", "--blend", str(shot), "--object", "Creature", "--frames", "1-6", "--no-save"),
        *("--wobble-hz", "4.5", "--damping-ratio", "0.3", "--rest-state", "rest", "--tet-method", "lattice"),
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["warnings"] == [] and 0 < summary["max_offset_percent"] < 50


def test_cli_usage_errors_exit_2(dev_zip, shot, tmp_path):
    out = run_cli(dev_zip, tmp_path, "bake", "--object", "Creature", "--output", "gif")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("skinmodes: usage error:")


def test_cli_poses_reach_the_bake_and_are_saved_and_a_bad_one_changes_nothing(dev_zip, shot, tmp_path):
    """--pose FRAME[:CONTACT] replaces the object's training poses: the bake's summary lists the poses
    it blended, the saved .blend keeps them, and a contact that names no vertex group is refused in
    one line before anything changes."""
    import bpy

    before = shot.read_bytes()
    out = run_cli(
        dev_zip,
        tmp_path,
        *("bake", "--blend", str(shot), "--object", "Creature", "--frames", "1-12"),
        "--pose",
        "6:gone",
    )
    assert out.returncode == 1 and shot.read_bytes() == before
    assert (
        out.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "skinmodes: error: the contact 'gone' of the pose at frame 6 is neither 'auto', 'none' nor a vertex group"
        )
    )
    out = run_cli(
        dev_zip,
        tmp_path,
        *("bake", "--blend", str(shot), "--object", "Creature", "--frames", "1-12"),
        *("--pose", "6", "--pose", "10:none"),
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert [f for f, _ in summary["poses"]] == [6, 10] and summary["poses"][1][1] == 0
    bpy.ops.wm.open_mainfile(filepath=str(shot))
    poses = [(p.frame, p.contact) for p in bpy.data.objects["Creature"].skinmodes.poses]
    assert poses == [(6, "AUTO"), (10, "NONE")]
    out = run_cli(dev_zip, tmp_path, "bake", "--object", "Creature", "--pose", "x")
    assert out.returncode == 2 and "FRAME[:CONTACT[:MODE]]" in out.stderr.strip().splitlines()[-1]


def test_a_pose_spells_its_contact_mode_last(addon):
    """FRAME[:CONTACT[:MODE]]: a trailing stick / one-sided is the mode; a vertex group may itself hold ':'."""
    parse = addon.cli._pose
    assert parse("40") == (40, "auto")
    assert parse("40:crease") == (40, "crease")
    assert parse("40:auto:one-sided") == (40, "auto", "one-sided")
    assert parse("40:arm:crease:Stick") == (40, "arm:crease", "stick")
    assert parse("40:arm:crease") == (40, "arm:crease")
