"""A warm process for one side of a paired measurement: ``python -m bench.peers.worker SIDE``.

SIDE is ``ours`` (run with the main environment's interpreter), ``fastcody``
or ``simkit`` (the bench-only one).  The bench (``bench/paired.py``) starts
one worker per side and keeps it for the whole section, so imports, first
calls and allocator warm-up are paid once, outside every timer, and the
sides can be timed in alternation.

Protocol: one JSON object per line on stdin, one JSON reply per line on the
process's original stdout (library output, C++ included, is sent to stderr
so that it cannot break the protocol).  Commands:

* ``{"cmd": "prepare", "path": NPZ, "m": m, "r": r}`` -> ``{"seconds", "m", "r", ...}``:
  raw arrays to a ready simulator, timed inside the worker;
* ``{"cmd": "load", "path": NPZ}`` -> ``{"m", "r"}``: a simulator on the given modes W,
  eigenvalues lam, clusters labels and rig parameters P (one period), untimed;
* ``{"cmd": "trajectory", "steps": s, "out": NPZ}``: from the first frame, s steps,
  writes U (s, n, 3), then resets; replies the solver iterations of each step;
* ``{"cmd": "steps", "count": c}`` -> ``{"seconds"}``: c more steps;
* ``{"cmd": "quit"}``.

NPZ holds X (n, 3), T (t, 4), Wrig (n, b), E (Young's modulus, Poisson ratio
0), rho, h, iters, and for ``load`` W, lam, labels, P (L, 12 b) in skinmodes'
convention, optionally ``tolerance`` (ours) or ``threshold`` (fast-cody) to stop early.
The first reply, before any command, reports the thread pinning.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import traceback

RUNNERS = {"ours": "ours_runner", "fastcody": "fastcody_runner", "simkit": "simkit_runner"}


def main(side_name: str) -> int:
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # everything else printed (Python or C++) goes to stderr
    import numpy as np

    from bench.peers.pinning import pin_threads

    module = importlib.import_module(f"bench.peers.{RUNNERS[side_name]}")
    side = module.Side()
    pinning = pin_threads()  # after the side's imports, so that every loaded OpenBLAS is pinned

    def send(obj: dict) -> None:
        reply.write(json.dumps(obj) + "\n")
        reply.flush()

    send({"ready": True, "side": side.name, "pid": os.getpid(), "threads": pinning})
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg["cmd"]
        try:
            if cmd == "quit":
                break
            if cmd == "prepare":
                d = dict(np.load(msg["path"]))
                out = side.prepare(d, int(msg["m"]), int(msg["r"]))
                out.pop("_keep", None)  # the prepared simulator is dropped after the timer
                gc.collect()
                send(out)
            elif cmd == "load":
                send(side.load(dict(np.load(msg["path"]))))
            elif cmd == "trajectory":
                side.reset()
                U, its = [], []
                for _ in range(int(msg["steps"])):
                    side.steps(1)
                    U.append(side.displacement())
                    its.append(int(getattr(side, "last_iterations", 0)))
                np.savez(msg["out"], U=np.asarray(U))
                side.reset()
                send({"steps": len(U), "iterations": its})
            elif cmd == "steps":
                send({"seconds": side.steps(int(msg["count"]))})
            else:
                send({"error": f"unknown command {cmd!r}"})
        except Exception as exc:  # the parent reports it; the worker stays usable
            traceback.print_exc()
            send({"error": f"{type(exc).__name__}: {exc}"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
