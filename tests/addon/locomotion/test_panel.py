"""The Locomotion panel (skinmodes_addon/locomotion/panel.py), drawn into a real layout (tests/addon/test_ui.py)."""

import numpy as np

from tests.addon.test_ui import draw, operators, props, texts


def test_the_panel_shows_the_settings_find_gait_and_the_stored_gait(addon, slug):
    import bpy

    cls = addon.locomotion.panel.SKINMODES_PT_locomotion
    assert cls.poll(bpy.context)
    items = draw(bpy, cls.draw)
    assert props(items) == [
        "gait_direction",
        "gait_period_min",
        "gait_period_max",
        "gait_modes",
        "gait_generations",
        "gait_search_tets",
        "gait_seed",
        "gait_travel",
    ]
    assert operators(items) == ["skinmodes.find_gait"] and "No gait yet: Find Gait searches for one" in texts(items)
    assert props(draw(bpy, cls.draw_header)) == ["locomotion"]
    slug.skinmodes.gait_travel = "OBJECT"  # the preview cannot move the object: the panel says what it shows
    assert "Preview: the crawl in the mesh; Bake keys it on the object" in texts(draw(bpy, cls.draw))
    slug.skinmodes.gait_travel = "CACHE"
    stored = addon.core.locomotion.stored
    gait = stored.StoredGait(np.zeros(3), stored.GaitSettings(), "k", 0.25, None, 48, 12.0)
    addon.locomotion.store.write_gait(slug, gait)
    items = draw(bpy, cls.draw)
    assert operators(items) == ["skinmodes.find_gait", "skinmodes.clear_gait"]
    assert "Gait: objective 0.25, 12 s" in texts(items)
    assert "Locomotion is off: the gait is kept, not played" in texts(items)
