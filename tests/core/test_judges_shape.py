"""The validator stays a thin dispatcher over small judges, read from the source (``ast``).

A judge that grows a second job, or a validator that takes the judges' work
back, shows first as long functions and a long dispatcher; a command judged in
two places, or a judge left out of the compiled build, as a list that no
longer matches (docs/architecture.md, "Adding a judge").
"""

from __future__ import annotations

import ast
from pathlib import Path

from scannerd.contract.command_catalogue import JUDGED
from scannerd.runtime.build import COMPILED

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "scannerd" / "core"
JUDGES = CORE / "judges"
LONGEST_FUNCTION = 60
LONGEST_DISPATCHER = 300


def lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1  # type: ignore[attr-defined, operator]


def test_no_function_is_over_sixty_lines() -> None:
    """The core's judges, and every other room of the house: a function that outgrows a screen is
    several jobs, and the next feature would move into it."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines(node)} lines)"
        for path in sorted((ROOT / "scannerd").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and lines(node) > LONGEST_FUNCTION
    ]
    assert long == []


def test_the_validator_is_a_dispatcher_under_three_hundred_lines() -> None:
    tree = ast.parse((CORE / "validator.py").read_text())
    (validator,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Validator"]
    assert lines(validator) < LONGEST_DISPATCHER


def test_each_judged_command_has_one_judge() -> None:
    """Each judge names its commands in ``commands``: together, the catalogue's commands, each once."""
    named = [
        key.value
        for path in sorted(JUDGES.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.FunctionDef) and node.name == "commands"
        for returned in ast.walk(node)
        if isinstance(returned, ast.Dict)
        for key in returned.keys
        if isinstance(key, ast.Constant)
    ]
    assert sorted(named) == sorted(JUDGED)


def test_every_judge_is_compiled_with_the_validator() -> None:
    judges = {f"scannerd.core.judges.{path.stem}" for path in JUDGES.glob("*.py") if path.stem != "__init__"}
    assert judges - set(COMPILED) == set()
