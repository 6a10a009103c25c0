"""Fixtures of the farm tests: three small saved shots, two characters, one of them in two shots."""

import pytest

from testkit.farm_jobs import build_shot
from testkit.farm_jobs import fake_blender as write_fake_blender

# The shots: file -> (object, detail, hop).  Creature is in s1 and s2 with different animation (hop):
# one character; Blob (coarser) is the second, in s2 and s3.
SHOTS = {
    "s1": [("Creature", 12, 0.25)],
    "s2": [("Creature", 12, 0.4), ("Blob", 10, 0.3)],
    "s3": [("Blob", 10, 0.2)],
}
FRAMES = (1, 8)


@pytest.fixture
def shots(addon, tmp_path):
    """tmp_path/shots/s1.blend, s2.blend, s3.blend (see SHOTS); caches in //skinmodes_cache/ by default."""
    folder = tmp_path / "shots"
    folder.mkdir()
    for name, parts in SHOTS.items():
        build_shot(folder / f"{name}.blend", parts, FRAMES, target_tets=800, modes=6, clusters=16, substeps=1)
    return folder


@pytest.fixture
def fake_blender(tmp_path):
    """``blender`` for OpenJD tasks, the extension enabled from tmp_path/profile (install it there first,
    e.g. with run_cli)."""
    return write_fake_blender(tmp_path / "blender", tmp_path / "profile")
