"""Which build runs, and what a compiled build needs: read from the files, decided without a flag.

The compiled build's modules are C extension modules beside their sources
(``scannerd/runtime/build.py``); the build backend (``release/build_backend.py``)
asks for mypy and pydantic at their pins only when asked to compile, so the
default install needs setuptools alone and no compiler.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from importlib import metadata
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from scannerd.runtime import build
from tests.test_layers import imported

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("scannerd", "drivers", "simulators")


def test_a_build_is_compiled_only_when_every_judging_module_is_an_extension_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "judging"
    package.mkdir()
    for name in ("__init__.py", "rules.py", "check.py"):
        (package / name).write_text("")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.setattr(build, "COMPILED", ("judging.rules", "judging.check"))

    def compile_(module: str) -> None:  # what a compiled build puts beside the source: found first
        (package / f"{module}{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
        importlib.invalidate_caches()

    assert (build.running(), build.described()) == ("pure", "pure Python")
    compile_("rules")
    assert (build.is_compiled("judging.rules"), build.running()) == (True, "pure")  # one of two: not so
    compile_("check")
    assert (build.running(), build.described()) == ("compiled", "compiled: mypyc")


def test_every_module_of_the_compiled_build_is_a_source_of_the_checkout() -> None:
    for module in build.COMPILED:
        assert _source(module.split(".")), module


def _source(parts: list[str]) -> Path | None:
    path = ROOT.joinpath(*parts)
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return source if source.is_file() else None


def _imports(module: str) -> set[str]:
    source = _source(module.split("."))
    assert source is not None, module
    return imported(ast.parse(source.read_text()), type_checking=True)


def _reached() -> set[str]:
    """The top-level packages outside the standard library and this project that the compiled modules
    import, directly or through the project's modules they import: what mypyc compiles them against."""
    seen: set[str] = set()
    outside: set[str] = set()
    todo = list(build.COMPILED)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in _imports(module):
            top = name.split(".")[0]
            parts = name.split(".")
            if top in PROJECT:  # the module and the packages above it, as far as they are modules
                todo += [".".join(parts[:n]) for n in range(1, len(parts) + 1) if _source(parts[:n])]
            elif top not in sys.stdlib_module_names:
                outside.add(top)
    return outside


def _needs(distribution: str) -> set[str]:
    """A distribution and every one it requires here (no extras), by normalised name."""
    out: set[str] = set()
    todo = [distribution]
    while todo:
        name = canonicalize_name(todo.pop())
        if name not in out:
            out.add(name)
            requirements = (Requirement(r) for r in metadata.requires(name) or [])
            todo += [r.name for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]
    return out


def _backend(hook: str, *, compile_: bool) -> list[str]:
    """What a hook of the build backend answers, asked as pip asks: in the checkout, in its own process."""
    env = {k: v for k, v in os.environ.items() if k != "SCANNERD_COMPILE"}
    if compile_:
        env["SCANNERD_COMPILE"] = "1"
    script = f"import build_backend, json; print(json.dumps(build_backend.{hook}()))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT / "release")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_compiled_build_asks_for_mypy_and_what_its_modules_import_at_their_pins() -> None:
    pins = dict(
        line.lower().replace("_", "-").split("==")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    compiled = _backend("get_requires_for_build_wheel", compile_=True)
    asked = {name: version for name, _, version in (r.partition("==") for r in compiled if "==" in r)}
    assert asked == {name: pins[name] for name in asked} and "mypy" in asked
    distributions = metadata.packages_distributions()
    covered = set().union(*(_needs(name) for name in asked))
    for package in _reached():
        assert {canonicalize_name(d) for d in distributions[package]} & covered, package
    assert _backend("get_requires_for_build_editable", compile_=True) == compiled


def test_the_default_build_asks_for_nothing_but_setuptools() -> None:
    """The README's install needs no compiler and no mypy: nothing is compiled unless asked."""
    for hook in ("get_requires_for_build_wheel", "get_requires_for_build_editable"):
        assert not [r for r in _backend(hook, compile_=False) if r.startswith(("mypy", "pydantic"))]
