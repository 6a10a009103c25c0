"""A bake that never prepares (issue 28): refused in one line, before any work, unless the cache holds the
prepared model; a stale one (another format, other inputs) is refused too."""

import numpy as np
import pytest


def prepared_only(addon, obj, scene):
    """Prepare ``obj`` the way a --prepared-only bake does."""
    addon.registry.PREPARED_ONLY[:] = [True]
    try:
        return addon.session.prepare(addon.session.read_request(obj, scene))
    finally:
        addon.registry.PREPARED_ONLY.clear()


def test_missing_then_prepared_then_changed(addon, creature, tmp_path):
    obj, _arm, scene = creature
    cache = tmp_path / "cache"
    with pytest.raises(addon.session.prepared.NotPrepared, match=r"no prepared model for 'Creature' in .*Prepare"):
        prepared_only(addon, obj, scene)
    assert not cache.exists()  # refused before any work: nothing written
    addon.session.prepare(addon.session.read_request(obj, scene))  # the Prepare task
    files = {p: p.read_bytes() for p in cache.iterdir()}
    assert prepared_only(addon, obj, scene).model.m == 8  # loaded, not built
    assert {p: p.read_bytes() for p in cache.iterdir()} == files
    obj.skinmodes.modes = 7  # another character key: its model was never prepared
    with pytest.raises(addon.session.prepared.NotPrepared, match=r"model-[0-9a-f]{16}\.npz is missing"):
        prepared_only(addon, obj, scene)
    assert {p: p.read_bytes() for p in cache.iterdir()} == files


def test_a_stale_model_is_refused(addon, creature, tmp_path):
    obj, _arm, scene = creature
    request = addon.session.read_request(obj, scene)
    addon.session.prepare(request)
    _tets, model = addon.session.prepared.prepared_files(request)
    with np.load(model) as data:
        arrays = dict(data)
    np.savez(model, **{**arrays, "format_version": np.asarray(1)})
    with pytest.raises(addon.session.prepared.NotPrepared, match=r"is stale: format 1"):
        prepared_only(addon, obj, scene)
    np.savez(model, **{**arrays, "key": np.asarray("built for something else")})
    with pytest.raises(addon.session.prepared.NotPrepared, match=r"built for other inputs"):
        prepared_only(addon, obj, scene)
    model.write_bytes(b"not a zip")
    with pytest.raises(addon.session.prepared.NotPrepared, match=r"is unreadable"):
        prepared_only(addon, obj, scene)
