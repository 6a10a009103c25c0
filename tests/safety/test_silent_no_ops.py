"""Issue 39, items 2 and 3, from the command line: a setting that asks for what the bake cannot do is never
silently ignored (docs/safety.md says, per case, refused or warned).

- ``--locomotion true`` with no stored gait exited 0 with plain jiggle and no message, on a rigged character
  too.  Now it exits 1 with one line, and the .blend and its caches are as they were (exact bytes).
- A Ground at height 100 over a character at 0-1 baked without a word.  Now the summary warns in one line,
  naming the frame and the Ground's Height, and the bake is done.
"""

import json

from tests.addon.helpers import disk_fingerprint
from tests.safety import faults
from tests.safety.conftest import run_command


def test_locomotion_without_a_stored_gait_is_refused_by_the_command_line(addon, installed, tmp_path):
    name, folder = installed
    before = disk_fingerprint(folder)
    out = run_command(tmp_path, "bake", "--blend", str(folder / "shot.blend"), "--object", name, "--locomotion", "true")
    assert out.returncode == 1, out.stderr[-2000:]
    line = faults.last_line(out.stderr)
    assert line.startswith("skinmodes: error: ") and "turn Locomotion off" in line, line
    assert disk_fingerprint(folder) == before


def test_a_ground_above_the_character_is_said_in_the_command_line_summary(addon, installed, tmp_path):
    name, folder = installed
    args = ("bake", "--blend", str(folder / "shot.blend"), "--object", name, "--frames", "1-4")
    out = run_command(tmp_path, *args, "--ground", "true", "--ground-height", "100")
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    (line,) = [w for w in summary["warnings"] if "under the Ground" in w]
    assert line.startswith("frame ") and "Height is 100" in line and "\n" not in line, line
