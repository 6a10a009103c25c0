"""Issue 39 (low): a damaged .blend.

Before: ``skinmodes bake --blend damaged.blend`` said "unexpected RuntimeError: Error: Cannot read file …",
and one damaged shot in a folder stopped the whole ``farm`` command.  Now the bake says in one line that the
file cannot be opened, and ``farm`` skips that shot, names it in its summary, and writes the job for the
others.  Exact: the summary's counts and the bundle's tasks.
"""

import json

from tests.addon.farm.conftest import shots  # noqa: F401 - the farm's three small shots, requested by name
from tests.addon.helpers import run_cli


def damage(path):
    """A .blend cut short: Blender cannot read it."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def test_the_farm_skips_a_damaged_shot_says_so_and_writes_the_others(addon, dev_zip, shots, tmp_path):  # noqa: F811
    damage(shots / "s3.blend")
    before = (shots / "s3.blend").read_bytes()
    bundle = tmp_path / "bundle"
    out = run_cli(dev_zip, tmp_path, "farm", str(shots), "--out", str(bundle), "--frames", "1-8")
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert (summary["shots"], summary["bake_tasks"]) == (2, 3)  # s1: Creature; s2: Creature, Blob
    (line,) = summary["skipped"]
    assert line.startswith("skipped s3.blend cannot be opened: it is damaged or not a .blend file"), line
    assert "\n" not in line and "s3.blend" not in (bundle / "template.yaml").read_text()
    assert (shots / "s3.blend").read_bytes() == before


def test_a_farm_of_damaged_shots_only_is_refused_in_one_line(addon, dev_zip, shots, tmp_path):  # noqa: F811
    for name in ("s1", "s2", "s3"):
        damage(shots / f"{name}.blend")
    out = run_cli(dev_zip, tmp_path, "farm", str(shots), "--out", str(tmp_path / "bundle"))
    assert out.returncode == 1
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("skinmodes: error: none of the shots has an object to bake: s1.blend cannot be opened")
    assert not (tmp_path / "bundle").exists()


def test_a_bake_of_a_damaged_blend_says_so_in_one_line(addon, dev_zip, shots, tmp_path):  # noqa: F811
    damage(shots / "s1.blend")
    out = run_cli(dev_zip, tmp_path, "bake", "--blend", str(shots / "s1.blend"), "--object", "Creature")
    assert out.returncode == 1
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("skinmodes: error: s1.blend cannot be opened: it is damaged or not a .blend file"), line
    assert "unexpected" not in line
