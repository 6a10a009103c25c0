"""Error messages (core/errors.py)."""

from core.errors import MeshError, SkinmodesError


def test_messages_are_folded_to_one_line():
    err = MeshError("the mesh is flat;\n   give it some thickness")
    assert str(err) == "the mesh is flat; give it some thickness"
    assert isinstance(err, SkinmodesError) and isinstance(err, ValueError)
