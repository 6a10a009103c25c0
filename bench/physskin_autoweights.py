"""Physics Skin From Bones Only against Blender's Automatic Weights on CesiumMan's bent elbow (issue 30).

``python -m bench.physskin_autoweights OUT.json``: in a throw-away Blender profile, installs the add-on
from a fresh package and writes :func:`testkit.physskin_auto.compare`'s figures to OUT.json.  Section 7
runs it in its own process (``bench/physskin.py``) because it imports bpy, which the sections before
the Blender ones must not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from testkit.blender_process import run_and_leave
from testkit.real_characters import ELBOW, install_addon


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    with tempfile.TemporaryDirectory(prefix="skinmodes-bench-autoweights-") as work:
        install_addon(Path(work))
        import bpy

        from testkit.physskin_auto import compare

        figures = compare(bpy, ELBOW, Path(work) / "scenes")
    out.write_text(json.dumps({"character": ELBOW.character, "elbow": [ELBOW.upper, ELBOW.lower], **figures}, indent=1))
    return 0


def figures_in_own_process() -> dict[str, Any]:
    """:func:`main`'s figures, run as ``python -m bench.physskin_autoweights`` in a child process."""
    with tempfile.TemporaryDirectory(prefix="skinmodes-bench-autoweights-out-") as tmp:
        out = Path(tmp) / "autoweights.json"
        subprocess.run([sys.executable, "-m", "bench.physskin_autoweights", str(out)], check=True, capture_output=True)
        return json.loads(out.read_text())


REGIONS = {"limb": "bent limb", "joint": "joint"}
ROWS = {
    ("painted", "lbs"): "painted weights, LBS (the Armature modifier)",
    ("painted", "physics"): "painted weights, physics skin (from weights)",
    ("automatic", "lbs"): "Blender's Automatic Weights, LBS",
    ("automatic", "physics"): "physics skin from bones only (no weights)",
}


def report_rows(a: dict[str, Any]) -> list[list[str]]:
    """One row per method: ΔV and inverted tets of the bent limb and of the joint, and the pinned share."""
    return [
        [
            label,
            *[f"{a[f'{src}_{m}_{r}_pct']:+.1f} %, {a[f'{src}_{m}_{r}_inverted']}" for r in REGIONS],
            f"{100 * a[f'{src}_pinned_share']:.1f} %" if m == "physics" else "",
        ]
        for (src, m), label in ROWS.items()
    ]


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-bench-autoweights-")
