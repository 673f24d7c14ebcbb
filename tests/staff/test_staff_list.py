"""The staff list: written by ``scannerd staff``, read by the table, never holding or giving a PIN away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scannerd.staff.roster import Roster, StaffListError, read

PIN = "4321"


def staff(path: Path, *args: str, pin: str = PIN) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scannerd", "staff", "--file", str(path), *args]
    return subprocess.run(command, input=pin + "\n", capture_output=True, text=True, timeout=60)


@pytest.fixture
def listed(tmp_path: Path) -> Path:
    path = tmp_path / "staff.json"
    assert staff(path, "add", "D-1", "--role", "dealer").returncode == 0
    assert staff(path, "add", "D-2", "--role", "dealer").returncode == 0  # the same PIN
    assert staff(path, "add", "S-1", "--role", "supervisor", pin="9999").returncode == 0
    return path


def test_the_list_holds_salted_argon2id_hashes_readable_by_the_service_alone(listed: Path) -> None:
    text = listed.read_text()
    assert PIN not in text and "9999" not in text
    members = {m["id"]: m for m in json.loads(text)["staff"]}
    assert members["D-1"]["pin"].startswith("$argon2id$")
    assert members["D-1"]["pin"] != members["D-2"]["pin"]  # the same PIN, salted apart
    assert os.stat(listed).st_mode & 0o777 == 0o640
    listing = staff(listed, "list")
    assert listing.stdout.splitlines() == ["D-1\tdealer", "D-2\tdealer", "S-1\tsupervisor"]


def test_a_pin_is_checked_and_the_role_told(listed: Path) -> None:
    roster = Roster(listed)
    assert roster.at_display("D-1", PIN).pin == "right"
    wrong = roster.at_display("D-1", "1234")
    assert (wrong.by, wrong.role, wrong.pin, wrong.via) == ("D-1", "dealer", "wrong", "display")
    assert roster.at_display("NOBODY", PIN).role == "unknown"
    assert roster.at_display("NOBODY", PIN).pin == "wrong"
    assert roster.role_of("S-1") == "supervisor"


def test_a_changed_list_is_read_again_and_a_broken_one_is_not_taken(listed: Path) -> None:
    roster = Roster(listed)
    assert staff(listed, "remove", "D-2").returncode == 0
    assert roster.role_of("D-2") == "unknown"
    assert staff(listed, "add", "D-1", "--role", "supervisor", "--replace", pin="5555").returncode == 0
    assert (roster.role_of("D-1"), roster.at_display("D-1", "5555").pin) == ("supervisor", "right")
    listed.write_text("{not json")
    assert roster.role_of("S-1") == "supervisor"  # the list read before stays
    assert roster.problem is not None and str(listed) in roster.problem


def test_mistakes_get_one_line_and_change_nothing(listed: Path) -> None:
    before = listed.read_bytes()
    for args, pin, words in (
        (("add", "D-1", "--role", "dealer"), PIN, "already on the list"),
        (("add", "D-9", "--role", "dealer"), "12", "4 to 12 digits"),
        (("add", "D-9", "--role", "dealer"), "12ab", "4 to 12 digits"),
        (("remove", "D-9"), PIN, "not on the list"),
    ):
        done = staff(listed, *args, pin=pin)
        assert done.returncode == 2 and words in done.stderr and len(done.stderr.splitlines()) == 1
        assert "Traceback" not in done.stderr
    assert listed.read_bytes() == before


@pytest.mark.parametrize("mode", [0o644, 0o660, 0o602])
def test_a_list_others_can_read_or_write_is_refused(listed: Path, mode: int) -> None:
    os.chmod(listed, mode)
    with pytest.raises(StaffListError, match="readable or writable by others"):
        read(listed)


def test_a_malformed_list_is_refused_naming_the_file_and_the_place(tmp_path: Path) -> None:
    path = tmp_path / "staff.json"
    path.write_text(json.dumps({"format": "scannerd-staff", "version": 1, "staff": [{"id": "D-1"}]}))
    os.chmod(path, 0o640)
    with pytest.raises(StaffListError, match=r"staff list .*staff\.json: staff\.0\.role"):
        read(path)
    path.write_text(json.dumps({"staff": [{"id": "D-1", "role": "dealer", "pin": "1234"}]}))
    with pytest.raises(StaffListError, match="pin"):  # a PIN in the clear is no hash
        read(path)


def test_a_daemon_with_a_broken_staff_list_stops_in_one_line(tmp_path: Path) -> None:
    from tests.support.config import write_config

    path = tmp_path / "staff.json"
    path.write_text("[]")
    os.chmod(path, 0o644)
    config = write_config(tmp_path, None, "framed", str(tmp_path / "nowhere"), staff={"file": str(path)})
    done = subprocess.run(
        [sys.executable, "-m", "scannerd", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "readable or writable by others" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
