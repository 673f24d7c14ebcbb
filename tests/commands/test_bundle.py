"""The offline bundle: made by one command, installed on a PC that cannot reach any package index.

Making the bundle needs the index (this machine's pip configuration); the
install from it runs with no pip configuration at all, ``--no-index`` and a
proxy that does not exist, so any attempt to fetch would fail. The scannerd
wheel is the compiled build, made for the bundle's Python. Then the
installed ``scannerd`` runs the demo, and the units it installs pass
``systemd-analyze verify``. The bundle and its venv are made once per test
session: the tests share them. The bundle is made by a Python with no pip,
as Debian's python3 is without python3-pip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from scannerd import __version__
from tests.commands.test_units import analyze, verify
from tests.support.netns import host_network

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing answers there

pytestmark = pytest.mark.timeout(600)


@dataclass(frozen=True)
class Installed:
    bundle: Path
    venv: Path

    @property
    def scannerd(self) -> Path:
        return self.venv / "bin" / "scannerd"


def offline_env(home: Path) -> dict[str, str]:
    """An environment with no pip configuration and no way out to a package index."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PIP_CONFIG_FILE": os.devnull,
        "http_proxy": UNREACHABLE,
        "https_proxy": UNREACHABLE,
        "LANG": "C.UTF-8",
    }


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("bundle")
    # The bundle machine's Python as Debian 12 has it with python3-venv and no python3-pip:
    # venv and ensurepip are there, a pip module is not.
    no_pip = work / "no-pip"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", no_pip], check=True, timeout=120)
    python = no_pip / "bin" / "python"
    assert subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode != 0
    made = subprocess.run(
        [ROOT / "release" / "bundle", work / "dist"],
        env={**os.environ, "PYTHON": str(python)},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=host_network,  # the index is out there, even from a test process with its own network
    )
    assert made.returncode == 0, f"release/bundle needs the package index:\n{made.stderr[-3000:]}"
    tarball = Path(made.stdout.split()[-1])
    assert tarball == work / "dist" / f"scannerd-{__version__}.tar.gz"

    # On the table: the tarball alone, unpacked somewhere else, and a venv made there.
    table = work / "table"
    table.mkdir()
    shutil.unpack_archive(tarball, table)
    bundle = table / f"scannerd-{__version__}"
    venv = table / "opt-scannerd"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
    install = subprocess.run(
        [venv / "bin" / "pip", "install", "-q", "--no-index", "--find-links", bundle / "wheels",
         "-c", bundle / "constraints.txt", "scannerd"],
        env=offline_env(table), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    return Installed(bundle, venv)


def test_every_wheel_in_the_bundle_is_pinned_in_the_constraints(installed: Installed) -> None:
    pins = dict(
        line.lower().replace("_", "-").split("==")
        for line in (installed.bundle / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for wheel in (installed.bundle / "wheels").glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        name = name.lower().replace("_", "-")
        if name != "scannerd":
            assert pins.get(name) == version, f"{wheel.name} is not the pinned {pins.get(name)}"


def test_ci_installs_with_the_constraints() -> None:
    assert re.search(r"pip install .*-c constraints\.txt", (ROOT / ".ci" / "run").read_text())


def test_the_bundle_ships_the_compiled_build_for_its_python(installed: Installed) -> None:
    """The judging modules compiled by mypyc, in a wheel tagged for the Python that made the bundle."""
    (wheel,) = (installed.bundle / "wheels").glob("scannerd-*.whl")
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name.startswith(f"scannerd-{__version__}-{tag}-{tag}-"), wheel.name
    with zipfile.ZipFile(wheel) as carried:
        assert "scannerd/core/validator.py" in carried.namelist()  # the source ships beside it
    said = subprocess.run([installed.scannerd, "--version"], capture_output=True, text=True, timeout=60)
    assert said.stdout == f"scannerd {__version__} (compiled: mypyc)\n", said.stderr


def test_the_installed_command_runs_the_demo(installed: Installed, tmp_path: Path) -> None:
    proc = subprocess.run(
        [installed.scannerd, "demo", "--seconds", "6", "--pace", "0.05", "--betting-time", "0.2",
         "--no-view", "--listen", "127.0.0.1:0", "--seed", "1", "--error-rate", "0", "--dir", tmp_path],
        env=offline_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r" round \S+ hand=\d+ complete winner=", proc.stdout), proc.stdout


@analyze
def test_the_units_it_installs_pass_systemd_analyze_verify(installed: Installed, tmp_path: Path) -> None:
    root = tmp_path / "root"
    done = subprocess.run(
        [installed.scannerd, "install", "--root", root], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    units = sorted((root / "etc" / "systemd" / "system").glob("*.service"))
    assert {u.name for u in units} >= {"scannerd.service", "scannerd@.service"}
    for unit in units:
        assert "/opt/scannerd/bin/scannerd" not in unit.read_text(), "it starts this installation's scannerd"
        verify(unit)
    assert f"ExecStart={installed.scannerd} run" in (units[0].parent / "scannerd.service").read_text()
    assert (root / "etc" / "udev" / "rules.d" / "99-scannerd-shoe.rules").is_file()
    assert (root / "etc" / "sysusers.d" / "scannerd.conf").is_file()
    assert (root / "etc" / "scannerd" / "scannerd.toml.example").is_file()


def test_the_wheel_carries_the_monitoring_hosts_files(installed: Installed, tmp_path: Path) -> None:
    """The alerting rules and the dashboard come in the wheel, byte for byte, and install under /usr/share."""
    (wheel,) = (installed.bundle / "wheels").glob("scannerd-*.whl")
    with zipfile.ZipFile(wheel) as carried:
        for name in ("prometheus-scannerd-alerts.yml", "grafana-scannerd-dashboard.json"):
            assert carried.read(f"scannerd/table_files/{name}") == (ROOT / "systemd" / name).read_bytes()
    root = tmp_path / "root"
    done = subprocess.run(
        [installed.scannerd, "install", "--root", root], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    share = root / "usr" / "share" / "scannerd"
    assert (share / "prometheus" / "prometheus-scannerd-alerts.yml").is_file()
    assert (share / "grafana" / "grafana-scannerd-dashboard.json").is_file()


def test_selfcheck_finds_an_installed_file_changed_by_one_byte(installed: Installed) -> None:
    """What runs on the table is what the wheel shipped, or the check says which file is not."""
    ok = subprocess.run([installed.scannerd, "selfcheck"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert re.fullmatch(
        rf"scannerd {__version__}: \d+ files intact; installed set sha256:[0-9a-f]{{64}}\n", ok.stdout
    )
    target = next(installed.venv.glob("lib/python*/site-packages/scannerd/core/validator.py"))
    original = target.read_bytes()
    target.write_bytes(original.replace(b"validator", b"Validator", 1))  # one byte
    try:
        bad = subprocess.run([installed.scannerd, "selfcheck"], capture_output=True, text=True, timeout=60)
    finally:
        target.write_bytes(original)
    assert bad.returncode == 1
    assert bad.stderr == "selfcheck: scannerd/core/validator.py differs from what the wheel recorded\n"
    assert "NOT intact" in bad.stdout and "Traceback" not in bad.stderr
