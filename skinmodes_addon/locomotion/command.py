"""``skinmodes gait --object NAME [--direction +X] [--generations N] [--seed S] [--gait-... V] [--bake]``:
headless Find Gait.

Prints (through ``cli.main``) a JSON summary: the objective, the distance per cycle and the travel per
10 s in body lengths (a 10 s replay), the rollouts and the seconds; ``--bake`` then bakes the object with
the gait playing (the bake's own summary under "bake").  Exit codes as the other commands: a signal
cancels the search at its next generation and changes nothing.
"""

from __future__ import annotations

import argparse
import time

import bpy

from .. import api
from ..core.settings import SETTINGS
from ..props import scene_of, settings
from ..session.signals import Interrupted, raise_if_stopped, report_progress
from ..setting_flags import add_setting_flag
from .job import finish_gait_job, forget_gait_job, start_gait_job
from .store import gait_line

# The flags this command has always had -> the settings they set.
SHORT_FLAGS = {"direction": "gait_direction", "generations": "gait_generations", "seed": "gait_seed"}
# --direction's spellings -> the Direction setting's ids.
DIRECTIONS = {"+x": "POS_X", "x": "POS_X", "-x": "NEG_X", "+y": "POS_Y", "y": "POS_Y", "-y": "NEG_Y"}


def _direction(text: str) -> str:
    try:
        return DIRECTIONS[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"a direction is +X, -X, +Y or -Y, got {text!r}") from None


def add_gait_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``gait`` subcommand's flags."""
    g = sub.add_parser("gait", help="find a gait for a mesh without an armature (--bake: and bake it)")
    g.add_argument("--object", required=True, help="name of the mesh object (no Armature modifier)")
    g.add_argument("--blend", help="open this .blend first (for the bpy module; blender -b FILE does it already)")
    g.add_argument("--direction", type=_direction, help="+X, -X, +Y or -Y of the object's space (default: +X)")
    g.add_argument("--generations", type=int, help="CMA-ES generations per restart (default: the object's)")
    g.add_argument("--seed", type=int, help="the search's seed (default: the object's)")
    # The other search settings, each under its own name (--gait-search-tets 3000, ...): a refusal that names
    # one (as "Search Copy (gait_search_tets)") names a flag this command has.
    for st in SETTINGS:
        if st.name.startswith("gait_") and st.name not in SHORT_FLAGS.values():
            add_setting_flag(g, st)
    g.add_argument("--bake", action="store_true", help="bake the object with the gait playing afterwards")
    g.add_argument("--no-save", action="store_true", help="do not save the .blend afterwards")
    g.set_defaults(frames=None, poses=None, output="pc2", prepared_only=False, progress="text", report=None)


def run_gait(obj: bpy.types.Object, args: argparse.Namespace) -> dict[str, object]:
    """Search (on the worker thread, polled here so a signal stops it), store the gait, optionally bake."""
    overrides = {st.name: getattr(args, st.name, None) for st in SETTINGS if st.name.startswith("gait_")}
    overrides.update({name: getattr(args, flag) for flag, name in SHORT_FLAGS.items()})
    api.configure(obj, **{k: v for k, v in overrides.items() if v is not None})
    job = start_gait_job(obj, scene_of(bpy.context))
    said = ""
    try:
        while not job.wait(0.1):
            raise_if_stopped()
            if job.stage != said:  # one progress line per stage: a farm log shows where the search is
                said = job.stage
                report_progress(f"gait: {said}", job.fraction)
    except BaseException as exc:
        job.cancel()
        job.wait()
        forget_gait_job(job)
        if isinstance(exc, Interrupted):
            raise Interrupted(exc.signum, "gait search") from exc
        raise
    gait = finish_gait_job(job)
    summary: dict[str, object] = {
        "object": obj.name,
        "objective": gait.objective,
        "judged": gait.judged,
        "distance_per_cycle": job.figures["distance_per_cycle"],
        "body_lengths_per_10s": job.figures["body_lengths_per_10s"],
        "heading_deg": job.figures["heading_deg"],
        "note": gait_line(gait),
        "evaluations": gait.evaluations,
        "seconds": round(gait.seconds, 3),
        "direction": str(settings(obj).gait_direction),
    }
    if args.bake:
        t0 = time.perf_counter()
        summary["bake"] = api.bake(obj, keep_previous_file=args.no_save)
        summary["bake_seconds"] = round(time.perf_counter() - t0, 3)
    return summary
