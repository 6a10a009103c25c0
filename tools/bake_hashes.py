"""Print (and optionally save) the sha256 of real bakes, to show a refactor changed no result.

    .venvs/main/bin/python -m tools.bake_hashes [--out hashes.json] [--compare before.json]

Exit status 1 when ``--compare`` finds a case whose hash differs.  The cases
are ``testkit/bake_hashes.py``'s; the add-on is installed from a fresh package
into a throw-away Blender profile.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from testkit.bake_hashes import all_hashes
from testkit.blender_process import run_and_leave
from testkit.real_characters import install_addon


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write the hashes here as JSON")
    ap.add_argument("--compare", type=Path, help="a JSON file written by --out on another commit")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="skinmodes-bake-hashes-install-") as work:
        install_addon(Path(work))
        import bpy

        hashes = all_hashes(bpy)
    if args.out:
        args.out.write_text(json.dumps(hashes, indent=1) + "\n")
    before = json.loads(args.compare.read_text()) if args.compare else {}
    differ = 0
    for key, digest in hashes.items():
        verdict = "" if not before else ("  same" if before.get(key) == digest else "  DIFFERS")
        differ += verdict == "  DIFFERS"
        print(f"{digest}  {key}{verdict}")
    return 1 if differ else 0


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-bake-hashes-profile-")
