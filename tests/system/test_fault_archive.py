"""A real table archiving into a real S3 server with Object Lock, while the storage, the network and the
process itself fail under it.

Each test runs ``scannerd run`` as a process of its own (tests/support/process.py),
dealing a shoe on a pty, with ``[archive]`` pointed at a real SeaweedFS, or at it
through a real proxy that holds an upload halfway. The game server keeps the
anchors the table publishes. What the bucket holds is then read by the real
``scannerd verify s3://...``, with the table's public key and those anchors:
every sealed file there once, locked, intact, whatever happened meanwhile.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scannerd.archive.shipper import ANCHORS
from scannerd.recording.signing import write_key_pair
from simulators.game_server import GameServer as KeepingServer
from tests.recording.test_recording_anchors import deal, kept
from tests.support.broker import Broker, wait_until
from tests.support.cutting_proxy import cutting_proxy
from tests.support.process import LiveTable, live_table
from tests.support.seaweed import ADMIN, TABLE, Seaweed

RETENTION_DAYS = 3653


@pytest.fixture
def bucket(seaweed: Seaweed, request: pytest.FixtureRequest) -> str:
    return seaweed.bucket(request.node.name.removeprefix("test_")[:40].replace("_", "-").strip("-"))


@contextmanager
def archiving_table(
    tmp_path: Path, broker: Broker, bucket: str, endpoint: str
) -> Iterator[tuple[LiveTable, KeepingServer]]:
    """Table T1 recording (signed, a file a shoe) and archiving to ``bucket`` at ``endpoint``; a game
    server that starts shoes and keeps the anchors."""
    write_key_pair(tmp_path / "recording-key", tmp_path / "recording-key.pub")
    (tmp_path / "archive-secret").write_text(TABLE.secret_key.get_secret_value() + "\n")
    record = {"dir": str(tmp_path / "recordings"), "key_file": str(tmp_path / "recording-key")}
    archive = {
        "url": f"s3://{bucket}/casino",
        "endpoint": endpoint,
        "access_key": TABLE.access_key,
        "secret_key_file": str(tmp_path / "archive-secret"),
        "retention_days": RETENTION_DAYS,
    }
    mqtt = {"health_interval_s": 0.5, "reconnect_min_s": 1, "reconnect_max_s": 1}
    with live_table(tmp_path, broker, "beetek", record=record, archive=archive, mqtt=mqtt) as table:
        game = KeepingServer(broker.host, broker.port, "T1", anchors=tmp_path / "anchors.jsonl")
        try:
            game.start(30)
            wait_until(lambda: game.client.availability("T1").online, 30, "the table online")
            yield table, game
        finally:
            game.stop()


def new_shoe(game: KeepingServer, shoe_id: str) -> None:
    answer = game.request("new_shoe", shoe_id=shoe_id)
    assert answer is not None and answer["status"] == "ok", answer


def archive_health(table: LiveTable) -> dict[str, Any] | None:
    """The archive's part of the latest health the table published."""
    health = table.server.payloads("/health")
    return health[-1].get("archive") if health else None


def _shipped(health: dict[str, Any] | None) -> bool:
    """The table's latest health says it archived since its start and nothing waits."""
    return health is not None and health["archived"] >= 1 and health["behind"] == 0


