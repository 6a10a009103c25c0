"""The headless command line: ``blender -b shot.blend --command skinmodes bake ...``.

Registered with ``bpy.utils.register_cli_command`` (Blender 4.2+).  The same
:func:`main` runs under the ``bpy`` module (tests, the demo, pipelines) via
``tools/skinmodes_cli.py``, which adds ``--blend`` to open the file first.

Exit codes: 0 success (a JSON summary on stdout, and nothing else: Blender's
own prints go to stderr, with one progress line per stage), 1 the bake failed or the
input is unusable (one line on stderr saying why), 2 bad command-line usage,
128 + the signal's number when SIGINT (130) or SIGTERM (143) stopped it: the
bake is cancelled (its temporary file removed, the .blend not saved) and one
line says so, never a traceback.

Farm jobs (docs/farm.md): ``prepare`` prepares one object's character into
its cache folder and saves nothing; ``bake --prepared-only`` never prepares
and exits 1, changing nothing, when the cache lacks the prepared model or
holds a stale one; ``farm`` writes an Open Job Description bundle of both
for many shots; ``report`` merges the summaries that ``--report DIR`` writes.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bpy

from . import api
from .bake.deletion import flush_pending
from .core.errors import CacheError, SkinmodesError
from .core.io.cache_names import subspace_cache_files
from .core.io.pc2 import check_writable
from .core.settings import CONTACT_AUTO, PRESETS, SETTINGS
from .farm import COMMANDS as FARM_COMMANDS
from .farm import add_commands, openjd_progress, run_command, write_report
from .farm.commands import prepare_summary
from .farm.shots import open_shot
from .locomotion.command import add_gait_command, run_gait
from .props import settings
from .registry import HOLD_PENDING, KEEP_REPLACED, PREPARED_ONLY, PROGRESS_LISTENERS, REPLACED, STOP_REQUESTS
from .session.cache_paths import cache_folder
from .session.signals import Interrupted
from .setting_flags import add_setting_flag

OUTPUT_NAMES = {"pc2": "PC2", "shapekeys": "SHAPE_KEYS", "shape_keys": "SHAPE_KEYS"}


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise _UsageError(message)


# "1-120", "-10-20", "-20--5", "-10..20", or one frame "7".
FRAMES = re.compile(r"^\s*(-?\d+)\s*(?:(?:\.\.|-)\s*(-?\d+)\s*)?$")
# A value that argparse would take for an option because it starts with "-": a negative number or range,
# or a negative axis (``gait --direction -X``).
NEGATIVE_VALUE = re.compile(r"^-[\d.]|^-[xXyY]$")


def _frames(text: str) -> tuple[int, int]:
    match = FRAMES.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"frames must look like 1-120 or -10-20, got {text!r}")
    first = int(match[1])
    return first, int(match[2]) if match[2] is not None else first


def _pose(text: str) -> tuple[int, str] | tuple[int, str, str]:
    """FRAME[:CONTACT[:MODE]] -> (frame, contact) or (frame, contact, mode); MODE is stick or one-sided."""
    frame, _, rest = text.partition(":")
    contact, mode = rest, ""
    head, _, tail = rest.rpartition(":")
    if head and tail.lower() in ("stick", "one-sided"):  # a group's name may hold ':', a mode never does
        contact, mode = head, tail.lower()
    try:
        pose = (int(frame), contact or CONTACT_AUTO.lower())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a pose is FRAME[:CONTACT[:MODE]], e.g. 40, 40:auto or 40:auto:one-sided, got '{text}'"
        ) from None
    return (*pose, mode) if mode else pose


def joined_negative_values(argv: list[str]) -> list[str]:
    """``--frames -10-20`` as ``--frames=-10-20``: argparse reads a value starting with "-" as an option."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token.startswith("--") and "=" not in token and i + 1 < len(argv) and NEGATIVE_VALUE.match(argv[i + 1]):
            out.append(f"{token}={argv[i + 1]}")
            i += 2
        else:
            out.append(token)
            i += 1
    return out


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="skinmodes", description="Bake physically based secondary motion.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bake", help="simulate and bake one object")
    b.add_argument("--output", choices=sorted(OUTPUT_NAMES), default="pc2", help="pc2 (default) or shapekeys")
    b.add_argument("--no-save", action="store_true", help="do not save the .blend after baking")
    b.add_argument(
        "--prepared-only",
        action="store_true",
        help="never prepare: refuse (exit 1, nothing changed) unless the cache holds the prepared model",
    )
    _add_settings(b, character=True)
    pr = sub.add_parser("prepare", help="prepare one object's character into its cache folder (a farm's Prepare)")
    _add_settings(pr)
    pr.set_defaults(no_save=True, output="pc2", prepared_only=False)
    c = sub.add_parser("clear", help="remove an object's bake, or every bake of an armature's meshes")
    which = c.add_mutually_exclusive_group(required=True)
    which.add_argument("--object")
    which.add_argument("--armature")
    c.add_argument("--blend")
    c.add_argument("--no-save", action="store_true")
    add_commands(sub, _frames)
    add_gait_command(sub)
    return p


