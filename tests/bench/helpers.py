"""Shared by the bench's section tests: one section run in quick mode in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_section(name: str, out: Path) -> tuple[dict, Path]:
    """``python -m bench --quick --only NAME --out OUT``: its results.json (asserting exit 0) and OUT."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", name, "--out", str(out)],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / "results.json").read_text()), out
