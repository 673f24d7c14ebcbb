"""Every file the docs cite is there, and every name cited beside it is defined in it.

A move of the floor plan rewrites the paths; this keeps a page from sending a
newcomer to a file or a function that is gone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = r"(?:scannerd|drivers|simulators|tests|bench|release|systemd)/[\w./@-]*\w"
CITED = re.compile(rf"`({PATH})`")
# `path.py`: `Name.attr` and `path.py: Name.attr`, as the architecture tour cites code.
WITH_NAME = re.compile(rf"`({PATH}\.py)(?:`: `|: )([A-Za-z_][\w.]*)`")
# `tests/.../test_x.py::test_name[variant]`, as reliability.md names the test that holds a promise.
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[[^`]*\])?`")


def test_every_test_the_docs_name_is_there() -> None:
    missing = [
        f"{page.name}: {path}::{name}"
        for page in PAGES
        for path, name in TEST_ID.findall(page.read_text())
        if not (ROOT / path).exists()
        or name not in {n.name for n in ast.walk(ast.parse((ROOT / path).read_text())) if hasattr(n, "name")}
    ]
    assert missing == []


def defined(path: Path) -> set[str]:
    """Top-level names, and Class.member for members of top-level classes."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}.{item.name}")
                elif isinstance(item, ast.AnnAssign | ast.Assign):
                    targets = [item.target] if isinstance(item, ast.AnnAssign) else item.targets
                    names.update(f"{node.name}.{t.id}" for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_every_path_the_docs_cite_exists() -> None:
    missing = [
        f"{page.name}: {path}"
        for page in PAGES
        for path in CITED.findall(page.read_text())
        if "NAME" not in path and "*" not in path and not (ROOT / path).exists()
    ]
    assert missing == []


def test_every_name_cited_beside_its_file_is_defined_there() -> None:
    missing = []
    for page in PAGES:
        for path, name in WITH_NAME.findall(page.read_text()):
            if (ROOT / path).exists() and name not in defined(ROOT / path):
                missing.append(f"{page.name}: {path}: {name}")
    assert missing == []
