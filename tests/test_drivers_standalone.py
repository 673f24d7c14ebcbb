"""The drivers are a layer of their own: a driver package depends on ``drivers``, never on the daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent

# Import every module of the package, then say which modules of the daemon came along.
_PROBE = """
import json, pkgutil, importlib, sys
import drivers
for info in pkgutil.walk_packages(drivers.__path__, "drivers."):
    importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m == "scannerd" or m.startswith("scannerd."))))
"""


def test_importing_every_driver_module_imports_nothing_from_scannerd() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert json.loads(out) == []
