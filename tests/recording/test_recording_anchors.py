"""The newest recording deleted, renamed or swapped for another table's: the kept anchors show it.

A real ``scannerd run`` records, signs and publishes to a real Mosquitto;
the game server stand-in (``simulators/game_server.py``, on
``scannerd.client``) starts two new shoes and keeps every anchor the table
publishes. Then the table's newest anchored file is tampered with the way
someone at the table PC could, and the real ``scannerd verify --anchors``
must name it. Without the anchors each of these archives is a whole, signed
chain.

And a real table's archive across stops, starts and a kill: every event it
published is recorded, and every file is anchored once.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scannerd.contract.topics import EVENT_KINDS
from scannerd.recording.anchors import SealedFile, anchored_in
from scannerd.recording.replay import replay
from scannerd.recording.signing import write_key_pair
from scannerd.recording.verify import read_chained
from simulators.game_server import GameServer
from tests.recording.test_recording_chain import record
from tests.support.broker import Broker, event_seqs, wait_until
from tests.support.fault import NATURAL
from tests.support.frames import beetek
from tests.support.process import LiveTable, live_table
from tests.system.test_fault_disk_full import fill, small_disk


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


def audit(archive: Archive, out: Path) -> dict[str, Any]:
    """``scannerd audit``'s report on the archive, signatures checked with the table's key."""
    command = [sys.executable, "-m", "scannerd", "audit", str(archive.recordings), "--out", str(out)]
    ran = subprocess.run(
        [*command, "--workers", "1", "--key", str(archive.key)], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


def kept(anchors: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in anchors.read_text().splitlines()] if anchors.exists() else []


@pytest.fixture(scope="module")
def table_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """Four files of table T1: a run's start, shoe S1 and shoe S2, then the next run's start.

    The first three are anchored on the table's stream: the start's and S1's
    as the next file began, S2's when the table started again. Made once: each
    test tampers with a copy.
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
            table.start()
            wait_until(lambda: len(kept(archive.anchors)) >= 3, 30, "the anchor of the file sealed at stop")
            assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
        finally:
            game.stop()
    return archive


@pytest.fixture
def archive(table_run: Archive, tmp_path: Path) -> Archive:
    """A copy of the table's archive for one test to tamper with, without the second run's file.

    No anchor names that file until the table starts again, and its header
    names the digest of the file before it: whoever tampers with the newest
    anchored file takes it away too, and the chain alone shows nothing.
    """
    copy = Archive(tmp_path / "recordings", table_run.anchors, table_run.key)
    shutil.copytree(table_run.recordings, copy.recordings)
    copy.files[-1].unlink()
    return copy


def test_every_file_the_table_sealed_is_anchored_and_the_archive_verifies_against_them(
    table_run: Archive,
) -> None:
    """Each file by its name, lines and last digest, once; the last when the table starts again."""
    anchored = table_run.files[:-1]
    assert len(anchored) == 3
    sealed = [SealedFile(a["file"], a["lines"], a["digest"]) for a in kept(table_run.anchors)]
    assert sealed == [SealedFile.of(read_chained(path)) for path in anchored]
    checked = verify(table_run, "--anchors", str(table_run.anchors))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("intact: 4 file(s)") and "3 anchor(s)" in checked.stdout


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


# ------------------------------------------------------------------ a table stopped, started and killed


def recording_after(rec: Path, before: Path | None) -> Path:
    """The file a run is writing, once its shoe is open: newer than ``before``, uncompressed, link up."""

    def newest() -> Path | None:
        files = sorted(rec.glob("T1-*.jsonl*"))
        return files[-1] if files else None

    def open_and_up() -> bool:
        path = newest()
        fresh = path is not None and path.suffix == ".jsonl" and (before is None or path.name > before.name)
        return fresh and '"state":"up"' in path.read_text()  # type: ignore[union-attr]

    wait_until(open_and_up, 30, "the run's file, with the shoe open")
    found = newest()
    assert found is not None
    return found


