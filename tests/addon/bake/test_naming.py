"""Bake file names: portable, readable, and told apart by a hash of the object's identity."""

import pytest


@pytest.mark.parametrize(
    ("name", "safe"),
    [("Körper", "Korper"), ("Body L", "Body_L"), ("../../etc", "etc"), (".hidden", "hidden"), ("***", "object")],
)
def test_safe_names_are_portable_and_never_a_path(addon, name, safe):
    assert addon.bake.naming.safe_name(name) == safe


def test_the_stem_tells_objects_apart_and_an_unsaved_file_has_no_point_cache_beside_it(addon, creature):
    naming = addon.bake.naming
    obj, _, _ = creature
    stem = naming.cache_stem(obj)
    assert stem.startswith(naming.safe_name(obj.name) + "-") and len(stem.rsplit("-", 1)[1]) == naming.STEM_HASH
    assert naming.cache_stem(obj, salt=1) != stem
    # Unsaved: this process's own identity, so another unsaved session's files never share the names.
    assert naming.blend_identity(naming.cache_folder(obj.skinmodes)) == naming.unsaved_identity()
    assert naming.unsaved_identity().startswith(naming.UNSAVED + str(addon.session.unsaved_folder()))
    assert naming.pc2_path(obj)[1].parent == naming.cache_folder(obj.skinmodes)  # the fixture's absolute folder
    obj.skinmodes.cache_dir = "//skinmodes_cache/"
    with pytest.raises(addon.core.errors.SkinmodesError, match=r"save the \.blend first"):
        naming.pc2_path(obj)
