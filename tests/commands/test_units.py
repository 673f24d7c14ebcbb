"""The systemd units: valid to systemd itself, hardened, and the template in step with the plain unit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
UNITS = {"scannerd.service": "scannerd.service", "scannerd@.service": "scannerd@bac-01.service"}
INSTALLED_PATH = "/opt/scannerd/bin/scannerd"

analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze not installed (Debian package 'systemd')",
)


def local_copy(tmp_path: Path, unit: str) -> Path:
    """The unit as installed, but starting this checkout's scannerd, so verify can check ExecStart."""
    scannerd = Path(sys.executable).parent / "scannerd"
    assert scannerd.exists(), "the package must be installed in the test environment"
    text = (SYSTEMD / unit).read_text()
    assert INSTALLED_PATH in text
    path = tmp_path / UNITS[unit]
    path.write_text(text.replace(INSTALLED_PATH, str(scannerd)))
    return path


def verify(path: Path) -> None:
    """``systemd-analyze verify``, its warnings counted as failures; a template is checked as an instance.

    A command this machine does not have (cage, on a machine without a
    screen) is replaced by ``/bin/true``, so that the rest is still checked.
    """
    text = path.read_text()
    for command in set(re.findall(r"^Exec\w+=[-@:+!]*(/\S+)", text, re.MULTILINE)):
        if not os.access(command, os.X_OK):
            text = text.replace(command, "/bin/true")
    path.write_text(text)
    if path.name.endswith("@.service"):
        instance = path.with_name(path.name.replace("@.", "@bac-01."))
        shutil.copyfile(path, instance)
        path = instance
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    # Unknown or misspelt settings are only warnings to systemd; to us they are failures.
    assert path.name not in result.stderr, result.stderr


@analyze
@pytest.mark.parametrize("unit", UNITS)
def test_systemd_analyze_verify_passes_without_warnings(tmp_path: Path, unit: str) -> None:
    verify(local_copy(tmp_path, unit))


@analyze
@pytest.mark.parametrize("unit", UNITS)
def test_security_exposure_is_two_or_better(tmp_path: Path, unit: str) -> None:
    path = local_copy(tmp_path, unit)
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    level = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert level, result.stdout
    assert float(level[1]) <= 2.0, result.stdout


def _settings(unit: str) -> list[str]:
    return [
        line
        for line in (SYSTEMD / unit).read_text().splitlines()
        if line and not line.startswith("#") and "%i" not in line
    ]


def test_template_differs_from_the_plain_unit_only_per_instance() -> None:
    plain = _settings("scannerd.service")
    template = _settings("scannerd@.service")
    per_table = {"ExecStart=", "StateDirectory=", "LogsDirectory=", "LoadCredential=", "Description="}
    assert template == [line for line in plain if not line.startswith(tuple(per_table))]


@pytest.mark.parametrize("unit", UNITS)
def test_unit_starts_scannerd_as_a_watched_notify_service(unit: str) -> None:
    settings = set((SYSTEMD / unit).read_text().splitlines())
    assert {"Type=notify", "NotifyAccess=main", "Restart=on-failure", "User=scannerd"} <= settings
    assert any(line.startswith("WatchdogSec=") for line in settings)
    assert "RestartPreventExitStatus=2" in settings  # a bad config is not retried forever


def test_sysusers_creates_the_service_account() -> None:
    entries = [
        line.split()
        for line in (SYSTEMD / "sysusers.d" / "scannerd.conf").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert entries[0][:2] == ["u", "scannerd"]
