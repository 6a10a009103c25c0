"""The README's first command, ``python3.11 tasks.py demo``, keeps working (``python -m tools.demo``).

It runs in a subprocess into a folder of its own: the demo builds and installs
the extension into a throw-away Blender profile, bakes headless through the
CLI entry point, and writes the .blend, the point cache, a picture and a
summary.  No timing is asserted; the bake must move the tail tip (the
creature's softest part) visibly, by more than a millimetre.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SKINMODES_LANE") == "4.2", reason="the demo runs in the main lane")
def test_the_demo_writes_its_files(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tools.demo", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (tmp_path / "creature.blend").exists() and (tmp_path / "jiggle.png").exists()
    assert Path(summary["pc2"]).exists() and summary["pc2"].endswith(".pc2")
    assert summary["max_secondary_m"]["tail_tip"] > 1e-3