def _add_settings(b: argparse.ArgumentParser, character: bool = False) -> None:
    """The flags ``bake`` and ``prepare`` share: the object, frames, file, farm reporting and every setting;
    ``character``: ``--armature`` may stand for ``--object`` (every mesh it deforms, issue 38)."""
    if character:
        which = b.add_mutually_exclusive_group(required=True)
        which.add_argument("--object", help="name of the skinned mesh object")
        which.add_argument(
            "--armature",
            help="name of an armature: bake every mesh it deforms, each into its own cache, as one character; "
            "the settings given apply to each",
        )
    else:
        b.add_argument("--object", required=True, help="name of the skinned mesh object")
    b.add_argument("--frames", type=_frames, help="frame range, e.g. 1-120 (default: the object's settings)")
    b.add_argument("--blend", help="open this .blend first (for the bpy module; blender -b FILE does it already)")
    b.add_argument("--report", metavar="DIR", help="also write the summary (or the error) to a file in DIR (farm jobs)")
    b.add_argument(
        "--progress", choices=["text", "openjd"], default="text", help="openjd: also print openjd_progress lines"
    )
    # One flag per setting of core/settings.py: --wobble-hz 4, --tet-method lattice, ...
    for st in SETTINGS:
        if st.name == "output":
            continue  # --output above names the formats the way the CLI always has
        add_setting_flag(b, st)
    b.add_argument("--preset", dest="material_preset", choices=[c.lower() for c in PRESETS], help="material preset")
    b.add_argument(
        "--pose",
        dest="poses",
        action="append",
        type=_pose,
        metavar="FRAME[:CONTACT[:MODE]]",
        help="a training pose (repeat for several; replaces the object's): its frame, contact (auto, the "
        "default, none or a vertex group) and contact mode (stick, the default, or one-sided), e.g. "
        "--pose 40 --pose 75:elbow_crease:one-sided",
    )


def check_can_save(path: str) -> None:
    """Refuse, before any work, a .blend the command could not save after it (one line).

    Blender saves by writing a temporary file beside the .blend and renaming
    it over the old one, so the folder must be writable (proved by writing a
    probe, as for caches), and Blender also refuses a .blend that is itself
    read-only.  Found after the bake, the new point cache would already have
    replaced the old one that the unsaved .blend still points to.
    """
    if not path:
        raise SkinmodesError("the .blend has never been saved; pass --no-save or open a saved file")
    name, folder = os.path.basename(path), os.path.dirname(path) or "."
    try:
        check_writable(folder, create=False)
    except CacheError as exc:
        why = getattr(exc.__cause__, "strerror", None) or "not writable"
        raise SkinmodesError(
            f"cannot save {name}: its folder {folder} is not writable ({why}); pass --no-save, "
            "or open a copy in a writable folder"
        ) from exc
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise SkinmodesError(
            f"cannot save {name}: the file is read-only; pass --no-save, or make it writable (or open a copy)"
        )


def blend_problem(path: str, object_name: str) -> str:
    """What is wrong with the saved .blend at ``path``, read back the way Blender reads a library, or "".

    Blender will not read the open file as a library, so a second name for it
    is read: a hard link beside it (no space needed on a full disk), else a
    copy in the system's temporary folder.
    """
    folder = tempfile.mkdtemp(prefix="skinmodes-check-")
    probe = os.path.join(folder, "check.blend")
    try:
        try:
            os.link(path, probe)
        except OSError:
            shutil.copyfile(path, probe)
        with bpy.data.libraries.load(probe) as (source, _target):  # type: ignore[func-returns-value, attr-defined]
            names = list(source.objects)
    except (OSError, ValueError, RuntimeError) as exc:
        return str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return "" if object_name in names else f"object '{object_name}' is missing from it"


