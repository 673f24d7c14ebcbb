"""``scannerd install``: every file the table needs goes to its place, from the package, not a checkout."""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

import pytest

from scannerd.commands.install import NEXT_STEPS, SHIPPED_COMMAND, placements, table_files
from tests.support.command import scannerd

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_every_shipped_file_has_a_place() -> None:
    placed = placements(SYSTEMD)
    assert {p.name for p in placed} == {
        p.relative_to(SYSTEMD).as_posix() for p in SYSTEMD.rglob("*") if p.is_file()
    }
    assert all(p.target.is_absolute() for p in placed)


def test_the_files_for_other_hosts_go_under_usr_share() -> None:
    """The broker's and the monitoring host's examples are carried, not used, on the table PC."""
    placed = {p.name: p.target for p in placements(SYSTEMD)}
    assert placed["prometheus-scannerd-alerts.yml"] == PurePosixPath(
        "/usr/share/scannerd/prometheus/prometheus-scannerd-alerts.yml"
    )
    assert placed["grafana-scannerd-dashboard.json"] == PurePosixPath(
        "/usr/share/scannerd/grafana/grafana-scannerd-dashboard.json"
    )
    assert placed["mosquitto-acl.example"].parent == PurePosixPath("/usr/share/scannerd/mosquitto")


def test_a_file_no_rule_places_is_named(tmp_path: Path) -> None:
    (tmp_path / "stray.txt").write_text("")
    with pytest.raises(LookupError, match=r"^stray\.txt: no place"):
        placements(tmp_path)


def test_an_editable_install_reads_the_checkout() -> None:
    assert table_files() == SYSTEMD


def test_install_puts_each_file_in_place_and_says_what_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert scannerd("install", "--root", str(tmp_path)) == 0
    out = capsys.readouterr().out
    for placement in placements(SYSTEMD):
        target = tmp_path / placement.target.relative_to("/")
        assert str(target) in out
        assert target.stat().st_mode & 0o777 == 0o644
    unit = (tmp_path / "etc/systemd/system/scannerd.service").read_text()
    assert SHIPPED_COMMAND not in unit and f"ExecStart={sys.prefix}/bin/scannerd run" in unit
    assert "systemctl daemon-reload" in out and "systemd-sysusers" in out
    assert not (tmp_path / "etc/scannerd/scannerd.toml").exists(), "the operator's config is never written"
    dashboard = tmp_path / "usr/share/scannerd/grafana/grafana-scannerd-dashboard.json"
    assert dashboard.read_bytes() == (SYSTEMD / "grafana-scannerd-dashboard.json").read_bytes()


def test_the_next_steps_are_the_guides_own_commands() -> None:
    """What install prints and what operations.md says are one procedure: each command is the guide's.

    The config step most of all: a plain ``cp`` by root would leave a config that
    may hold secrets world-readable and outside the service's group.
    """
    guide = " ".join(GUIDE.read_text().split())
    steps = [line.split("#")[0] for line in NEXT_STEPS.format(command=SHIPPED_COMMAND).splitlines()[1:-1]]
    commands = [" ".join(part.split()) for step in steps for part in step.split("&&")]
    assert [command for command in commands if command not in guide] == []
    assert any(command.startswith("install -m 0640 -g scannerd ") for command in commands)


def test_list_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert scannerd("install", "--list", "--root", str(tmp_path)) == 0
    assert "scannerd.service -> " in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_a_place_it_cannot_write_is_one_line_and_status_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    assert scannerd("install", "--root", str(tmp_path / "file")) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"install: {tmp_path / 'file'}/") and line.endswith(": Not a directory")
