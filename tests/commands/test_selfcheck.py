"""``scannerd selfcheck`` where there is no wheel to hold the files to: one line, not a pass.

The check of a real wheel install, and of a file changed in it by one byte, is in test_bundle.py.
"""

from __future__ import annotations

import subprocess
import sys


def test_a_checkout_installed_editable_is_not_passed_as_checked() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scannerd", "selfcheck"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("selfcheck: scannerd ") and "not installed from a wheel" in result.stderr
    assert len(result.stderr.splitlines()) == 1