def deal(table: LiveTable) -> None:
    """A natural, until the broker has its round."""
    server = table.server
    complete = len([r for r in server.payloads("/round") if r["phase"] == "complete"])
    table.port.write(beetek(*NATURAL, crlf=False))
    server.wait_for(
        lambda _: len([r for r in server.payloads("/round") if r["phase"] == "complete"]) > complete
    )


def deal_a_round(table: LiveTable, writing: Path) -> None:
    """A natural, until the broker has its round and ``writing`` holds every event published so far."""
    deal(table)
    last = max(event_seqs(table.server.messages()))
    wait_until(lambda: last in seqs((p.topic, p.payload) for p in replay(writing)), 30, "it recorded")


def seqs(messages: Iterable[tuple[str, bytes]]) -> dict[int, bytes]:
    """The events among ``messages`` (topic, payload), by seq."""
    events = ((topic, payload) for topic, payload in messages if topic.rsplit("/", 1)[1] in EVENT_KINDS)
    return {json.loads(payload)["seq"]: payload for _, payload in events}


def test_an_archive_of_stops_restarts_and_a_kill_is_anchored_once_per_file_and_every_seq_recorded(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """A real table dealt, stopped, started, stopped, started, killed, started and stopped: its archive.

    Every event it published is in a recording (so a file's replay ends where
    the next file's header says the table was), and every file but the last
    is anchored exactly once: a stop seals its file and the next start
    anchors it. The killed file is unsealed, which is all verify and the
    audit may say.
    """
    write_key_pair(tmp_path / "recording-key", tmp_path / "recording-key.pub")
    rec = tmp_path / "recordings"
    recording = {"dir": str(rec), "key_file": str(tmp_path / "recording-key")}
    writing: Path | None = None
    killed: Path | None = None
    with live_table(tmp_path, mosquitto, "beetek", record=recording) as table:
        for run, stop in enumerate((signal.SIGTERM, signal.SIGTERM, signal.SIGKILL, signal.SIGTERM)):
            if run:
                table.start()
            writing = recording_after(rec, writing)
            # The start anchors the file the last run ended: dealt after it, the kill cannot cut it off.
            table.server.wait_for(lambda _, run=run: len(table.server.messages("/anchor")) >= run)
            deal_a_round(table, writing)
            killed = writing if stop == signal.SIGKILL else killed
            assert table.kill(stop) == (0 if stop == signal.SIGTERM else -stop), table.log.read_text()[-3000:]
        published = seqs((m.topic, m.payload) for m in table.server.messages())
        anchors = [m.payload for m in table.server.messages("/anchor")]

    files = sorted(rec.glob("T1-*.jsonl.gz"))
    assert len(files) == 4
    assert seqs((p.topic, p.payload) for path in files for p in replay(path)) == published
    # One anchor per file, the last file's still to come: the table's next start sends it.
    anchored = Counter(json.loads(a)["file"].removesuffix(".gz") for a in anchors)
    assert anchored == Counter(path.name.removesuffix(".gz") for path in files[:-1])
    archive = Archive(rec, tmp_path / "anchors.jsonl", tmp_path / "recording-key.pub")
    archive.anchors.write_bytes(b"".join(a + b"\n" for a in anchors))
    assert killed is not None
    killed = killed.with_name(killed.name + ".gz")

    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    findings = checked.stdout.splitlines()[:-1]
    assert len(findings) == 1 and findings[0].startswith(f"{killed}: truncated: "), checked.stdout

    report = audit(archive, tmp_path / "audit")
    assert [(f["kind"], f["file"]) for f in report["flags"]] == [("chain", killed.name)], report["flags"]
    # Each file's replay ends where the next file's header says the table was; the last has no next.
    assert [f["replay"] for f in report["files"]][:-1] == ["matches"] * 3


# ------------------------------------------------------------------ anchors a start owes, and a broken file's


def test_a_start_anchors_every_file_no_recording_shows_anchored_back_to_one_whose_anchor_is_recorded(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """A table that died after each rotation and before its next tick leaves sealed files whose anchor
    went out nowhere: the files the recorder writes with no daemon to judge their anchors.

    Before them, a real table's file whose anchor the file after it holds. The
    next start anchors, in chain order, the three files that no recording
    shows anchored, and not that one again; the archive verifies against
    every anchor published.
    """
    write_key_pair(tmp_path / "recording-key", tmp_path / "recording-key.pub")
    archive = Archive(tmp_path / "recordings", tmp_path / "anchors.jsonl", tmp_path / "recording-key.pub")
    recording = {
        "dir": str(archive.recordings),
        "rotate": "shoe",
        "key_file": str(tmp_path / "recording-key"),
    }
    with live_table(tmp_path, mosquitto, "beetek", record=recording) as table:
        game = GameServer(mosquitto.host, mosquitto.port, "T1", anchors=archive.anchors)
        try:
            game.start(30)
            wait_until(lambda: game.client.availability("T1").online, 30, "the table online")
            answer = game.request("new_shoe", shoe_id="S1")
            assert answer is not None and answer["status"] == "ok", answer
            wait_until(lambda: len(kept(archive.anchors)) == 1, 30, "the anchor of the start's file")
            assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
            unanchored = record(archive.recordings, tmp_path / "recording-key", shoes=2, start=time.time())
            table.start()
            wait_until(lambda: len(kept(archive.anchors)) == 4, 30, "the anchors the start owes")
            assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
        finally:
            game.stop()
    first, shoe, *_ = archive.files
    sealed = [SealedFile(a["file"], a["lines"], a["digest"]) for a in kept(archive.anchors)]
    assert sealed == [SealedFile.of(read_chained(path)) for path in (first, shoe, *unanchored)]
    checked = verify(archive, "--anchors", str(archive.anchors))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.timeout(120)
def test_a_file_ended_at_a_write_error_is_anchored_when_the_next_file_begins(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """The recordings' disk fills mid-shoe (a small tmpfs): the file ends where it reached the disk, unsealed.

    Once there is room and the next shoe begins a file, the ended file's
    anchor goes out, recorded in that file, naming it as far as the chain
    took it on; verify accepts it, and says only that the file has no seal.
    """
    write_key_pair(tmp_path / "recording-key", tmp_path / "recording-key.pub")
    with small_disk(tmp_path / "disk") as disk:
        archive = Archive(disk / "recordings", tmp_path / "anchors.jsonl", tmp_path / "recording-key.pub")
        recording = {
            "dir": str(archive.recordings),
            "rotate": "shoe",
            "key_file": str(tmp_path / "recording-key"),
        }
        with live_table(tmp_path, mosquitto, "beetek", in_process=True, record=recording) as table:
            daemon, server = table.daemon, table.server
            assert daemon is not None and daemon.recorder is not None
            recorder = daemon.recorder
            wait_until(lambda: daemon.reader.link_up, 15, "the shoe open")
            ballast = fill(disk, leave=0)
            for _ in range(20):  # a round's lines may still fit in the file's last page
                deal(table)
                if recorder.errors:
                    break
            wait_until(lambda: recorder.errors >= 1, 15, "the write error")
            broken = recorder.files[-1]
            ballast.unlink()
            assert daemon.request("new_shoe", {"shoe_id": "S2"}).status == "ok"
            server.wait_for(lambda got: any(m.topic.endswith("/anchor") for m in got), 15)
            assert table.kill(signal.SIGTERM) == 0
        archive.anchors.write_bytes(b"".join(m.payload + b"\n" for m in server.messages("/anchor")))
        (anchor,) = kept(archive.anchors)
        sealed = SealedFile(anchor["file"], anchor["lines"], anchor["digest"])
        assert sealed == SealedFile.of(read_chained(broken))
        files = sorted(archive.recordings.glob("T1-*.jsonl*"))
        assert anchored_in(files[files.index(broken) + 1], sealed)
        checked = verify(archive, "--anchors", str(archive.anchors))
        findings = checked.stdout.splitlines()[:-1]
        assert len(findings) == 1 and findings[0].startswith(f"{broken}: truncated: "), checked.stdout
