"""The repository's layout rules (issue 13).

- core never imports bpy and imports itself relatively (it ships nested in the extension);
- each room of core/ says what it holds, and the shipped rooms never import the validation room;
- core's rooms stand on floors (FLOORS): none imports from a higher floor, and rooms of one floor
  import each other without a cycle;
- every module has a test module at the mirrored path:
  core/<room>/<m>.py -> tests/core/<room>/test_<m>.py, skinmodes_addon/<m>.py -> tests/addon/test_<m>.py,
  skinmodes_addon/<room>/<m>.py -> tests/addon/<room>/test_<m>.py;
- the add-on has no import cycle, late imports included, and its settings import nothing of it.
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


def first_cycle(graph):
    """A cycle of ``graph`` (node -> set of nodes it points at) as [a, b, ..., a], or None; nodes visited in
    sorted order so the same tree always names the same cycle."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph[node]):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


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
    shipped = [p for p in core_modules() if "validation" not in p.relative_to(CORE).parts] + addon_modules()
    for path in shipped:
        for level, module, names in imports(path):
            assert "validation" not in module.split(".") and "validation" not in names, (path, module)


# core's floors, bottom first: a room imports only rooms on its own floor or below.
# The ground holds the shared math and the mesh, then the character's model, its
# reduced space, the simulator and the files, the drives built on them, the
# pipeline that runs a drive over frames, and the validation room on top.
# Top-level modules (errors, settings) stand on the ground.
FLOORS = (
    ("errors", "settings", "linalg", "geometry"),
    ("model",),
    ("subspace",),
    ("dynamics", "io", "contact"),
    ("physskin", "posespace", "rotstrain", "locomotion"),
    ("pipeline",),
    ("validation",),
)


def core_room(path):
    """The room of a core module ("dynamics"); a top-level module is its own room ("errors")."""
    rel = path.relative_to(CORE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def core_room_imports():
    """(room, imported room, module) for every relative import that crosses rooms, late ones included."""
    for path in core_modules():
        if path == CORE / "__init__.py":
            continue
        package = list(path.relative_to(CORE).parts[:-1])
        for level, module, names in imports(path):
            if level == 0:
                continue
            base = package[: len(package) - (level - 1)] + [part for part in module.split(".") if part]
            for target in base[:1] or names:  # `from .. import x` names room x
                if target != core_room(path):
                    yield core_room(path), target, path.relative_to(ROOT)


def test_core_rooms_import_only_from_their_floor_or_below():
    floor = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}
    rooms = {core_room(p) for p in core_modules() if p != CORE / "__init__.py"}
    assert rooms == set(floor), f"place every room of core on a floor in FLOORS: {sorted(rooms ^ set(floor))}"
    upward = [f"{m}: {a} -> {b}" for a, b, m in core_room_imports() if floor[b] > floor[a]]
    assert not upward, f"imports from a higher floor: {upward}"


def test_core_rooms_on_one_floor_import_each_other_without_a_cycle():
    floor = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}
    graph = {room: set() for room in floor}
    for a, b, _ in core_room_imports():
        if floor[a] == floor[b]:
            graph[a].add(b)
    cycle = first_cycle(graph)
    assert cycle is None, f"rooms of one floor import in a cycle: {' -> '.join(cycle)}"


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


def addon_modules():
    """The add-on's own modules, its rooms' included (not the core it ships, nor its presets)."""
    return sorted(p for p in ADDON.rglob("*.py") if p.relative_to(ADDON).parts[0] not in ("core", "presets"))


def addon_name(path):
    """An add-on module's dotted name inside the add-on ("session.jobs"; "" for the add-on itself)."""
    parts = path.relative_to(ADDON).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def addon_import_graph():
    """Add-on module -> the add-on modules it imports, by dotted name.

    Every relative import counts, function-level ones included (a late
    import dodges a cycle at import time, not in the design); ``from . import x``
    names module x where there is one.  Imports of the shipped core are not
    add-on modules.
    """
    paths = {addon_name(p): p for p in addon_modules()}
    graph = {}
    for name, path in paths.items():
        package = name.split(".") if path.stem == "__init__" and name else name.split(".")[:-1]
        package = [part for part in package if part]
        graph[name] = set()
        for level, module, names in imports(path):
            if level == 0:
                continue
            base = package[: len(package) - (level - 1)] + [part for part in module.split(".") if part]
            for target in [".".join([*base, n]) for n in names if ".".join([*base, n]) in paths] or [".".join(base)]:
                if target in paths and target.split(".")[0] != "core":
                    graph[name].add(target)
    return graph