def save_verified(object_name: str) -> None:
    """Save the open .blend and read it back; a damaged one (a full disk) is replaced by the previous
    version Blender kept (``.blend1``) where that one reads whole, and reported in one line.  Either way a
    failed save puts back the point caches this command's bake replaced (``registry.REPLACED``): the
    previous .blend plays them, and a transaction restores every file it replaced, not only the .blend."""
    path = bpy.data.filepath
    name, backup = os.path.basename(path), path + "1"
    HOLD_PENDING.append(True)  # superseded files go only once the save reads back whole (below)
    try:
        bpy.ops.wm.save_mainfile()
    except RuntimeError as exc:  # Blender said so itself (4.2 on a full disk: "Error: Success")
        failed = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        if not blend_problem(path, object_name):
            caches = restore_replaced()
            raise SkinmodesError(
                f"Blender could not save {name} ({failed}; a full disk?): the previous version is still in its "
                f"place{caches}; free some disk space and run the command again"
            ) from exc
    finally:
        HOLD_PENDING.pop()
    problem = blend_problem(path, object_name)
    if not problem:
        drop_replaced()
        for note in flush_pending():
            print(f"skinmodes: {note}", file=sys.stderr)
        return
    restored = os.path.exists(backup) and not blend_problem(backup, object_name)
    if restored:
        os.replace(backup, path)
    caches = restore_replaced()
    raise SkinmodesError(
        f"Blender wrote a damaged {name} ({problem}; a full disk?): "
        + ("the previous version is back in its place" if restored else f"look for the previous version, {name}1")
        + caches
        + "; free some disk space and run the command again"
    )


def restore_replaced() -> str:
    """Put back the point caches the bake replaced (``registry.REPLACED``); what to add to the error line."""
    back, lost = 0, []
    while REPLACED:
        kept, target = REPLACED.pop()
        try:
            if kept:
                os.replace(kept, target)  # a rename in the same folder: no space needed
            else:
                os.unlink(target)  # written under a new name: nothing the previous .blend plays
            back += 1
        except OSError:
            lost.append(os.path.basename(target))
    if lost:
        return f", but its point cache {lost[0]} could not be put back (the new bake is in it)"
    return ", with the point cache it plays" if back else ""


def drop_replaced() -> None:
    """The save read back whole: the replaced point caches' kept copies go."""
    while REPLACED:
        kept, _target = REPLACED.pop()
        if kept:
            with contextlib.suppress(OSError):
                os.unlink(kept)


def run(args: argparse.Namespace) -> dict[str, object]:
    if args.command in FARM_COMMANDS:
        return run_command(args)
    if args.blend:
        open_shot(Path(args.blend))
    if getattr(args, "armature", None):
        return character_command(args)
    obj = bpy.data.objects.get(args.object)
    if obj is None:
        names = ", ".join(o.name for o in bpy.data.objects if o.type == "MESH") or "none"
        raise SkinmodesError(f"no object named '{args.object}' (meshes in this file: {names})")
    if not args.no_save:
        check_can_save(bpy.data.filepath)
    if args.command == "clear":
        api.clear_bake(obj)
        summary: dict[str, object] = {"object": obj.name, "cleared": True}
    elif args.command == "gait":
        summary = run_gait(obj, args)
    else:
        overrides = {st.name: getattr(args, st.name, None) for st in SETTINGS}
        if args.command == "bake":
            overrides["output"] = OUTPUT_NAMES[args.output]  # "shapekeys", as documented, is the setting's SHAPE_KEYS
        if args.poses is not None:
            api.validate_poses(obj, args.poses)  # before any change: a bad pose changes nothing
        api.configure(obj, **{k: v for k, v in overrides.items() if v is not None})
        if args.poses is not None:
            api.set_poses(obj, args.poses)
        if args.command == "prepare":
            summary = prepare_summary(obj, args.frames)
        else:
            return bake_and_save(obj, args)
    if not args.no_save:
        save_verified(obj.name)
        summary["saved"] = bpy.data.filepath
    return summary


