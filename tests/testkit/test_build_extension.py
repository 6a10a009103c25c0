"""Staging the extension (testkit/build_extension.py): the add-on with core copied in once, no validation room."""

from pathlib import Path

from testkit.build_extension import ROOT, stage


def _files(folder: Path) -> set[str]:
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    }


def test_stage_copies_core_once_through_the_link_and_leaves_validation_out(tmp_path):
    dest = stage(tmp_path / "skinmodes")
    core = dest / "core"
    assert core.is_dir() and not core.is_symlink(), "core must be copied in, not linked"
    addon = _files(ROOT / "skinmodes_addon")  # rglob does not descend into the link to core
    shipped_core = {f"core/{f}" for f in _files(ROOT / "core") if not f.startswith("validation/")}
    assert _files(dest) == addon | shipped_core | {"LICENSE", "blender_manifest.toml"}
    # A development stage ships no wheels, so its manifest names none.
    assert "BEGIN WHEELS" not in (dest / "blender_manifest.toml").read_text() and not (dest / "wheels").exists()
