"""The stand-in for ``blender`` runs only the skinmodes command, as a farm task calls it."""

import subprocess

from testkit.farm_jobs import fake_blender


def test_the_fake_blender_refuses_other_arguments(tmp_path):
    path = fake_blender(tmp_path / "blender", tmp_path / "profile")
    out = subprocess.run([str(path), "-b", "shot.blend"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("fake blender: -b shot.blend")