def archived(seaweed: Seaweed, bucket: str) -> dict[str, list[dict[str, Any]]]:
    """Every version of each recording in the bucket, by file name, as its administrator lists them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for version in seaweed.versions(bucket, "casino/T1/"):
        if "/anchors/" not in version["Key"]:
            out.setdefault(version["Key"].rpartition("/")[2], []).append(version)
    return out


def verify(tmp_path: Path, seaweed: Seaweed, *args: str) -> subprocess.CompletedProcess[str]:
    key = ("--key", str(tmp_path / "recording-key.pub"))
    command = [sys.executable, "-m", "scannerd", "verify", *args, *key]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env(seaweed))


def _env(seaweed: Seaweed) -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("SCANNERD_")} | seaweed.table_env()


def test_every_sealed_file_of_a_dealt_table_is_in_the_bucket_locked_and_verifies_against_its_anchors(
    tmp_path: Path, mosquitto: Broker, seaweed: Seaweed, bucket: str
) -> None:
    with archiving_table(tmp_path, mosquitto, bucket, seaweed.endpoint) as (table, game):
        for shoe in ("S1", "S2"):
            new_shoe(game, shoe)
            deal(table)
        assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
        table.start()  # anchors the file the stop sealed: its archive copy is checked against it
        wait_until(lambda: len(kept(game.anchors)) >= 3, 30, "three files anchored")
        wait_until(lambda: len(archived(seaweed, bucket)) == 3, 30, "three files archived")
        wait_until(lambda: _shipped(archive_health(table)), 30, "health saying all is archived")
        health = archive_health(table)
        anchors = f"casino/T1/{ANCHORS}/"
        wait_until(lambda: len(seaweed.versions(bucket, anchors)) >= 3, 30, "the anchors archived")
    assert health is not None
    assert (health["url"], health["state"], health["behind"]) == (f"s3://{bucket}/casino", "shipping", 0)
    files = sorted((tmp_path / "recordings").glob("T1-*.jsonl.gz"))
    admin = seaweed.client(ADMIN)
    held = archived(seaweed, bucket)
    for path in files[:3]:
        (version,) = held[path.name]
        got = admin.get_object(Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"])
        assert got["Body"].read() == path.read_bytes()
        assert got["ObjectLockMode"] == "COMPLIANCE"
        assert got["ObjectLockRetainUntilDate"] >= datetime.now(UTC) + timedelta(
            days=RETENTION_DAYS, hours=-1
        )
    checked = verify(tmp_path, seaweed, f"s3://{bucket}/casino", "--anchors", str(game.anchors))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("intact: 3 file(s)") and "3 anchor(s)" in checked.stdout
    # The anchors went too: the archive verifies against its own, as against the game server's.
    own = verify(tmp_path, seaweed, f"s3://{bucket}/casino", "--anchors", f"s3://{bucket}/casino/T1/anchors")
    assert own.returncode == 0, own.stdout + own.stderr


def test_a_storage_stopped_for_a_while_holds_nothing_up_and_is_caught_up_with(
    tmp_path: Path, mosquitto: Broker, seaweed: Seaweed, bucket: str
) -> None:
    with archiving_table(tmp_path, mosquitto, bucket, seaweed.endpoint) as (table, game):
        seaweed.stop()
        try:
            for shoe in ("S1", "S2", "S3"):
                new_shoe(game, shoe)
                deal(table)  # the table deals on: each round reaches the game server
            wait_until(lambda: (archive_health(table) or {}).get("behind") == 3, 30, "three files waiting")
            health = archive_health(table)
            assert health is not None and health["state"] == "retrying"
            assert health["oldest"].startswith("T1-") and health["oldest_age_s"] >= 0
            assert "cannot" in health["last_error"]
            table.running()
        finally:
            seaweed.start()
        wait_until(lambda: (archive_health(table) or {}).get("behind") == 0, 60, "caught up")
        assert archive_health(table)["state"] == "shipping"  # type: ignore[index]
    assert {name: len(v) for name, v in archived(seaweed, bucket).items()} == {
        path.name: 1 for path in sorted((tmp_path / "recordings").glob("T1-*.jsonl.gz"))[:3]
    }


def test_a_table_killed_mid_upload_archives_that_file_and_its_unsealed_one_once_each(
    tmp_path: Path, mosquitto: Broker, seaweed: Seaweed, bucket: str
) -> None:
    """An upload held halfway by the network, the process SIGKILLed meanwhile, mid-shoe: at the next start
    the held file goes once, and the file the kill left unsealed goes once the chain has gone on from it,
    reading back as far as that start took it on."""
    with cutting_proxy(("127.0.0.1", seaweed.s3_port)) as proxy:
        proxy.arm("hold")
        with archiving_table(tmp_path, mosquitto, bucket, proxy.endpoint) as (table, game):
            new_shoe(game, "S1")
            deal(table)
            assert proxy.reached.wait(30), "no upload came through the proxy"
            assert table.kill(signal.SIGKILL) == -signal.SIGKILL
            proxy.close()  # the held connection goes with the process that held it
            table.config.write_text(table.config.read_text().replace(proxy.endpoint, seaweed.endpoint))
            table.start()
            wait_until(lambda: len(archived(seaweed, bucket)) == 2, 60, "both files archived")
            wait_until(lambda: (archive_health(table) or {}).get("behind") == 0, 30, "nothing waiting")
            wait_until(lambda: len(kept(game.anchors)) >= 2, 30, "both files anchored")
    files = sorted((tmp_path / "recordings").glob("T1-*.jsonl.gz"))
    held = archived(seaweed, bucket)
    assert {name: len(v) for name, v in held.items()} == {path.name: 1 for path in files[:2]}
    checked = verify(tmp_path, seaweed, f"s3://{bucket}/casino", "--anchors", str(tmp_path / "anchors.jsonl"))
    findings = checked.stdout.splitlines()[:-1]
    assert checked.returncode == 1
    assert findings == [
        f"s3://{bucket}/casino/T1/{files[1].name}: truncated: " + findings[0].split(": ", 2)[2]
    ]
    assert "without its seal" in findings[0] or "cut short" in findings[0]
    assert json.loads((tmp_path / "anchors.jsonl").read_text().splitlines()[-1])["file"] == files[1].name


def test_a_bucket_over_its_quota_holds_the_files_back_and_takes_them_once_the_quota_is_raised(
    tmp_path: Path, mosquitto: Broker, seaweed: Seaweed, bucket: str
) -> None:
    """The house's storage fills: other tables' records take the bucket past the quota its administrator
    set, and the storage refuses every write. The table deals on and says how far behind it is; once
    the quota is raised, what waited goes, once."""
    seaweed.client(ADMIN).put_object(Bucket=bucket, Key="casino/T9/filled", Body=os.urandom(2 << 20))
    wait_until(lambda: seaweed.counted(bucket) > 1 << 20, 60, "the storage counting what the bucket holds")
    assert "read only" in seaweed.quota(bucket, 1)
    with archiving_table(tmp_path, mosquitto, bucket, seaweed.endpoint) as (table, game):
        for shoe in ("S1", "S2", "S3"):
            new_shoe(game, shoe)
            deal(table)  # the table deals on: each round reaches the game server
        wait_until(lambda: (archive_health(table) or {}).get("behind") == 3, 30, "three files waiting")
        health = archive_health(table)
        assert health is not None and health["state"] == "retrying" and health["archived"] == 0
        assert health["oldest"].startswith("T1-") and health["oldest_age_s"] >= 0
        assert f"s3://{bucket}: cannot put casino/T1/T1-" in health["last_error"], health
        assert archived(seaweed, bucket) == {}
        table.running()
        assert "writable" in seaweed.quota(bucket, 100)
        wait_until(lambda: (archive_health(table) or {}).get("behind") == 0, 60, "caught up")
        assert archive_health(table)["state"] == "shipping"  # type: ignore[index]
    assert {name: len(v) for name, v in archived(seaweed, bucket).items()} == {
        path.name: 1 for path in sorted((tmp_path / "recordings").glob("T1-*.jsonl.gz"))[:3]
    }
