"""The cache files' names (core/io/cache_names.py): one place for core, the bake and the session."""

from pathlib import Path

from core.io.cache_names import legacy_tet_temporary, model_cache_file, tet_cache_file

KEY = "0123456789abcdef" + "f" * 48


def test_names_carry_sixteen_hex_digits_of_the_key():
    assert model_cache_file("/c", KEY) == Path("/c/model-0123456789abcdef.npz")
    assert tet_cache_file(Path("/c"), KEY) == Path("/c/tets-0123456789abcdef.npz")
    assert legacy_tet_temporary(KEY) == "tets-0123456789abcdef.tmp.npz"
