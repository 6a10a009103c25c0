"""The repository's layout rules (issue 13).

- core never imports bpy and imports itself relatively (it ships nested in the extension);
- each room of core/ says what it holds, and the shipped rooms never import the validation room;
- every module has a test module at the mirrored path:
  core/<room>/<m>.py -> tests/core/<room>/test_<m>.py, skinmodes_addon/<m>.py -> tests/addon/test_<m>.py.
The built zip leaving the validation room out is checked in tests/addon/test_build.py.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
ADDON = ROOT / "skinmodes_addon"


def core_modules():
    return sorted(p for p in CORE.rglob("*.py"))


def imports(path):
    """(level, module, names) of every import statement in a file."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield 0, a.name, []
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or "", [a.name for a in node.names]


def test_core_source_never_mentions_bpy():
    for path in core_modules():
        for level, module, _ in imports(path):
            # Inside core every import of core itself must be relative, so the
            # package works both as `core` and nested inside the extension.
            assert not (level == 0 and module.split(".")[0] == "core"), (path, module)
            assert module.split(".")[0] not in ("bpy", "bmesh", "mathutils"), (path, module)


def test_every_core_module_imports_with_bpy_unavailable():
    """Import all of core in a fresh interpreter where `import bpy` fails."""
    mods = [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in core_modules()]
    mods = [m[: -len(".__init__")] if m.endswith(".__init__") else m for m in mods]
    code = (
        "import sys; sys.modules['bpy'] = None\n"
        + "".join(f"import {m}\n" for m in mods)
        + "assert sys.modules['bpy'] is None\nprint('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_every_room_says_what_it_holds():
    rooms = [p for p in CORE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))]
    assert len(rooms) >= 6
    for room in rooms:
        doc = ast.get_docstring(ast.parse((room / "__init__.py").read_text()))
        assert doc and len(doc.splitlines()) <= 3, f"{room.name}/__init__.py must say in one or two lines what it holds"


def test_the_shipped_code_never_imports_the_validation_room():
    """The zip leaves core/validation out, so nothing shipped may import it."""
    shipped = [p for p in core_modules() if "validation" not in p.relative_to(CORE).parts] + sorted(ADDON.glob("*.py"))
    for path in shipped:
        for level, module, names in imports(path):
            assert "validation" not in module.split(".") and "validation" not in names, (path, module)


def test_tests_mirror_core_modules():
    """Every core module has a test module at the mirrored path."""
    missing = []
    for p in core_modules():
        if p.stem == "__init__":
            continue
        rel = p.relative_to(CORE)
        test = ROOT / "tests" / "core" / rel.parent / f"test_{p.stem}.py"
        if not test.exists():
            missing.append(str(test.relative_to(ROOT)))
    assert not missing, f"core modules without their test module: {missing}"


def test_tests_mirror_addon_modules():
    """Every add-on module has tests/addon/test_<module>.py (registration is __init__'s)."""
    names = {"__init__": "register"}
    missing = [
        f"tests/addon/test_{names.get(p.stem, p.stem)}.py"
        for p in sorted(ADDON.glob("*.py"))
        if not (ROOT / "tests" / "addon" / f"test_{names.get(p.stem, p.stem)}.py").exists()
    ]
    assert not missing, f"add-on modules without their test module: {missing}"
