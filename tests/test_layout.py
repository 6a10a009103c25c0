"""The repository's layout rules: core never imports bpy and imports itself relatively."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"


def core_modules():
    return sorted(p for p in CORE.rglob("*.py"))


def test_core_source_never_mentions_bpy():
    for path in core_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
                # Inside core every import of core itself must be relative, so the
                # package works both as `core` and nested inside the extension.
                assert not (node.level == 0 and (node.module or "").split(".")[0] == "core"), (path, node.module)
            else:
                continue
            assert not any(n.split(".")[0] in ("bpy", "bmesh", "mathutils") for n in names), (path, names)


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


def test_tests_mirror_core_modules():
    """Every core module has a test module of the same name."""
    tested = {p.name for p in (ROOT / "tests" / "core").glob("test_*.py")}
    missing = [p.stem for p in core_modules() if p.stem != "__init__" and f"test_{p.stem}.py" not in tested]
    assert not missing, f"core modules without tests/core/test_<name>.py: {missing}"
