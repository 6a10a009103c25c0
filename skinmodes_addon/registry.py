"""Every per-process registry of the add-on, and the one :func:`reset` that clears them all.

What lives here is state of this Blender process, never of a .blend: the
sessions and jobs per object, what the preview showed and why it stopped,
the view shadings Show Mode replaced, the superseded point caches waiting
for a save, and the command line's signal channel.  Keyed by
``Object.session_uid`` (unique per object in this process) or by path.
It imports nothing of the add-on, so every room may import it.  The
registration of classes, handlers and the command-line command (and the
BLAS thread counts in ``threads``) stay with the modules that own them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# Per object: its prepared character, rig samples and frame simulation (session.session.Session).
SESSIONS: dict[int, Any] = {}
# Per object: the worker thread computing its modes (session.jobs.ModesJob).
JOBS: dict[int, Any] = {}
# How many of skinmodes' own frame changes (sampling, baking) are under way: the preview stands aside.
BUSY = [0]
# This process's folder for the caches of unsaved files, once made (session.cache_paths.unsaved_folder).
UNSAVED_FOLDER: list[Path] = []

# Last error per object, shown in the panel (handlers cannot report).
ERRORS: dict[int, str] = {}
# Per object: the (frame, session key) whose offsets the pre-frame handler wrote.
SHOWN: dict[int, tuple[int, str]] = {}
# Objects whose modes job is about to start, and whose rig is being sampled, on a timer.
STARTING: set[int] = set()
RESAMPLING: set[int] = set()

# The viewport shading Show Mode replaced, per View3DShading (keyed by its address), so Hide Mode
# puts back exactly what was there.  Addresses mean nothing in another file: forgotten on load.
# (type, color_type); Any: the stubs type each as its own Literal of enum items.
SHADING_BEFORE: dict[int, tuple[Any, Any]] = {}

# A superseded point cache (a rebake under a new name, Clear Bake) that the .blend as saved on disk
# may still play is not deleted at once: it waits here, per .blend (its path), until that .blend is
# saved with no object playing it (bake.deletion.flush_pending, from the save handler).  A .blend closed or
# reloaded without saving keeps the file: a leftover is better than a saved shot that renders rig-only.
PENDING: dict[str, list[str]] = {}
# Per .blend (its path): the files its saved version plays, as read at its last load or save.  A .blend
# not seen loaded or saved (the add-on enabled later) counts as playing everything.
SAVED_PLAYS: dict[str, set[str]] = {}
# While set, a save leaves the pending files to its caller (the command line verifies the save first).
HOLD_PENDING: list[bool] = []
# While set, a bake that replaces a point cache of the same name keeps the old file's content aside (a hard
# link, else a copy): the command line saves the .blend after the bake, and a save that fails must put
# the cache back with the .blend that plays it (bake.transaction.keep_replaced, cli.save_verified).
KEEP_REPLACED: list[bool] = []
# (the kept copy, the point cache it was): what a bake replaced while KEEP_REPLACED was set.
REPLACED: list[tuple[str, str]] = []

# Signals (SIGINT, SIGTERM) received while the CLI runs, appended by its signal
# handler.  The handler never raises where the signal lands (an exception
# between two bytecodes can orphan a half-made temporary file, and Blender
# swallows exceptions raised in its own callbacks); the work stops at the
# next checkpoint instead: between preparation stages and between frames.
STOP_REQUESTS: list[int] = []
# Listeners told (stage, fraction done) as a build in the calling thread goes: the CLI prints them,
# so a long Compute Modes is never silent (the modal one shows its own progress).
PROGRESS_LISTENERS: list[Callable[[str, float], None]] = []
# While set, preparing a character only loads it from the cache and refuses to build it (the command
# line's --prepared-only: a farm's Bake task, whose Prepare task wrote the cache; session.prepared).
PREPARED_ONLY: list[bool] = []


def cancel_jobs() -> None:
    """Stop every modes job and forget it (their objects are gone); a cancelled worker's result is thrown away."""
    for job in list(JOBS.values()):
        job.cancel()
    JOBS.clear()


def forget_objects() -> None:
    """A new file was loaded: forget what belonged to the previous file's objects and views.

    Jobs are cancelled; sessions, preview errors and shown frames, and Show
    Mode's view addresses are dropped (previews rebuild on the next frame
    change).  What is per .blend path (pending deletions) is the deletion
    policy's to keep or drop.
    """
    cancel_jobs()
    SESSIONS.clear()
    ERRORS.clear()
    SHOWN.clear()
    SHADING_BEFORE.clear()


def reset() -> None:
    """Clear every registry: the add-on is unregistered, or a test starts from nothing."""
    forget_objects()
    BUSY[0] = 0
    UNSAVED_FOLDER.clear()
    STARTING.clear()
    RESAMPLING.clear()
    PENDING.clear()
    SAVED_PLAYS.clear()
    HOLD_PENDING.clear()
    KEEP_REPLACED.clear()
    REPLACED.clear()
    STOP_REQUESTS.clear()
    PROGRESS_LISTENERS.clear()
    PREPARED_ONLY.clear()
