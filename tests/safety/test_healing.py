"""Issue 12, item 5: a damaged cache is detected, reported in one line, discarded and recomputed.

Before: a truncated or empty tet cache (``tets-*.npz``) failed every bake
with ``unexpected BadZipFile`` (or ``EOFError``) until it was deleted by hand.
The healed bake must equal the bake from sound caches byte for byte: the
same inputs give the same tets, modes and frames (the project's determinism).
"""

import json

import numpy as np
import pytest

from tests.safety import faults


def damage(path, how):
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, len(data), dtype=np.uint8).tobytes())
    elif how == "wrong arrays":
        with path.open("wb") as fh:
            np.savez(fh, key=np.str_("not the key"), X=np.zeros((3, 2)))


def baked_bytes(bpy, addon, obj, folder):
    summary = addon.api.bake(obj, output="PC2")
    return (folder / obj.skinmodes.bake_file[2:]).read_bytes(), summary


@pytest.mark.parametrize("how", ["empty", "truncated", "garbage", "wrong arrays"])
@pytest.mark.parametrize("which", ["tets", "model"])
def test_a_damaged_cache_heals_itself(addon, shot, which, how):
    import bpy

    obj, _, _scene, folder = shot
    reference, _ = baked_bytes(bpy, addon, obj, folder)
    (cache,) = (folder / "skinmodes_cache").glob(f"{which}-*.npz")
    damage(cache, how)
    addon.session.clear_sessions()  # as after a restart: the next bake reads the caches again
    healed, summary = baked_bytes(bpy, addon, obj, folder)
    notes = [m for m in summary["messages"] if cache.name in m]
    assert len(notes) == 1 and "\n" not in notes[0] and "recomputing" in notes[0], summary["messages"]
    assert healed == reference
    with np.load(cache, allow_pickle=False) as data:  # rewritten whole
        assert "key" in data.files and len(data.files) > 2


def test_the_cli_heals_an_empty_tet_cache(addon, dev_zip, shot, tmp_path):
    """The issue's report: the command said ``unexpected BadZipFile`` on every retry."""
    import bpy

    obj, _, _scene, folder = shot
    addon.api.bake(obj, output="PC2")
    bpy.ops.wm.save_mainfile()
    (cache,) = (folder / "skinmodes_cache").glob("tets-*.npz")
    cache.write_bytes(b"")
    proc = faults.start_cli(
        dev_zip, tmp_path / "profile", "bake", "--blend", str(folder / "shot.blend"), "--object", obj.name
    )
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert [m for m in summary["messages"] if cache.name in m and "damaged" in m]
    assert cache.stat().st_size > 0


def test_live_preview_heals_a_damaged_tet_cache(addon, shot):
    """Live Preview printed a traceback on every frame, with nothing in the panel."""
    obj, _, scene, folder = shot
    addon.api.compute_modes(obj)
    (cache,) = (folder / "skinmodes_cache").glob("tets-*.npz")
    damage(cache, "truncated")
    addon.session.clear_sessions()
    obj.skinmodes.live_preview = True
    for f in (3, 4, 5):
        scene.frame_set(f)
    assert obj.skinmodes.live_preview and obj.modifiers.get("Skinmodes Preview") is not None
    assert obj.session_uid not in addon.preview.ERRORS
    with np.load(cache, allow_pickle=False) as data:
        assert "X" in data.files


def poison(path, how):
    """A valid archive with the right key and arrays, but values no mesher makes (issue 24, item 5)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    X, T = arrays["X"].copy(), arrays["T"].copy()
    if how == "nan":
        X[3, 1] = np.nan
    elif how == "inf":
        X[5, 0] = np.inf
    elif how == "negative index":
        T[2, 3] = -1
    elif how == "index past the end":
        T[2, 3] = len(X)
    elif how == "inverted tet":
        T[0, [0, 1]] = T[0, [1, 0]]
    arrays["X"], arrays["T"] = X, T
    with path.open("wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("how", ["nan", "inf", "negative index", "index past the end", "inverted tet"])
def test_a_tet_cache_with_impossible_values_heals_itself(addon, shot, how):
    """Issue 24, item 5.  Before: a valid zip holding NaN/inf positions, bad indices or inverted tets
    blocked the object ("rest positions contain NaN…; fix the mesh") until deleted by hand.  The
    healed bake equals the bake from sound caches byte for byte (determinism, as above)."""
    import bpy

    obj, _, _scene, folder = shot
    reference, _ = baked_bytes(bpy, addon, obj, folder)
    (cache,) = (folder / "skinmodes_cache").glob("tets-*.npz")
    poison(cache, how)
    addon.session.clear_sessions()
    healed, summary = baked_bytes(bpy, addon, obj, folder)
    notes = [m for m in summary["messages"] if cache.name in m]
    assert len(notes) == 1 and "recomputing" in notes[0], summary["messages"]
    assert healed == reference


@pytest.mark.parametrize("output", ["PC2", "SHAPE_KEYS"])
def test_a_folder_where_the_model_cache_goes_costs_only_the_reuse(addon, shot, output):
    """Issue 24 (low).  Before: a folder at the model cache's path blocked every bake (the tet cache
    already coped): the model cache could not be written, which failed the bake ("could not write
    .model-….partial (Is a directory); the previous bake is unchanged"), for a shape-key bake too.
    Now reading and writing it are one note each, naming the model cache, and the bake goes on."""
    obj, _, _scene, folder = shot
    addon.api.compute_modes(obj)
    (cache,) = (folder / "skinmodes_cache").glob("model-*.npz")
    cache.unlink()
    cache.mkdir()
    addon.session.clear_sessions()
    summary = addon.api.bake(obj, output=output, frames=(1, 4))
    notes = [m for m in summary["messages"] if cache.name in m]
    assert len(notes) == 2 and all(".pc2" not in m and "\n" not in m for m in notes), summary["messages"]
    assert "recomputing" in notes[0] and "recomputed next time" in notes[1]
    assert cache.is_dir() and summary["frames_baked"] == 4
