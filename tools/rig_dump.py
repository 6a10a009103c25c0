"""Read real characters out of Blender into core arrays (``build/rigs/*.npz``), so the core can be measured without it.

    .venvs/main/bin/python -m tools.rig_dump [--out build/rigs] [--only fox_walk ...]

What each file holds: ``testkit/rig_dump.py``.  The add-on is installed into a
throw-away Blender profile first.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from testkit.blender_process import run_and_leave
from testkit.build_extension import ROOT
from testkit.real_characters import install_addon
from testkit.rig_dump import DUMPS, dump


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "rigs")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="skinmodes-rig-dump-"))
    try:
        install_addon(work)
        import bpy

        for name in args.only or list(DUMPS):
            print(f"[rig dump] {name}", file=sys.stderr, flush=True)
            dump(bpy, name, args.out / f"{name}.npz")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    run_and_leave(main, "skinmodes-rig-dump-profile-")
