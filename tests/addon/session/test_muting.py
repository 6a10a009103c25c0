"""skinmodes stands its own things aside while it reads the rig: the preview handler while it changes
frames, its outputs while it samples."""


def test_busy_nests_and_ends(addon):
    muting = addon.session.muting
    assert not muting.is_busy()
    with muting.busy():
        with muting.busy():
            assert muting.is_busy()
        assert muting.is_busy()
    assert not muting.is_busy()


def test_outputs_are_muted_and_restored_but_never_the_users(addon, creature):
    muting = addon.session.muting
    obj, _, _ = creature
    ours = obj.modifiers.new(muting.CACHE_MODIFIER, "MESH_CACHE")
    theirs = obj.modifiers.new("Smooth", "SMOOTH")
    obj.shape_key_add(name="Basis")
    baked = obj.shape_key_add(name=muting.SHAPE_KEY_PREFIX + "00001")
    smile = obj.shape_key_add(name="smile")
    with muting.outputs_muted(obj):
        assert not ours.show_viewport and baked.mute
        assert theirs.show_viewport and not smile.mute
    assert ours.show_viewport and not baked.mute
