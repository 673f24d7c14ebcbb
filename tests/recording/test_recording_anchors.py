"""The newest recording deleted, renamed or swapped for another table's: the kept anchors show it.

A real ``scannerd run`` records, signs and publishes to a real Mosquitto;
the game server stand-in (``simulators/game_server.py``, on
``scannerd.client``) starts two new shoes and keeps every anchor the table
publishes. Then the table's newest file is tampered with the way someone at
the table PC could, and the real ``scannerd verify --anchors`` must name it.
Without the anchors each of these archives is a whole, signed chain.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scannerd.recording.recorder import SealedFile
from scannerd.recording.signing import write_key_pair
from scannerd.recording.verify import read_chained
from simulators.game_server import GameServer
from tests.recording.test_recording_chain import record
from tests.support.broker import Broker, wait_until
from tests.support.process import live_table


@dataclass(frozen=True)
class Archive:
    """What the table left behind: its recordings, the anchors the game server kept, the public key."""

    recordings: Path
    anchors: Path
    key: Path

    @property
    def files(self) -> list[Path]:
        return sorted(self.recordings.glob("T1-*.jsonl.gz"))


def verify(archive: Archive, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scannerd", "verify", str(archive.recordings), "--key", str(archive.key)]
    return subprocess.run([*command, *extra], capture_output=True, text=True, timeout=60)


def kept(anchors: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in anchors.read_text().splitlines()] if anchors.exists() else []


@pytest.fixture(scope="module")
def table_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """Three files of table T1 (the start, shoe S1, shoe S2), each anchored on the table's stream.

    Made once: each test tampers with a copy.
    """
    tmp_path = tmp_path_factory.mktemp("table")
    broker = Broker(tmp_path / "broker")
    broker.start()
    try:
        yield run_table(tmp_path, broker)
    finally:
        broker.stop()


def run_table(tmp_path: Path, broker: Broker) -> Archive:
    write_key_pair(tmp_path / "recording-key", tmp_path / "recording-key.pub")
    archive = Archive(tmp_path / "recordings", tmp_path / "anchors.jsonl", tmp_path / "recording-key.pub")
    recording = {
        "dir": str(archive.recordings),
        "rotate": "shoe",
        "key_file": str(tmp_path / "recording-key"),
    }
    with live_table(tmp_path, broker, "beetek", record=recording) as table:
        game = GameServer(broker.host, broker.port, "T1", anchors=archive.anchors)
        try:
            game.start(30)
            wait_until(lambda: game.client.availability("T1").online, 30, "the table online")
            for shoe_id in ("S1", "S2"):
                answer = game.request("new_shoe", shoe_id=shoe_id)
                assert answer is not None and answer["status"] == "ok", answer
            wait_until(lambda: len(kept(archive.anchors)) >= 2, 30, "the anchors of the first two files")
            assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
            wait_until(lambda: len(kept(archive.anchors)) >= 3, 30, "the anchor of the file sealed at stop")
        finally:
            game.stop()
    return archive


@pytest.fixture
def archive(table_run: Archive, tmp_path: Path) -> Archive:
    """A copy of the table's archive for one test to tamper with."""
    copy = Archive(tmp_path / "recordings", table_run.anchors, table_run.key)
    shutil.copytree(table_run.recordings, copy.recordings)
    return copy


def test_every_file_the_table_sealed_is_anchored_and_the_archive_verifies_against_them(
    archive: Archive,
) -> None:
    files = archive.files
    assert len(files) == 3
    anchored = {SealedFile(a["file"], a["lines"], a["digest"]) for a in kept(archive.anchors)}
    assert anchored == {SealedFile.of(read_chained(path)) for path in files}
    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("intact: 3 file(s)") and "3 anchor(s)" in checked.stdout


def test_the_newest_file_deleted_is_named(archive: Archive) -> None:
    newest = archive.files[-1]
    newest.unlink()
    assert verify(archive).returncode == 0, "the chain alone cannot see it"
    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 1
    assert f"{newest.name}: missing: anchored by table T1" in checked.stdout
    assert "not in the archive" in checked.stdout


def test_the_newest_file_renamed_is_named(archive: Archive) -> None:
    newest = archive.files[-1]
    hidden = newest.with_name("old-shoe.jsonl.gz")
    newest.rename(hidden)
    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 1
    assert f"{newest.name}: missing: anchored by table T1" in checked.stdout
    assert f"its content is in {hidden.name}: renamed" in checked.stdout


def test_the_newest_file_replaced_by_another_tables_signed_file_is_named(
    archive: Archive, tmp_path: Path
) -> None:
    """Signed with the same key, so only the table it belongs to gives it away."""
    other = record(tmp_path / "T2", Path(str(archive.key).removesuffix(".pub")), shoes=1, table_id="T2")[0]
    newest = archive.files[-1]
    shutil.copyfile(other, newest)
    assert verify(archive, "--key", str(archive.key)).stdout.count("wrong key") == 0
    alone = verify(archive)
    assert alone.returncode == 1
    assert f"{newest.name}: holds table T2's recording, but its name is table T1's" in alone.stdout
    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 1
    assert f"{newest.name}: replaced: anchored by table T1" in checked.stdout
    assert "it holds table T2's recording" in checked.stdout


def test_an_anchors_file_that_is_not_one_is_a_line_naming_it(archive: Archive, tmp_path: Path) -> None:
    bad = tmp_path / "anchors.jsonl"
    bad.write_text(archive.anchors.read_text() + '{"kind": "card"}\n')
    checked = verify(archive, "--anchors", str(bad))
    assert checked.returncode == 2
    assert checked.stderr == f"scannerd verify: {bad}:4: not an anchor event as the table publishes it\n"