def character_command(args: argparse.Namespace) -> dict[str, object]:
    """``bake --armature``: every mesh the armature deforms (``api.character_meshes``), configured with the
    flags given, baked and saved as one transaction (:func:`bake_and_save`); ``clear --armature``: every
    bake of them cleared, then saved."""
    arm = bpy.data.objects.get(args.armature)
    if arm is None or arm.type != "ARMATURE":
        names = ", ".join(o.name for o in bpy.data.objects if o.type == "ARMATURE") or "none"
        raise SkinmodesError(f"no armature named '{args.armature}' (armatures in this file: {names})")
    meshes = api.character_meshes(arm)
    if not args.no_save:
        check_can_save(bpy.data.filepath)
    if args.command == "clear":
        cleared = api.clear_character(arm)
        if not args.no_save:
            save_verified(meshes[0].name)
        return {"armature": arm.name, "cleared": cleared, **({"saved": bpy.data.filepath} if not args.no_save else {})}
    overrides = {st.name: getattr(args, st.name, None) for st in SETTINGS}
    overrides["output"] = OUTPUT_NAMES[args.output]
    if args.poses is not None:
        raise SkinmodesError("--pose names one mesh's training poses; give them with --object, one mesh at a time")
    values = {k: v for k, v in overrides.items() if v is not None}
    for mesh in meshes:  # the first call checks every value before it changes anything
        api.configure(mesh, **values)
    summaries = bake_and_save(meshes, args)
    return {"armature": arm.name, "objects": summaries, **({"saved": bpy.data.filepath} if not args.no_save else {})}


def bake_and_save(obj: bpy.types.Object | list[bpy.types.Object], args: argparse.Namespace) -> Any:
    """``bake``: bake, then save the .blend (unless ``--no-save``), as one transaction.

    A failure at any step, the save included, leaves every file as it was: the bake's own transaction puts
    back the point cache it replaced or leaves it alone (``bake/transaction.py``), a failed save puts it
    back (:func:`save_verified`), and the tet and model caches this command wrote are removed, so a failed
    command leaves no file it made.  (Content-keyed, they were only a head start for the next run.)
    """
    objs = obj if isinstance(obj, list) else [obj]
    folders = {cache_folder(settings(o)) for o in objs}
    had = set().union(*(subspace_cache_files(f) for f in folders))
    PREPARED_ONLY[:] = [True] if args.prepared_only else []
    # A failed save puts the point caches back too; so does a character's commit that fails after an
    # earlier mesh's (the unsaved .blend never plays the earlier one's new file).
    KEEP_REPLACED[:] = [] if args.no_save and not isinstance(obj, list) else [True]
    try:
        output = OUTPUT_NAMES[args.output]
        if isinstance(obj, list):  # every mesh simulates, then all commit (bake/character_job.py)
            summaries = api.bake_character(obj[0], frames=args.frames, output=output, keep_previous_file=args.no_save)
            if [s["object"] for s in summaries] != [o.name for o in objs]:
                raise SkinmodesError("the character's meshes changed while it baked; run the command again")
        else:
            summaries = [api.bake(obj, frames=args.frames, output=output, keep_previous_file=args.no_save)]
        if not args.no_save:
            save_verified(objs[0].name)
            if not isinstance(obj, list):
                summaries[0]["saved"] = bpy.data.filepath
        elif isinstance(obj, list):
            drop_replaced()  # --no-save: the bakes stand; the kept copies of the files they replaced go
        return summaries if isinstance(obj, list) else summaries[0]
    except BaseException:
        restore_replaced()  # a failure after the bake's commit, before or outside the save: put it back too
        for f in folders:
            for made in subspace_cache_files(f) - had:
                with contextlib.suppress(OSError):
                    made.unlink()
        raise
    finally:
        PREPARED_ONLY.clear()
        KEEP_REPLACED.clear()


def _flush_c_stdio() -> None:
    """Flush the C library's stdout buffer (Blender prints through it): before fd 1 changes hands."""
    try:
        libc = ctypes.CDLL(None) if os.name == "posix" else ctypes.cdll.msvcrt
        libc.fflush(None)
    except (OSError, AttributeError):
        pass  # no C runtime to reach: Python's own flush below still happens


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While inside, whatever anyone writes to fd 1 (Blender's "Read blend:", "Info: Saved", add-on
    prints) goes to fd 2, so the command's stdout holds its JSON summary alone."""
    sys.stdout.flush()
    _flush_c_stdio()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            _flush_c_stdio()
            os.dup2(saved, 1)
    finally:
        os.close(saved)


