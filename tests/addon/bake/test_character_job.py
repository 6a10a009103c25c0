"""Bake Character's job (bake/character_job.py, issue 38): every mesh of a body simulates before any commits,
and the body is simulated once for all of them.  On the platformer's four meshes (Character.glb, Quaternius,
CC0) at 3,000 tets over 13 frames.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.addon.test_whole_character import MESHES, _load

pytestmark = pytest.mark.slow


def test_bake_character_simulates_the_body_once_and_bakes_what_each_mesh_alone_bakes(addon, tmp_path):
    """Bake Character simulates the body for its first mesh and the other three read its offsets; each mesh's
    point cache is bit for bit what baking that mesh by itself writes (the same body, simulated again)."""
    import bpy

    read_pc2 = addon.core.io.pc2.read_pc2
    loaded, _ = _load(bpy)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.target_tets = 3000
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    frames = (loaded.start, loaded.start + 12)
    one_by_one = {n: read_pc2(addon.api.bake(bpy.data.objects[n], frames=frames)["files"][0])[0] for n in MESHES}
    for n in MESHES:
        addon.api.clear_bake(bpy.data.objects[n])
    meshes = [bpy.data.objects[n] for n in MESHES]
    bake = addon.bake.character_job.CharacterBake(bpy.context, meshes, frames=frames).run()
    assert len({id(job.simulation) for job in bake.jobs}) == 1, "one simulation of the body"
    for job in bake.jobs:
        assert np.array_equal(read_pc2(job.files[0])[0], one_by_one[job.obj.name]), job.obj.name


def test_esc_in_the_last_mesh_leaves_every_mesh_as_it_was(addon, tmp_path):
    """Cancelled while its last mesh simulates (the job's steps closed there, as Esc closes them), no mesh
    has a bake and no point cache or temporary file is left."""
    import bpy

    _load(bpy)
    for n in MESHES:
        bpy.data.objects[n].skinmodes.target_tets = 3000
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    meshes = [bpy.data.objects[n] for n in MESHES]
    bake = addon.bake.character_job.CharacterBake(bpy.context, meshes, frames=(0, 12))
    for _ in bake.steps():
        if bake.current is bake.jobs[-1] and bake.current.frames_done >= 3:
            break
    bake.cancel()
    assert not any(m.skinmodes.bake_kind for m in meshes)
    assert not list(tmp_path.rglob("*.pc2")) and not list(tmp_path.rglob("*.partial"))
