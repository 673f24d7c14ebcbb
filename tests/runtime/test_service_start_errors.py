"""``scannerd run`` with a file it needs broken the way tables break them: one line naming it, exit 1.

Each fault is made as a real table meets it: an outbox with a backlog whose
file lost its first page or its second half, a file system remounted
read-only after an error, an immutable file, a directory where the file
should be, a disk filled to the last byte, and a password file an editor
saved as UTF-16. The daemon is a real process; the test reads what an
operator would read in the journal.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scannerd.contract.topics import Message
from scannerd.store.outbox import Outbox
from tests.runtime.test_service_run import run_briefly
from tests.support.config import write_config


def backlog(path: Path) -> Path:
    """An outbox left by a table whose broker was away: a few hundred events waiting."""
    outbox = Outbox(path)
    outbox.put([Message(seq, "casino/tables/T1/card", b"x" * 400) for seq in range(1, 501)])
    outbox.close()
    return path


def the_error(tmp_path: Path, **sections: dict[str, object]) -> str:
    """Run the daemon on ``sections``; the one error line it logged before exiting 1."""
    result = run_briefly(write_config(tmp_path, None, "beetek", str(tmp_path / "shoe"), **sections))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    errors = [line for line in lines if line["level"] in ("error", "critical")]
    assert len(errors) == 1, errors
    assert errors[0]["event"] == "daemon could not be built"
    return str(errors[0]["error"])


@contextlib.contextmanager
def mounted(where: Path, size: str = "4m") -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def lose_first_page(path: Path) -> None:
    with path.open("r+b") as f:
        f.write(os.urandom(4096))


def lose_second_half(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lose_first_page, "is not an SQLite database (damaged, or another file); keep it for support"),
        (lose_second_half, "is damaged (truncated or corrupt); keep it for support"),
    ],
    ids=["first-page", "truncated"],
)
def test_a_damaged_outbox(tmp_path: Path, damage: Callable[[Path], None], problem: str) -> None:
    path = backlog(tmp_path / "outbox.sqlite3")
    damage(path)
    assert the_error(tmp_path) == f"{path}: {problem}"


def test_an_outbox_path_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "outbox.sqlite3").mkdir()
    assert the_error(tmp_path) == f"{tmp_path / 'outbox.sqlite3'}: is a directory, not the outbox file"


def test_an_outbox_on_a_file_system_remounted_read_only(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        # Without root, a read-only file is what a table meets: one left by another user.
        path = backlog(tmp_path / "outbox.sqlite3")
        path.chmod(0o444)
        tmp_path.chmod(0o555)
        try:
            assert "cannot be written" in the_error(tmp_path)
        finally:
            tmp_path.chmod(0o755)
        return
    with mounted(tmp_path / "state") as state:
        path = backlog(state / "outbox.sqlite3")
        subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
        # The outbox, or a file the daemon keeps beside it, named with the problem.
        error = the_error(tmp_path, outbox={"path": str(path)})
        assert error.startswith(f"{state}/") and "read-only file system" in error.lower(), error


def test_an_immutable_outbox(tmp_path: Path) -> None:
    path = backlog(tmp_path / "outbox.sqlite3")
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"no immutable files here: {made.stderr.decode().strip()}")
    try:
        assert (
            the_error(tmp_path) == f"{path}: cannot be written (file permissions, or the file is immutable)"
        )
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("outbox", ["new", "existing"])
def test_a_full_disk_at_start(tmp_path: Path, outbox: str) -> None:
    with mounted(tmp_path / "state") as state:
        path = state / "outbox.sqlite3"
        if outbox == "existing":
            backlog(path)
        # Filled to the last byte: the write that finds no room (ENOSPC) ends the filling.
        with (state / "ballast").open("wb", buffering=0) as ballast, contextlib.suppress(OSError):
            while True:
                ballast.write(b"\0" * 65536)
        error = the_error(tmp_path, outbox={"path": str(path)})
        assert error.startswith(f"{state}/") and ("disk is full" in error or "No space left" in error), error


def test_a_password_file_saved_as_utf16(tmp_path: Path) -> None:
    secret = tmp_path / "mqtt-password"
    secret.write_bytes("hunter2\n".encode("utf-16"))
    error = the_error(tmp_path, mqtt={"password_file": str(secret)})
    assert error == f"{secret}: is not UTF-8 text"


def test_run_warns_of_a_password_sent_without_tls(tmp_path: Path) -> None:
    secret = tmp_path / "mqtt-password"
    secret.write_text("hunter2\n")
    (tmp_path / "outbox.sqlite3").mkdir()  # so the run ends by itself, after the warning
    config = write_config(
        tmp_path, None, "beetek", str(tmp_path / "shoe"), mqtt={"password_file": str(secret)}
    )
    lines = [json.loads(line) for line in run_briefly(config).stderr.splitlines()]
    (warning,) = [line for line in lines if line["event"] == "config warning"]
    assert warning["level"] == "warning" and warning["key"] == "mqtt"
    assert warning["problem"].startswith("tls is false, so the broker password goes to")
