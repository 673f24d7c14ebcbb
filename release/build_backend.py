"""The build backend: setuptools' own, and with ``SCANNERD_COMPILE=1`` the judging modules compiled by mypyc.

``pyproject.toml`` names this module (``backend-path``, as setuptools documents
for build requirements that depend on the build), so that the default build
stays pure Python and needs nothing but setuptools, and only the compiled one
asks for mypy, whose mypyc compiles, at the version ``constraints.txt`` pins,
with pydantic at its pin for the types the compiled modules' imports reach
(and its mypy plugin, which the ``[tool.mypy]`` settings load).

``setup.py`` takes ``extensions()`` as its extension modules, the modules
``scannerd/runtime/build.py`` names, and ``BuildExtensions`` to build them.
What keeps the compile short (docs/performance.md, "A compiled build"): the
C compiler's ``-O1``, as fast on the benchmarks as ``-O3`` (within the noise)
for two thirds of its time; a C file per module, as fast as one file for all
and compiled side by side, one per core.
"""

from __future__ import annotations

import os
import runpy
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from setuptools import Extension
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  # every hook not defined here is setuptools'
from setuptools.command.build_ext import build_ext

COMPILE = "SCANNERD_COMPILE"
"""``1`` asks for the compiled build."""

COMPILE_REQUIRES = ("mypy", "pydantic")
"""What the compiled build needs beyond setuptools: mypyc, and the library the compiled modules'
imports reach outside the standard library (tests/runtime/test_build.py holds it to them)."""


def compiling() -> bool:
    return os.environ.get(COMPILE) == "1"


class _Phase:
    """Whether a build hook runs: setuptools runs setup.py for the requirements and the metadata too,
    where nothing is compiled (and mypy may not be there yet)."""

    building = False


@contextmanager
def _building() -> Iterator[None]:
    _Phase.building = True
    try:
        yield
    finally:
        _Phase.building = False


def _pins(names: tuple[str, ...]) -> list[str]:
    """``name==version`` for each of ``names``, at the versions ``constraints.txt`` pins."""
    pins = {}
    for line in Path("constraints.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep:
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return [f"{name}=={pins[name]}" for name in names]


def _compile_requires() -> list[str]:
    return _pins(COMPILE_REQUIRES) if compiling() else []


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *_compile_requires()]


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_setuptools.get_requires_for_build_editable(config_settings), *_compile_requires()]


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    with _building():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    with _building():
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)


def _source(module: str) -> str:
    path = Path(*module.split("."))
    return str(path / "__init__.py" if path.is_dir() else path.with_suffix(".py"))


def extensions() -> list[Extension]:
    """The extension modules of this build: none unless compiling, and none outside a build hook."""
    if not (compiling() and _Phase.building):
        return []
    from mypyc.build import mypycify

    compiled = runpy.run_path("scannerd/runtime/build.py")["COMPILED"]
    return mypycify([_source(m) for m in compiled], opt_level="1", multi_file=True, group_name="scannerd")


class BuildExtensions(build_ext):
    """setuptools' ``build_ext``, with the C files of an extension compiled side by side, one per core.

    mypyc makes one large extension, a C file per module and its runtime's; setuptools compiles
    those one after the other (its ``parallel`` option only builds whole extensions side by side).
    """

    def build_extension(self, ext: Extension) -> None:
        compile_files = self.compiler.compile

        def side_by_side(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            with ThreadPoolExecutor(os.cpu_count()) as pool:
                objects = pool.map(lambda source: compile_files([source], *args, **kwargs), sources)
                return [obj for one in objects for obj in one]

        self.compiler.compile = side_by_side  # type: ignore[method-assign]
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = compile_files  # type: ignore[method-assign]
