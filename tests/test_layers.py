"""The layers stay as docs/architecture.md draws them, read from the source (``ast``), not by importing.

A circle that only bites in one import order, or a check on a concrete
driver class in a module no test imports, is still found.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from drivers.registry import BUILTIN_DRIVERS, get_driver_class

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scannerd", "drivers", "simulators")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(tree: ast.Module, *, type_checking: bool) -> set[str]:
    """Every module a file names in an import, in functions too; ``if TYPE_CHECKING:`` ones if asked."""
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
                node.body = []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_graph(*, type_checking: bool, packages_above: bool) -> dict[str, set[str]]:
    """Module -> the project's modules it imports; with ``packages_above``, the ``__init__``s that runs."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for module in imported(ast.parse(path.read_text(), str(path)), type_checking=type_checking):
            parts = module.split(".")
            targets.update(
                ".".join(parts[:n]) for n in range(1 if packages_above else len(parts), len(parts) + 1)
            )
        graph[name] = {target for target in targets if target in known and target != name}
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph[name])
    return seen


def test_no_module_imports_one_that_imports_it() -> None:
    """Type hints count: two modules that each need the other are one knot, whenever it bites."""
    graph = import_graph(type_checking=True, packages_above=False)
    assert sorted(f"{a} <-> {b}" for a in graph for b in graph[a] if a in reachable(graph, b)) == []


def test_the_display_does_not_import_the_config() -> None:
    """The display's settings stand alone, so the display is built and tested without a table's config."""
    graph = import_graph(type_checking=False, packages_above=True)
    display = [name for name in graph if name.split(".")[:2] == ["scannerd", "display"]]
    assert [name for name in display if "scannerd.runtime.config" in reachable(graph, name)] == []


# Import every module of the package, then say which modules of the daemon came along.
_PROBE = """
import json, pkgutil, importlib, sys
import drivers
for info in pkgutil.walk_packages(drivers.__path__, "drivers."):
    importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m == "scannerd" or m.startswith("scannerd."))))
"""


def test_importing_every_driver_module_imports_nothing_from_scannerd() -> None:
    """A driver package (a plugin too) depends on ``drivers``, never on the daemon."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert json.loads(out) == []


def test_nothing_outside_drivers_asks_which_class_a_driver_is() -> None:
    """A fact about a device family lives on its driver; the rest of the code asks the driver."""
    classes = {cls.__name__ for name in BUILTIN_DRIVERS for cls in get_driver_class(name).__mro__}
    classes -= {"Driver", "object"}
    offenders = []
    for name, path in modules().items():
        if name.split(".")[0] == "drivers":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (
                isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass")
            ):
                continue
            names = (
                {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if len(node.args) > 1
                else set()
            )
            if names & classes:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


# The floor plan (docs/architecture.md): a folder per concern, and which may lean on which.
PURE = ("core", "contract")
"""Judgement and the contract: functions of their input, so a replay is exact and the core fast."""
IO_MODULES = frozenset(
    {"socket", "serial", "usb", "sqlite3", "paho", "aiohttp", "asyncio", "threading", "subprocess", "select"}
)
CLOCK = frozenset({"time.sleep", "time.time", "time.monotonic", "datetime.datetime.now"})
COMMAND_LINE = ("runtime", "commands")
"""What only the command line may import: the running daemon and the subcommands."""


def folder_of(module: str) -> str | None:
    """``scannerd.<folder>`` for a module of a folder; None for the package's top-level files."""
    parts = module.split(".")
    return parts[1] if parts[0] == "scannerd" and len(parts) > 2 else None


def test_every_module_of_scannerd_lives_in_a_folder_of_its_concern() -> None:
    """The top level holds the package's face, the command line's entry and nothing else."""
    top = sorted(p.name for p in (ROOT / "scannerd").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py"]


def test_the_pure_folders_do_no_io_and_read_no_clock() -> None:
    offenders = []
    for name, path in modules().items():
        if folder_of(name) not in PURE:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for module in imported(tree, type_checking=False):
            if module.split(".")[0] in IO_MODULES:
                offenders.append(f"{name} imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) in CLOCK:
                offenders.append(f"{name}:{node.lineno} calls {ast.unparse(node)}")
    assert offenders == []


def test_the_pure_folders_lean_on_nothing_but_each_other_the_settings_base_and_the_drivers_data() -> None:
    graph = import_graph(type_checking=True, packages_above=False)
    offenders = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        if folder_of(name) in PURE
        for target in targets
        if not (folder_of(target) in (*PURE, "settings") or target in ("drivers.cards", "drivers.events"))
    ]
    assert offenders == []


def test_only_the_command_line_imports_the_runtime_or_the_commands() -> None:
    graph = import_graph(type_checking=True, packages_above=False)
    offenders = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        if folder_of(name) not in COMMAND_LINE and name not in ("scannerd.cli", "scannerd.__main__")
        for target in targets
        if folder_of(target) in COMMAND_LINE
    ]
    assert offenders == []


FLOORS = (
    ("commands",),
    ("runtime",),
    ("pit",),
    ("client",),
    ("display",),
    ("audit",),
    ("archive",),
    ("recording",),
    ("link",),
    ("store",),
    ("staff",),
    ("core", "contract"),
    ("settings",),
)
"""The folders of scannerd/ from the top floor down, as docs/architecture.md draws them."""


def test_each_folder_imports_only_the_floors_below_it() -> None:
    floor = {folder: n for n, folders in enumerate(FLOORS) for folder in folders}
    on_disk = {p.name for p in (ROOT / "scannerd").iterdir() if (p / "__init__.py").exists()}
    assert on_disk == set(floor), "a folder of scannerd/ is missing from FLOORS, or FLOORS names one gone"
    graph = import_graph(type_checking=True, packages_above=False)
    offenders = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        if (here := folder_of(name)) is not None
        for target in targets
        if (there := folder_of(target)) is not None
        and there != here
        and floor[there] <= floor[here]
        and {here, there} != {"core", "contract"}
    ]
    assert offenders == []


def _side_names() -> set[str]:
    from scannerd.core.games import GAMES

    return {name for game in GAMES.values() for name in (*game.sides, *game.positions)}


SAVED_STATE_FIELDS = "plain"
"""The validator's saved round keeps each hand under its side's name (the saved state's own keys,
which old states must keep loading): the names it copies by are the one use allowed."""


def test_a_sides_name_is_spelled_only_by_the_games() -> None:
    """What a game's sides are called is declared once (``scannerd/core/games/``): everything else reads
    them from the table's ``Game``, so a new game needs no edits across the display, the audit, watch."""
    names, found = _side_names(), []
    for path in sorted((ROOT / "scannerd").rglob("*.py")):
        if path.is_relative_to(ROOT / "scannerd" / "core" / "games"):
            continue
        tree = ast.parse(path.read_text())
        allowed = {
            id(arg)
            for call in ast.walk(tree)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == SAVED_STATE_FIELDS
            for arg in call.args
        }
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed
        ]
    assert not found, "side names outside scannerd/core/games/:\n" + "\n".join(found)
