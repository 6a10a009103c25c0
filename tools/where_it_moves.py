"""Where the secondary motion goes on real characters: region table, before and after planted feet (issue 31).

    .venvs/main/bin/python -m tools.rig_dump            # once: Blender -> build/rigs
    .venvs/main/bin/python -m tools.where_it_moves [--only fox_walk ...]
    .venvs/main/bin/python -m tools.where_it_moves --only fox_run --plot docs/where_it_moves_fox.png

The variants and what is measured: ``testkit/where_it_moves.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.validation.where_it_moves import markdown
from testkit.where_it_moves import ROOT, TIPS, VARIANTS, measure, plot


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rigs", type=Path, default=ROOT / "build" / "rigs")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--plot", type=Path, default=None, help="write the picture of the first character here and stop")
    args = ap.parse_args(argv)
    if args.plot is not None:
        print(plot(args.rigs / f"{(args.only or ['fox_walk'])[0]}.npz", args.plot))
        return 0
    rows, summary = [], []
    for name in args.only or list(TIPS):
        path = args.rigs / f"{name}.npz"
        if not path.exists():
            print(f"{path} is missing: run python -m tools.rig_dump first", file=sys.stderr)
            return 2
        for variant, (planted, appendages) in VARIANTS.items():
            reports, whole = measure(path, planted, appendages)
            rows.append((name, variant, reports))
            summary.append(
                f"| {name} | {variant} | {whole['max']:.2f} | {whole['grounded']:.3f} | {whole['first']:.3f} "
                f"| {whole['settled']:.3f} |"
            )
    print(markdown(rows))
    print()
    print("| character | variant | body max % | grounded max % | first frame % | settled % |")
    print("|---|---|---|---|---|---|")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
