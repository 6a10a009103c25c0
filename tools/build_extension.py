"""Stage, build and validate the skinmodes extension (``testkit/build_extension.py`` says how).

    python -m tools.build_extension stage --dest DIR [--with-wheels]
    python -m tools.build_extension build [--out DIR] [--platform linux-x64]
    python -m tools.build_extension dev-zip --out FILE     # no wheels, for tests

Standard library only: it runs in every environment, including the lint one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testkit.build_extension import PLATFORM_TAGS, ROOT, build, dev_zip, stage


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage")
    s.add_argument("--dest", type=Path, required=True)
    s.add_argument("--with-wheels", action="store_true")
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, default=ROOT / "build" / "dist")
    b.add_argument("--platform", action="append", choices=sorted(PLATFORM_TAGS))
    d = sub.add_parser("dev-zip")
    d.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "stage":
        print(stage(a.dest, a.with_wheels))
    elif a.cmd == "build":
        for z in build(a.out, a.platform):
            print(f"built {z} ({z.stat().st_size / 1e6:.1f} MB)")
    else:
        print(dev_zip(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
