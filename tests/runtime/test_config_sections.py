"""Each config section lives with the code it configures; ``scannerd/runtime/config.py`` only assembles them.

So a section can be read (the pit's ``--listen``, a test's ``LogSettings``)
without the whole config, and no import circle runs through the config: a
section that imported its owner's runtime, or an owner that imported the
config back, would make one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from scannerd.runtime import config
from scannerd.runtime.config import Config
from scannerd.settings.config_errors import section_type
from scannerd.settings.config_section import Section

ROOT = Path(__file__).resolve().parents[2]
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
    assert "scannerd.runtime.config" not in loaded
    assert not [m for m in loaded if m.startswith(("aiohttp", "scannerd.display.server"))]
