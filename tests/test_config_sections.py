"""Each config section lives with the code it configures; ``scannerd/config.py`` only assembles them.

So a section can be read (the pit's ``--listen``, a test's ``LogSettings``)
without the whole config, and no import circle runs through the config: a
section that imported its owner's runtime, or an owner that imported the
config back, would make one.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from scannerd import config
from scannerd.config import Config
from scannerd.config_errors import section_type
from scannerd.config_section import Section

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("drivers", "scannerd", "simulators")
SECTIONS = sorted({section_type(f.annotation) for f in Config.model_fields.values()} - {None}, key=str)

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("scannerd", "aiohttp")))))
"""


def test_the_config_declares_no_section_of_its_own() -> None:
    declared = [
        name
        for name, value in vars(config).items()
        if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == config.__name__
    ]
    assert declared == ["Config"]
    assert SECTIONS, "Config has sections"
    for section in SECTIONS:
        assert issubclass(section, Section), f"{section.__name__} is strict and closed like every section"


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.__name__)
def test_each_section_imports_alone_without_the_config_or_a_server(section: type[Section]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, section.__module__],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    loaded = json.loads(out)
    assert "scannerd.config" not in loaded
    assert not [m for m in loaded if m.startswith(("aiohttp", "scannerd.display.server"))]


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(tree: ast.Module) -> set[str]:
    """Every module a file imports when it runs, in functions too; ``if TYPE_CHECKING:`` blocks never run."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs: each one it names, and the packages above (``__init__``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imported(ast.parse(path.read_text())):
            parts = imported.split(".")
            targets.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph[name])
    return seen


def test_no_import_circle_runs_through_the_config_a_section_or_the_display() -> None:
    graph = _import_graph()
    watched = {"scannerd.config", "scannerd.config_section", *(s.__module__ for s in SECTIONS)}
    watched.update(name for name in graph if name.split(".")[:2] == ["scannerd", "display"])
    circles = sorted(name for name in watched if name in _reachable(graph, name))
    assert circles == []


def test_the_display_does_not_import_the_config() -> None:
    graph = _import_graph()
    display = [name for name in graph if name.split(".")[:2] == ["scannerd", "display"]]
    assert [name for name in display if "scannerd.config" in _reachable(graph, name)] == []
