"""``scannerd archive status|push|check|restore`` as a technician runs them, against a real SeaweedFS.

The table's files are written by its recorder; its config names the archive
and the table's own credentials, as on the table PC. Each command is a real
process.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from scannerd.runtime.instance_lock import InstanceLock
from tests.recording.test_recording_chain import record
from tests.support.config import write_config
from tests.support.seaweed import TABLE, Seaweed


@dataclass(frozen=True)
class Table:
    config: Path
    files: list[Path]
    bucket: str


@pytest.fixture
def table(seaweed: Seaweed, tmp_path: Path, request: pytest.FixtureRequest) -> Table:
    bucket = seaweed.bucket(request.node.name.removeprefix("test_")[:40].replace("_", "-").strip("-"))
    files = record(tmp_path / "recordings", None, shoes=3, start=1714996800.0)  # 2024-05-06
    (tmp_path / "secret").write_text(TABLE.secret_key.get_secret_value() + "\n")
    config = write_config(
        tmp_path, None, "linecode", "/dev/null",
        record={"dir": str(tmp_path / "recordings")},
        archive={
            "url": f"s3://{bucket}/casino", "endpoint": seaweed.endpoint,
            "access_key": TABLE.access_key, "secret_key_file": str(tmp_path / "secret"),
        },
    )  # fmt: skip
    return Table(config, files, bucket)


def archive(table: Table, *argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scannerd", "archive", "--config", str(table.config), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_status_says_what_waits_push_ships_it_and_check_finds_it_all_there(table: Table) -> None:
    status = archive(table, "status")
    assert status.returncode == 1, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == f"T1: 3 file(s) wait for s3://{table.bucket}/casino"
    assert [line.split()[0] for line in lines[1:]] == [f.name for f in table.files]
    assert all(line.endswith("(due)") for line in lines[1:])
    assert archive(table, "check").returncode == 1

    pushed = archive(table, "push")
    assert (pushed.returncode, pushed.stdout) == (0, "T1: 3 file(s) archived and checked now; 0 wait\n")
    assert archive(table, "status").stdout == "T1: nothing waits: 3 file(s) here archived and checked\n"
    checked = archive(table, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == (
        "archived: 3 file(s) here in the archive, locked for 3653 days and reading back as their chain says\n"
    )


def test_check_names_a_file_the_archive_does_not_have(table: Table, tmp_path: Path) -> None:
    assert archive(table, "push").returncode == 0
    later = record(tmp_path / "recordings", None, shoes=1, start=1715000000.0)[0]
    checked = archive(table, "check")
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [
        f"{later.name}: not in the archive (s3://{table.bucket}/casino/T1/)",
        "NOT all archived, 1 not: 3 file(s) here in the archive, locked for 3653 days and reading back as "
        "their chain says",
    ]


@pytest.fixture
def running(table: Table, tmp_path: Path) -> Iterator[None]:
    """The table's daemon, as far as the instance lock says: held by this process."""
    lock = InstanceLock(tmp_path / "outbox.sqlite3", "T1")
    yield
    lock.release()


@pytest.mark.usefixtures("running")
def test_push_is_refused_while_the_tables_daemon_runs(table: Table, seaweed: Seaweed) -> None:
    pushed = archive(table, "push")
    assert (pushed.returncode, pushed.stdout) == (2, "")
    assert pushed.stderr.startswith("scannerd archive: another scannerd (pid ")
    assert pushed.stderr.endswith(
        ": the running daemon ships by itself (its health says how far behind it is)\n"
    )
    assert seaweed.versions(table.bucket) == []


def test_restore_brings_a_day_back_as_the_files_the_table_wrote(table: Table, tmp_path: Path) -> None:
    assert archive(table, "push").returncode == 0
    back = archive(table, "restore", "--day", "2024-05-06", "--to", str(tmp_path / "back"))
    assert back.returncode == 0, back.stderr
    assert back.stdout == f"restored: 3 file(s) of table T1 begun on 2024-05-06 into {tmp_path / 'back'}\n"
    for path in table.files:
        assert (tmp_path / "back" / path.name).read_bytes() == path.read_bytes()
    again = archive(table, "restore", "--day", "2024-05-06", "--to", str(tmp_path / "back"))
    assert (again.returncode, again.stdout) == (2, "")
    assert (
        again.stderr
        == f"scannerd archive: {tmp_path / 'back' / table.files[0].name}: already there: not overwritten\n"
    )
    none = archive(table, "restore", "--day", "2024-05-07", "--to", str(tmp_path / "other"))
    day = f"s3://{table.bucket}/casino/T1/T1-20240507"
    assert none.returncode == 2
    assert none.stderr == f"scannerd archive: {day}: no recordings in the archive there\n"


def test_a_table_that_archives_nothing_or_has_no_secret_is_one_line(table: Table, tmp_path: Path) -> None:
    (tmp_path / "secret").unlink()
    status = archive(table, "check")
    assert (status.returncode, status.stdout) == (2, "")
    assert status.stderr == f"scannerd archive: {tmp_path / 'secret'}: No such file or directory\n"
    (tmp_path / "plain").mkdir()
    plain = write_config(tmp_path / "plain", None, "linecode", "/dev/null")
    said = subprocess.run(
        [sys.executable, "-m", "scannerd", "archive", "--config", str(plain), "status"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (said.returncode, said.stderr) == (
        2, f"scannerd archive: {plain}: no [archive] url (and [record] dir): this table archives nothing\n"
    )  # fmt: skip
