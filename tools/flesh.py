"""Does the flesh jiggle at the Wobble asked?  Issue 37's per-region table on real characters.

    .venvs/main/bin/python -m tools.rig_dump                     # once: Blender -> build/rigs
    .venvs/main/bin/python -m tools.flesh [--wobble 3 1] [--only husky frog ...]
    .venvs/main/bin/python -m tools.flesh --only frog husky --plot docs/flesh_jiggles.png

What is measured: ``testkit/flesh.py``; the limits: ``tests/testkit/test_flesh.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testkit.flesh import REGIONS, RIGS, markdown, measure, plot, spectrum_markdown


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rigs", type=Path, default=RIGS)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--wobble", nargs="*", type=float, default=[3.0])
    ap.add_argument("--plot", type=Path, default=None, help="write a picture of the characters at the first Wobble")
    args = ap.parse_args(argv)
    names = args.only or list(REGIONS)
    missing = [n for n in names if not (args.rigs / f"{n}.npz").exists()]
    if missing:
        print(f"{', '.join(missing)}: no rig dump in {args.rigs}; run python -m tools.rig_dump first", file=sys.stderr)
        return 2
    if args.plot is not None:
        print(plot([measure(n, args.wobble[0], rigs=args.rigs) for n in names], args.plot))
        return 0
    for hz in args.wobble:
        reports = [measure(n, hz, rigs=args.rigs) for n in names]
        print(markdown(reports))
        print(spectrum_markdown(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
