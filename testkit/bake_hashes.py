"""Fingerprints of real bakes: the sha256 of each .pc2 a fixed set of cases writes.

A refactor that claims "behaviour unchanged" shows it with these: run
``python -m tools.bake_hashes --out before.json`` on the old commit and again
on the new one; the files must be equal.  The cases cover every drive the
pipeline has (the rig, the physics skin, training poses) and the volume term,
on the public characters of ``tests/assets/characters`` at their import scale.
Each bake runs the first :data:`FRAMES` frames of the clip with the add-on's
defaults plus the case's settings, in a folder of its own, so no cache is
shared between cases.
"""

from __future__ import annotations

import hashlib
import importlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .real_characters import ADDON_MODULE, load, spec

FRAMES = 41  # frames baked per case: enough for the jiggle to build up, short enough for a quick check


@dataclass(frozen=True)
class Case:
    """One bake: a character, settings changed from the defaults, and whether a training pose is added."""

    character: str
    settings: dict[str, Any] = field(default_factory=dict)
    pose: bool = False  # add one training pose (contact "auto") half-way through the clip

    @property
    def key(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.settings.items())
        return self.character + (f"+{extra}" if extra else "") + ("+poses" if self.pose else "")


CASES = (
    Case("fox"),
    Case("cesium_man_x100"),
    Case("robot"),
    Case("stag"),
    Case("trex"),
    Case("rigged_simple"),
    Case("cesium_man_x100", {"physics_skin": True}),
    Case("rigged_simple", {"poisson_ratio": 0.45}),
    Case("cesium_man_x100", pose=True),
)


def bake_hash(bpy: Any, case: Case, work: Path) -> str:
    """Bake ``case`` into ``work`` (a new folder) and return the sha256 (hex) of its .pc2."""
    api = importlib.import_module(ADDON_MODULE + ".api")
    loaded = load(bpy, spec(case.character))
    work.mkdir(parents=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "case.blend"))
    if case.settings:
        api.configure(loaded.obj, **case.settings)
    if case.pose:
        api.set_poses(loaded.obj, [(loaded.start + (loaded.stop - loaded.start) // 2, "auto")])
    frames = (loaded.start, min(loaded.end, loaded.start + FRAMES - 1))
    summary = api.bake(loaded.obj, frames=frames, output="PC2")
    return hashlib.sha256(Path(summary["files"][0]).read_bytes()).hexdigest()


def all_hashes(bpy: Any, cases: tuple[Case, ...] = CASES) -> dict[str, str]:
    """case key -> sha256 of its .pc2, each baked in a temporary folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="skinmodes-bake-hashes-") as tmp:
        return {case.key: bake_hash(bpy, case, Path(tmp) / f"case{i}") for i, case in enumerate(cases)}
