"""Issue 39, low items: the scripting API and Find Gait refuse what they cannot use in one line, as the
panel and the command line do (before: None reached Blender's own TypeError and AttributeError, and a rigged
character's gait search failed minutes later on its coarse copy)."""

import pytest


@pytest.mark.parametrize(
    "call",
    [
        lambda api: api.bake(None),
        lambda api: api.clear_bake(None),
        lambda api: api.compute_modes(None),
        lambda api: api.configure(None, wobble_hz=3),
        lambda api: api.settings("Creature"),
        lambda api: api.poses(None),
    ],
)
def test_an_api_call_without_a_mesh_object_says_so(addon, call):
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        call(addon.api)
    line = str(err.value)
    assert line.startswith("skinmodes_api.") and "needs a mesh object" in line and "\n" not in line


def test_set_poses_none_is_one_line_and_changes_nothing(addon, creature):
    obj, _, _ = creature
    addon.api.set_poses(obj, [(40, "auto")])
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.set_poses(obj, None)
    assert "list of (frame, contact) pairs" in str(err.value)
    assert addon.api.poses(obj) == [(40, "auto")]


def test_find_gait_on_a_rigged_character_is_refused_as_rigged(addon, creature):
    obj, _, scene = creature
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.locomotion.job.start_gait_job(obj, scene)
    assert "is rigged" in str(err.value) and "Armature modifier" in str(err.value)
    assert obj.session_uid not in addon.locomotion.job.GAIT_JOBS
