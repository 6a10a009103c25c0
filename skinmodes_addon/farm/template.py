"""The OpenJD job template (``jobtemplate-2023-09``) of a farm bake, and its parameter values (no bpy).

Steps: **Prepare**, one task per distinct character (its content hash, the
name of its model cache file); **Bake**, one task per shot × object,
depending on Prepare and baking with ``--prepared-only``; **Report**, one
task that merges every task's summary into ``<CacheDir>/reports/job.json``.

A Bake task saves its shot's .blend, so two objects of one shot must not
bake at once (the later save would drop the other's bake): the second
object of every shot bakes in step "Bake 2" after "Bake", and so on.  Every
step's tasks are independent of each other, so a farm runs as many at once
as it has workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.io.cache_names import NAME_DIGITS

SPECIFICATION = "jobtemplate-2023-09"
# How a task runs skinmodes: the Blender executable (a job parameter) with these arguments first.
LAUNCH = ["-b", "--command", "skinmodes"]
# Every task's summary goes here, under the shared cache folder (see farm.reports).
REPORTS = "{{Param.CacheDir}}/reports"


@dataclass(frozen=True)
class BakeTask:
    """One object of one shot: the .blend's absolute path, the object's name, its character's key (64 hex)."""

    shot: str
    object: str
    character: str


def _parameters(cache_dir: str, blender: str) -> list[dict[str, object]]:
    """CacheDir's default is relative (OpenJD joins it to the template's folder: the bundle's) or none
    (a cache outside the bundle); the absolute path is in the parameter files."""
    cache: dict[str, object] = {
        "name": "CacheDir",
        "type": "PATH",
        "objectType": "DIRECTORY",
        "dataFlow": "INOUT",
        "description": "The cache folder every task shares: prepared models, point caches, task reports.",
    }
    if cache_dir:
        cache["default"] = cache_dir
    return [
        cache,
        {
            "name": "Blender",
            "type": "STRING",
            "default": blender,
            "description": "The Blender executable on the workers (the skinmodes extension installed).",
        },
    ]


def _script(command: str, frames: tuple[int, int] | None, *extra: str) -> dict[str, object]:
    """The task's one action: ``<Blender> -b --command skinmodes COMMAND ...`` on the task's shot and object."""
    args = [*LAUNCH, command, "--blend", "{{Task.Param.Shot}}", "--object", "{{Task.Param.Object}}"]
    args += ["--cache-dir", "{{Param.CacheDir}}", *extra, "--report", REPORTS, "--progress", "openjd"]
    if frames is not None:
        args.append(f"--frames={frames[0]}..{frames[1]}")  # one token: a negative start is not an option
    return {"actions": {"onRun": {"command": "{{Param.Blender}}", "args": args}}}


def _space(rows: list[BakeTask], character: bool) -> dict[str, object]:
    """Task parameters Shot (PATH: farms map it), Object and, for Prepare, Character, zipped row by row."""
    names = ["Character", "Shot", "Object"] if character else ["Shot", "Object"]
    columns = {
        "Character": [r.character[:NAME_DIGITS] for r in rows],
        "Shot": [r.shot for r in rows],
        "Object": [r.object for r in rows],
    }
    defs = [{"name": n, "type": "PATH" if n == "Shot" else "STRING", "range": columns[n]} for n in names]
    return {"taskParameterDefinitions": defs, "combination": f"({', '.join(names)})"}


def bake_rounds(tasks: list[BakeTask]) -> list[list[BakeTask]]:
    """The bakes in rounds: round i holds the i-th object of every shot that has one."""
    per_shot: dict[str, list[BakeTask]] = {}
    for t in tasks:
        per_shot.setdefault(t.shot, []).append(t)
    depth = max((len(v) for v in per_shot.values()), default=0)
    return [[v[i] for v in per_shot.values() if len(v) > i] for i in range(depth)]


def characters(tasks: list[BakeTask]) -> list[BakeTask]:
    """One task per distinct character key: the first shot and object that has it (it prepares it)."""
    first: dict[str, BakeTask] = {}
    for t in tasks:
        first.setdefault(t.character, t)
    return list(first.values())


def job_template(
    tasks: list[BakeTask], cache_dir: str, blender: str = "blender", frames: tuple[int, int] | None = None
) -> dict[str, object]:
    """The job template as a dict (written as YAML by :func:`farm.yaml_text.yaml_text`).

    cache_dir: CacheDir's default, relative to the bundle's folder ("": none, the job must be given one).
    """
    prepare = characters(tasks)
    steps: list[dict[str, object]] = [
        {
            "name": "Prepare",
            "description": "Tetrahedralise and compute the modes of each distinct character once, into CacheDir.",
            "parameterSpace": _space(prepare, character=True),
            "script": _script("prepare", frames),
        }
    ]
    rounds = bake_rounds(tasks)
    for i, rows in enumerate(rounds):
        name = "Bake" if i == 0 else f"Bake {i + 1}"
        steps.append(
            {
                "name": name,
                "description": f"Bake object {i + 1} of each shot from the prepared model (never prepares).",
                "dependencies": [{"dependsOn": "Prepare" if i == 0 else steps[-1]["name"]}],
                "parameterSpace": _space(rows, character=False),
                "script": _script("bake", frames, "--prepared-only"),
            }
        )
    report = [*LAUNCH, "report", REPORTS]
    steps.append(
        {
            "name": "Report",
            "description": "Merge every task's summary into reports/job.json.",
            "dependencies": [{"dependsOn": steps[-1]["name"]}],
            "script": {"actions": {"onRun": {"command": "{{Param.Blender}}", "args": report}}},
        }
    )
    shots = len({t.shot for t in tasks})
    return {
        "specificationVersion": SPECIFICATION,
        "name": f"skinmodes: {shots} shots, {len(prepare)} characters, {len(tasks)} bakes",
        "parameterDefinitions": _parameters(cache_dir, blender),
        "steps": steps,
    }


def parameter_values(cache_dir: str, blender: str = "blender") -> dict[str, object]:
    """The bundle's ``parameter_values.yaml`` as Deadline Cloud reads it (``deadline bundle submit``)."""
    return {"parameterValues": [{"name": "CacheDir", "value": cache_dir}, {"name": "Blender", "value": blender}]}
