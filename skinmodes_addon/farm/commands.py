"""The command line's farm commands: ``farm`` (write a job bundle), ``report`` (merge the task reports),
and what ``prepare`` (a Prepare task: the character into the cache, nothing saved) reports."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bpy

from ..core.errors import SkinmodesError
from ..core.io.cache_names import NAME_DIGITS, model_cache_file
from ..props import scene_of, settings
from ..session.cache_paths import cache_folder
from ..session.session import build_session
from .flamenco import JOB_TYPE_FILE, flamenco_job
from .reports import merge_reports
from .shots import read_shots
from .template import bake_rounds, characters, job_template, parameter_values
from .yaml_text import yaml_text

# The subcommands this module runs (``prepare`` runs through the bake's path in cli.run).
COMMANDS = ("farm", "report")


def add_commands(sub: Any, frames: Callable[[str], tuple[int, int]]) -> None:
    """Add ``farm`` and ``report`` to the command line's subparsers (``frames`` reads ``--frames``)."""
    f = sub.add_parser(
        "farm", help="write an Open Job Description bundle: prepare each character once, bake every shot"
    )
    f.add_argument("shots", nargs="+", help=".blend files, or folders of them")
    f.add_argument(
        "--out",
        required=True,
        help="the bundle folder to write (template.yaml, parameter_values.yaml, flamenco_job.json)",
    )
    f.add_argument(
        "--object", dest="objects", action="append", help="bake this object (repeat; default: every skinned mesh)"
    )
    f.add_argument("--cache-dir", help="the cache folder every task shares (default: OUT/cache); a job parameter")
    f.add_argument("--frames", type=frames, help="frame range of every bake (default: each object's settings)")
    f.add_argument("--blender", default="blender", help="the Blender executable on the workers; a job parameter")
    r = sub.add_parser("report", help="merge a farm job's task reports (FOLDER/*.json) into FOLDER/job.json")
    r.add_argument("folder", help="the reports folder: the job's CacheDir/reports")


def run_command(args: argparse.Namespace) -> dict[str, object]:
    """Run ``farm`` or ``report``; returns the JSON summary."""
    if args.command == "report":
        return merge_reports(args.folder)
    return write_bundle(args)


def write_bundle(args: argparse.Namespace) -> dict[str, object]:
    """Read the shots, then write ``template.yaml`` and ``parameter_values.yaml`` into ``args.out``."""
    out = Path(os.path.abspath(args.out))
    cache = os.path.abspath(args.cache_dir) if args.cache_dir else str(out / "cache")
    skipped: list[str] = []
    tasks = read_shots(args.shots, args.objects, args.frames, skipped)
    bpy.ops.wm.read_homefile(use_empty=True)  # the last shot is not left open (nothing here saves it)
    try:
        out.mkdir(parents=True, exist_ok=True)
        template = out / "template.yaml"
        text = yaml_text(job_template(tasks, _inside(cache, out), args.blender, args.frames))
        template.write_text(text, encoding="utf-8")
        values = out / "parameter_values.yaml"
        values.write_text(yaml_text(parameter_values(cache, args.blender)), encoding="utf-8")
        local = out / "openjd_parameters.yaml"
        local.write_text(yaml_text({"CacheDir": cache, "Blender": args.blender}), encoding="utf-8")
        flamenco = out / "flamenco_job.json"  # the same job for Flamenco: its job type file beside it
        flamenco.write_text(json.dumps(flamenco_job(tasks, cache, args.blender, args.frames), indent=2), "utf-8")
        shutil.copyfile(JOB_TYPE_FILE, out / JOB_TYPE_FILE.name)
    except OSError as exc:
        raise SkinmodesError(f"cannot write the bundle in {out} ({exc.strerror or exc})") from exc
    return {
        "bundle": str(out),
        "template": str(template),
        "parameter_values": str(values),
        "run_locally": f"openjd run {template} -p file://{local}",
        "flamenco_job": str(flamenco),
        "cache_dir": cache,
        "shots": len({t.shot for t in tasks}),
        "characters": {t.character[:NAME_DIGITS]: f"{Path(t.shot).name}:{t.object}" for t in characters(tasks)},
        "prepare_tasks": len(characters(tasks)),
        "bake_tasks": len(tasks),
        "bake_steps": len(bake_rounds(tasks)),
        "skipped": skipped,
    }


def _inside(path: str, folder: Path) -> str:
    """``path`` relative to ``folder`` if it lies inside it, else "": OpenJD takes a PATH parameter's default
    only relative to the template's folder, and never above it."""
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:  # another drive (Windows)
        return ""
    return "" if relative == ".." or relative.startswith(".." + os.sep) else relative


def prepare_summary(obj: bpy.types.Object, frames: tuple[int, int] | None) -> dict[str, object]:
    """Prepare ``obj`` into its cache folder (or find it there): the ``prepare`` command's summary.

    Refuses in one line when the cache folder could not take the model: a
    Prepare task that leaves nothing for its bakes has failed.
    """
    t0 = time.perf_counter()
    notes: list[str] = []
    prepared = build_session(obj, scene_of(bpy.context), log=notes.append, frames=frames).prepared
    model = model_cache_file(cache_folder(settings(obj)), prepared.key)
    if not model.is_file():
        why = "; ".join(notes) or "its cache folder is not writable"
        raise SkinmodesError(f"the prepared model of '{obj.name}' could not be written as {model} ({why})")
    return {
        "object": obj.name,
        "character": prepared.key[:NAME_DIGITS],
        "model": str(model),
        "seconds": round(time.perf_counter() - t0, 3),
        "stats": {k: round(v, 3) for k, v in prepared.stats.items()},
        "messages": notes,
    }
