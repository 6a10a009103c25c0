"""The gait an object keeps and the settings Find Gait searches with (skinmodes_addon/locomotion/store.py)."""

import numpy as np
import pytest

# The add-on's own copy of core (addon.core) is used throughout: its classes are not the repository's.


def test_the_direction_turns_with_the_object_and_lies_on_the_ground(addon):
    """Exact up to round-off (1e-12): a rotation about Z by 90 deg takes +X to +Y; scale does not matter."""
    store = addon.locomotion.store
    np.testing.assert_allclose(store.mesh_direction("NEG_Y", np.eye(4), "Slug"), (0.0, -1.0, 0.0), atol=1e-12)
    G = np.eye(4)
    G[:3, :3] = 2.0 * np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(store.mesh_direction("POS_X", G, "Slug"), (0.0, 1.0, 0.0), atol=1e-12)
    up = np.eye(4)
    up[:3, :3] = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # +X points up
    with pytest.raises(addon.core.errors.SkinmodesError, match="points straight up") as info:
        store.mesh_direction("POS_X", up, "Slug")
    assert "\n" not in str(info.value)


def test_a_gait_is_kept_on_the_object_as_text_and_read_back_bit_for_bit(addon, slug):
    store = addon.locomotion.store
    GaitSettings, StoredGait = addon.core.locomotion.stored.GaitSettings, addon.core.locomotion.stored.StoredGait
    assert store.read_gait(slug) is None
    gait = StoredGait(np.array([0.1, -2.5, 1.0 / 3.0]), GaitSettings(seed=4), "abc", 0.5, None, 12, 1.5)
    store.write_gait(slug, gait)
    back = store.read_gait(slug)
    np.testing.assert_array_equal(back.x, gait.x)
    assert back.settings == gait.settings and back.mesh_key == "abc"
    store.write_gait(slug, None)
    assert store.read_gait(slug) is None and "skinmodes_gait" not in slug
    slug["skinmodes_gait"] = "not a gait"
    with pytest.raises(addon.core.errors.SkinmodesError, match="cannot be read"):
        store.read_gait(slug)


def test_the_search_settings_come_from_the_object_and_its_frame_rate(addon, slug):
    import bpy

    store = addon.locomotion.store
    s = slug.skinmodes
    s.gait_direction, s.gait_modes, s.gait_seed, s.gait_generations = "NEG_X", 4, 9, 3
    s.gait_search_tets = 0  # Search Copy 0: the mesh itself is searched, whatever its size
    request = addon.session.request.read_request(slug, bpy.context.scene)
    settings = store.gait_settings(slug, request)
    assert settings.direction == (-1.0, 0.0, 0.0) and settings.actuation_modes == 4
    assert settings.seed == 9 and settings.generations == 3 and settings.coarse_tets == 0
    assert settings.dt == 1.0 / 30.0  # 15 fps, 2 sub-steps: the step the frame loop plays it at
    s.gait_period_min, s.gait_period_max = 2.0, 1.0
    with pytest.raises(addon.core.errors.SkinmodesError, match="swap them"):
        store.gait_settings(slug, request)
    StoredGait = addon.core.locomotion.stored.StoredGait
    walks = StoredGait(np.zeros(3), settings, "k", 0.1, None, 4, 2.0, {"body_lengths_per_10s": 1.5, "heading_deg": 4.0})
    line = store.gait_line(walks)
    assert line.startswith("gait found, 1.50 body lengths per 10 s, 4° off the direction") and "barely" not in line
    assert not store.is_weak(walks)
    # Issue 40, item 3: a gait that barely moves is said plainly, with what to try.
    crawl = StoredGait(np.zeros(3), settings, "k", 0.1, None, 4, 2.0, {"body_lengths_per_10s": 0.2, "heading_deg": 30})
    assert store.is_weak(crawl) and "it barely moves (under 0.5 body length per 10 s): try more Generations" in (
        store.gait_line(crawl)
    )
    assert not store.is_weak(StoredGait(np.zeros(3), settings, "k", 0.1, None, 4, 2.0))  # not measured: not said