def test_the_addon_has_no_import_cycle():
    graph = addon_import_graph()
    assert {"session.jobs", "bake.job", "registry"} <= graph.keys()  # the graph sees the rooms
    cycle = first_cycle(graph)
    assert cycle is None, f"import cycle in the add-on: {' -> '.join(cycle)}"


def test_the_settings_and_the_registry_import_nothing_of_the_addon():
    """props and registry sit at the bottom: any module may import them, they import none."""
    graph = addon_import_graph()
    assert graph["props"] == set() and graph["registry"] == set()


def test_tests_mirror_addon_modules():
    """Every add-on module has its test module: skinmodes_addon/<m>.py -> tests/addon/test_<m>.py,
    skinmodes_addon/<room>/<m>.py -> tests/addon/<room>/test_<m>.py (registration is __init__'s)."""
    missing = []
    for p in addon_modules():
        rel = p.relative_to(ADDON)
        if rel.parent != Path(".") and p.stem == "__init__":
            continue  # a room's front door: its modules are tested where they are
        stem = "register" if rel == Path("__init__.py") else p.stem
        test = ROOT / "tests" / "addon" / rel.parent / f"test_{stem}.py"
        if not test.exists():
            missing.append(str(test.relative_to(ROOT)))
    assert not missing, f"add-on modules without their test module: {missing}"


# The test kit and the add-on's link to core (issue 25, items 5 and 2).
KIT_USERS = ("tests", "bench", "tools", "testkit")


def kit_user_files():
    """Every Python file of the tests, the bench, the tools, the test kit, and tasks.py."""
    return [p for folder in KIT_USERS for p in sorted((ROOT / folder).rglob("*.py"))] + [ROOT / "tasks.py"]


def test_the_addon_reaches_core_through_a_committed_link():
    """skinmodes_addon/core -> ../core: the add-on's relative imports of core resolve in the source tree."""
    import importlib.machinery

    link = ADDON / "core"
    assert link.is_symlink() and str(link.readlink()) == "../core", "skinmodes_addon/core must be a link to ../core"
    tracked = subprocess.run(
        ["git", "ls-files", "-s", "skinmodes_addon/core"], cwd=ROOT, capture_output=True, text=True
    )
    assert tracked.stdout.startswith("120000 "), "the link must be committed as a symlink"
    spec = importlib.machinery.PathFinder.find_spec("settings", [str(link)])
    assert spec is not None and Path(spec.origin).resolve() == CORE / "settings.py"


def test_nothing_edits_sys_path():
    """Tests, bench, tools and the test kit import each other as packages from the repository root."""
    for path in kit_user_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            target = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                target = target.value if isinstance(target, ast.Subscript) else target
            edits = isinstance(target, ast.Attribute) and target.attr == "path"
            assert not (edits and isinstance(target.value, ast.Name) and target.value.id == "sys"), (path, node.lineno)


def test_the_bpy_exit_workaround_is_written_once():
    """Leaving without bpy's teardown is testkit.blender_process.leave; the rest call it."""
    for path in kit_user_files():
        if path == ROOT / "testkit" / "blender_process.py" or path.parts[-3:-1] == ("core", "io"):
            continue  # test_atomic's forked child ends with os._exit for its own reason
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "_exit" and isinstance(node.value, ast.Name):
                assert node.value.id != "os", (path, node.lineno)


def test_tools_are_command_lines_nothing_imports():
    """tools/ holds thin scripts (``python -m tools.<name>``); what they share is in testkit/."""
    for path in kit_user_files():
        for level, module, _ in imports(path):
            assert not (level == 0 and module.split(".")[0] == "tools"), (path, module)
    for path in sorted((ROOT / "tools").glob("*.py")):
        if path.stem != "__init__":
            assert 'if __name__ == "__main__":' in path.read_text(), f"{path.name} is not a command line"


def bench_import_graph():
    """bench module -> the bench modules it imports (late imports included), by dotted name."""
    paths = {".".join(p.relative_to(ROOT).with_suffix("").parts): p for p in (ROOT / "bench").rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
        graph[name] = set()
        for level, module, names in imports(path):
            if level:
                base = package.rsplit(".", level - 1)[0] if level > 1 else package
                module = f"{base}.{module}" if module else base
            for target in [module, *(f"{module}.{n}" for n in names)]:
                if target in paths and target != name:
                    graph[name].add(target)
    return graph


def test_bench_has_no_import_cycle():
    graph = bench_import_graph()
    assert {"bench.common", "bench.report", "bench.physskin"} <= graph["bench.__main__"]  # the graph sees bench
    cycle = first_cycle(graph)
    assert cycle is None, f"bench import cycle: {' -> '.join(cycle)}"
