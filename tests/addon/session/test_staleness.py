"""A session is stale once what it was built from changes."""


def test_moving_a_bone_in_edit_mode_makes_the_session_stale(addon, creature):
    """The physics skin pins the flesh around each bone's rest segment: a bone moved in Edit Mode
    must rebuild the session (the modes themselves come back from the cache)."""
    import bpy

    session_mod = addon.session
    obj, arm, scene = creature
    session = session_mod.build_session(obj, scene)
    assert session_mod.current_session(obj, scene) is session
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones[-1].tail.z += 0.1
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = obj
    assert session_mod.current_session(obj, scene) is None
