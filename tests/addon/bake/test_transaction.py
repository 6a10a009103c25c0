"""A rebake replaces the previous bake completely: one cache modifier, no old shape keys, and Clear
Bake removes it all (the failure paths are in tests/safety/test_transactions.py)."""

from tests.addon.bake.test_job import save


def test_rebake_replaces_the_previous_bake_cleanly(addon, creature, tmp_path):
    import bpy

    obj, _, _ = creature
    save(bpy, tmp_path)
    assert bpy.ops.skinmodes.bake(output="SHAPE_KEYS") == {"FINISHED"}
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    assert [m.name for m in obj.modifiers].count("Skinmodes Cache") == 1
    assert obj.data.shape_keys is None or not any(
        k.name.startswith("skinmodes.") for k in obj.data.shape_keys.key_blocks
    )
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}
    assert [m.name for m in obj.modifiers].count("Skinmodes Cache") == 1
    assert bpy.ops.skinmodes.clear_bake() == {"FINISHED"}
    assert obj.modifiers.get("Skinmodes Cache") is None and obj.skinmodes.bake_kind == ""
    assert not list((tmp_path / "skinmodes_cache").glob("*.pc2"))
