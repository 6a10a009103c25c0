"""Task reports: one file per task whatever its outcome, merged into one job report; farm progress lines."""

import json

import pytest


def test_reports_merge_into_one_job_report(addon, tmp_path):
    reports = addon.farm.reports
    ok = {"seconds": 1.5, "frames_baked": 8, "files": ["/c/Body-1.pc2"]}
    reports.write_report(tmp_path, "prepare", "/s/s1.blend", "Body", 0, {"seconds": 3.0}, "")
    reports.write_report(tmp_path, "bake", "/s/s1.blend", "Body", 0, ok, "")
    reports.write_report(tmp_path, "bake", "/s/s2.blend", "Body", 1, None, "skinmodes: error: no prepared model")
    job = reports.merge_reports(tmp_path)
    assert (job["tasks"], job["prepared"], job["baked"], job["frames_baked"]) == (3, 1, 1, 8)
    assert (job["prepare_seconds"], job["bake_seconds"], job["files"]) == (3.0, 1.5, ["/c/Body-1.pc2"])
    assert job["failed"] == [
        {
            "command": "bake",
            "blend": "/s/s2.blend",
            "object": "Body",
            "exit_code": 1,
            "error": "skinmodes: error: no prepared model",
        }
    ]
    assert json.loads((tmp_path / "job.json").read_text()) == job
    assert reports.merge_reports(tmp_path)["tasks"] == 3  # job.json itself is never merged
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_report_names_are_readable_and_unique(addon, tmp_path):
    path = addon.farm.report_path
    a = path(tmp_path, "bake", "/s/a/shot.blend", "Body L")
    assert a.name.startswith("bake-shot-Body_L-") and a.suffix == ".json"
    assert (
        len(
            {
                a,
                path(tmp_path, "bake", "/s/b/shot.blend", "Body L"),
                path(tmp_path, "bake", "/s/a/shot.blend", "Body_L"),
            }
        )
        == 3
    )


def test_no_reports_is_one_line(addon, tmp_path):
    with pytest.raises(addon.api.SkinmodesError, match="no task reports in"):
        addon.farm.merge_reports(tmp_path)


def test_openjd_progress_lines(addon, capsys):
    bake = addon.farm.openjd_progress("bake")
    bake("reading the character", 0.0)
    bake("modes and clusters", 0.5)
    bake("baking frames", 0.5)
    bake("baking frames", 1.0)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "openjd_status: skinmodes bake: reading the character",
        "openjd_progress: 0.0",
        "openjd_status: skinmodes bake: modes and clusters",
        "openjd_progress: 10.0",
        "openjd_status: skinmodes bake: baking frames",
        "openjd_progress: 60.0",
        "openjd_progress: 100.0",
    ]