def _print_progress(stage: str, fraction: float) -> None:
    """One line per stage on stderr, so a long Compute Modes (minutes at 200k vertices) is never silent."""
    print(f"skinmodes: {stage} ({100 * fraction:.0f}%)", file=sys.stderr, flush=True)


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """While the command runs, SIGINT and SIGTERM stop it cleanly instead of killing the process.

    SIGTERM's default would end the process on the spot and leave the
    bake's temporary file behind.  The handler only records the signal
    (``registry.STOP_REQUESTS``); the work stops at its next checkpoint
    (between preparation stages, between frames, before the bake replaces
    anything) and unwinds through its own clean-up.  Raising where the signal
    lands could strike between creating a temporary file and recording it.
    After the first signal both are ignored until the command has unwound
    (SIGKILL still ends everything; the next bake removes what it leaves).
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    caught = (signal.SIGINT, signal.SIGTERM)

    def interrupt(signum: int, _frame: object) -> None:
        for sig in caught:
            signal.signal(sig, signal.SIG_IGN)
        STOP_REQUESTS.append(signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in caught}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(joined_negative_values(argv))
    except _UsageError as exc:
        print(f"skinmodes: usage error: {exc}", file=sys.stderr)
        return 2
    listeners: list[Callable[[str, float], None]] = [_print_progress]
    if getattr(args, "progress", "text") == "openjd":
        listeners.append(openjd_progress(args.command))
    code, summary, line = _outcome(args, listeners)
    if line:
        print(line, file=sys.stderr)
    if getattr(args, "report", None):
        try:  # a farm task's summary, or its error, for the job report (farm.reports)
            write_report(args.report, args.command, args.blend or bpy.data.filepath, args.object, code, summary, line)
        except OSError as exc:
            print(
                f"skinmodes: error: cannot write the report in {args.report} ({exc.strerror or exc})", file=sys.stderr
            )
            code, summary = code or 1, None
    if summary is not None:
        print(json.dumps(summary, sort_keys=True))
    return code


def _outcome(
    args: argparse.Namespace, listeners: list[Callable[[str, float], None]]
) -> tuple[int, dict[str, object] | None, str]:
    """Run the command: (exit code, JSON summary or None, the one line said on stderr or "")."""
    STOP_REQUESTS.clear()
    PROGRESS_LISTENERS.extend(listeners)
    try:
        with _signals_interrupt(), stdout_to_stderr():
            summary = run(args)
    except (KeyboardInterrupt, SkinmodesError) as exc:
        if isinstance(exc, SkinmodesError) and not STOP_REQUESTS:
            return 1, None, f"skinmodes: error: {as_flags(str(exc))}"
        signum = exc.signum if isinstance(exc, Interrupted) else (STOP_REQUESTS or [signal.SIGINT])[0]
        what = exc.what if isinstance(exc, Interrupted) else "bake"
        line = (
            f"skinmodes: interrupted by {signal.Signals(signum).name} before the .blend was saved; "
            f"the {what} was cancelled, run the command again"
        )
        return 128 + int(signum), None, line
    except Exception as exc:
        return 1, None, f"skinmodes: error: unexpected {type(exc).__name__}: {exc}"
    finally:
        for listener in listeners:
            PROGRESS_LISTENERS.remove(listener)
    finally_stops = list(STOP_REQUESTS)
    STOP_REQUESTS.clear()
    if finally_stops:
        # The signal came after the bake had replaced the old one and the .blend was saved: the work is whole.
        summary["signal_ignored"] = signal.Signals(finally_stops[0]).name
    return 0, summary, ""


# A setting named in a message as "Label (setting_name)": on the command line, its flag.
SETTING_REFERENCE = re.compile(r"\((" + "|".join(sorted((st.name for st in SETTINGS), key=len, reverse=True)) + r")\)")


def as_flags(line: str) -> str:
    """A message for the command line: each setting it names as "Label (setting_name)" names its flag instead,
    "Label (--setting-name)", the spelling this surface has."""
    return SETTING_REFERENCE.sub(lambda m: f"(--{m.group(1).replace('_', '-')})", line)


def _cli_handler(argv: list[str]) -> int:
    return main(list(argv))


_HANDLE: list[object] = []


def register() -> None:
    if hasattr(bpy.utils, "register_cli_command"):
        # The stub says None; Blender returns the handle unregister_cli_command needs.
        _HANDLE.append(bpy.utils.register_cli_command("skinmodes", _cli_handler))  # type: ignore[func-returns-value]


def unregister() -> None:
    while _HANDLE:
        bpy.utils.unregister_cli_command(_HANDLE.pop())
