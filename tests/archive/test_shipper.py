"""The shipper against a real S3 server with Object Lock (SeaweedFS): what it puts, when, and what it refuses.

A table's recordings, written by the recorder itself, go to a real bucket; the
bucket is then read by the administrator's client, never through the shipper,
so what is checked is what the storage holds. The storage is stopped, its
bucket made without a lock, its credentials wrong, the connection cut halfway
by a real proxy: the files wait on disk and each is archived once, intact.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from pydantic import SecretStr

from scannerd.archive.bucket import Credentials
from scannerd.archive.settings import ArchiveSettings
from scannerd.archive.shipper import Shipper
from scannerd.recording.anchors import SealedFile
from scannerd.recording.verify import read_chained
from tests.recording.test_recording_chain import record
from tests.support.broker import wait_until
from tests.support.cutting_proxy import cutting_proxy
from tests.support.seaweed import ADMIN, TABLE, Seaweed


@pytest.fixture
def bucket(seaweed: Seaweed, request: pytest.FixtureRequest) -> str:
    """A locked bucket of the test's own."""
    return seaweed.bucket(_name(request.node.name))


def _name(test: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", test.lower().removeprefix("test_"))[:50].strip("-")


def shipper(
    directory: Path,
    bucket: str,
    endpoint: str,
    who: Credentials = TABLE,
    **settings: Any,
) -> Shipper:
    archive = ArchiveSettings(
        url=f"s3://{bucket}/casino", endpoint=endpoint, access_key=who.access_key, **settings
    )
    return Shipper(
        archive, table_id="T1", directory=directory, compress=True, writing=lambda: None, credentials=who
    )


@pytest.fixture
def running() -> Iterator[list[Shipper]]:
    """Shippers a test starts, stopped after it whatever it does."""
    started: list[Shipper] = []
    yield started
    for each in started:
        each.stop()


def start(running: list[Shipper], made: Shipper) -> Shipper:
    made.start()
    running.append(made)
    return made


def archived(seaweed: Seaweed, bucket: str) -> dict[str, list[dict[str, Any]]]:
    """The bucket's recordings as its administrator lists them: every version under each name."""
    out: dict[str, list[dict[str, Any]]] = {}
    for version in seaweed.versions(bucket, "casino/T1/"):
        if "/anchors/" not in version["Key"]:
            out.setdefault(version["Key"].rpartition("/")[2], []).append(version)
    return out


def test_each_sealed_file_is_put_once_locked_for_the_retention_and_reads_back_as_its_chain(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    files = record(tmp_path / "rec", None, shoes=3)
    ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint, retention_days=3653))
    wait_until(lambda: ship.health().archived == 3, 30, "three files archived")
    health = ship.health()
    assert (health.state, health.behind, health.oldest, health.errors) == ("shipping", 0, None, 0)
    admin = seaweed.client(ADMIN)
    held = archived(seaweed, bucket)
    assert sorted(held) == [f.name for f in files]
    for path in files:
        (version,) = held[path.name]
        got = admin.get_object(Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"])
        assert got["Body"].read() == path.read_bytes()
        assert got["ObjectLockMode"] == "COMPLIANCE"
        assert got["ObjectLockRetainUntilDate"] >= datetime.now(UTC) + timedelta(days=3653, hours=-1)
    # Nothing is put twice, whatever wakes the thread: a second shipper over the same directory neither.
    ship.wake()
    again = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint))
    wait_until(lambda: again.health().state == "shipping" and again.health().behind == 0, 30, "a look")
    assert {name: len(v) for name, v in archived(seaweed, bucket).items()} == {f.name: 1 for f in files}


def test_a_bucket_without_object_lock_takes_nothing_and_says_so_in_one_line(
    seaweed: Seaweed, tmp_path: Path, running: list[Shipper]
) -> None:
    plain = seaweed.bucket("no-lock", locked=False)
    record(tmp_path / "rec", None, shoes=2)
    with structlog.testing.capture_logs() as logs:
        ship = start(running, shipper(tmp_path / "rec", plain, seaweed.endpoint))
        wait_until(lambda: ship.health().state == "refused", 30, "the bucket refused")
    health = ship.health()
    assert health.behind == 2 and health.oldest is not None and health.archived == 0
    assert health.last_error == (
        f"s3://{plain}: has no Object Lock: a file put there could be deleted or overwritten; "
        "create the bucket with Object Lock enabled"
    )
    said = [e for e in logs if e["log_level"] == "error"]
    assert [e["event"] for e in said] == ["archive refused: nothing is put there"]
    assert seaweed.versions(plain) == []


def test_a_bucket_whose_default_retention_is_shorter_than_the_houses_takes_nothing(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    seaweed.client(ADMIN).put_object_lock_configuration(
        Bucket=bucket,
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 365}},
        },
    )
    record(tmp_path / "rec", None, shoes=1)
    ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint, retention_days=1827))
    wait_until(lambda: ship.health().state == "refused", 30, "the bucket refused")
    assert ship.health().last_error == (
        f"s3://{bucket}: its default retention (COMPLIANCE 365 days) is shorter than [archive] "
        "retention_days (1827): it is not the bucket for this table"
    )
    assert seaweed.versions(bucket) == []


def test_wrong_credentials_leave_the_files_waiting_and_say_why(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    record(tmp_path / "rec", None, shoes=1)
    wrong = Credentials(TABLE.access_key, SecretStr("not-the-secret"))
    ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint, who=wrong))
    wait_until(lambda: ship.health().state == "retrying", 30, "the storage refusing us")
    health = ship.health()
    assert health.behind == 1 and health.archived == 0
    assert health.last_error is not None
    assert health.last_error.startswith(f"s3://{bucket}: cannot read its Object Lock configuration: ")
    assert "SignatureDoesNotMatch" in health.last_error or "AccessDenied" in health.last_error
    assert seaweed.versions(bucket) == []


def test_a_storage_down_for_a_while_is_caught_up_with_by_itself(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    files = record(tmp_path / "rec", None, shoes=2)
    seaweed.stop()
    try:
        ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint))
        wait_until(lambda: ship.health().errors >= 2, 30, "tries while the storage is down")
        health = ship.health()
        assert (health.state, health.behind, health.oldest) == ("retrying", 2, files[0].name)
        assert health.oldest_age_s is not None and health.oldest_age_s >= 0
    finally:
        seaweed.start()
    wait_until(lambda: ship.health().archived == 2, 60, "caught up")
    assert {name: len(v) for name, v in archived(seaweed, bucket).items()} == {f.name: 1 for f in files}


def test_an_upload_cut_halfway_is_archived_once_and_intact(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    files = record(tmp_path / "rec", None, shoes=2)
    with cutting_proxy(("127.0.0.1", seaweed.s3_port)) as proxy:
        proxy.arm("cut")
        ship = start(running, shipper(tmp_path / "rec", bucket, proxy.endpoint))
        assert proxy.reached.wait(30), "no upload came through the proxy"
        wait_until(lambda: ship.health().archived == 2, 60, "both archived after the cut")
    assert proxy.cuts == 1 and ship.health().errors >= 1
    admin = seaweed.client(ADMIN)
    held = archived(seaweed, bucket)
    for path in files:
        (version,) = held[path.name]
        body = admin.get_object(Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"])["Body"]
        assert body.read() == path.read_bytes()


def test_a_copy_already_there_is_checked_not_put_again_and_a_foreign_one_is_never_counted(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    """The first file's copy put before (a process killed after its put): checked, not put again. The
    second's name taken by a forged file first (an insider ahead of the table): never counted archived."""
    first, second = record(tmp_path / "rec", None, shoes=2)
    admin = seaweed.client(ADMIN)
    until = datetime.now(UTC) + timedelta(days=3653)
    admin.put_object(
        Bucket=bucket, Key=f"casino/T1/{first.name}", Body=first.read_bytes(),
        ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until,
    )  # fmt: skip
    forged = gzip.compress(gzip.decompress(second.read_bytes()).replace(b"/dev/shoe-1", b"/dev/shoe-2"))
    admin.put_object(
        Bucket=bucket, Key=f"casino/T1/{second.name}", Body=forged,
        ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until,
    )  # fmt: skip
    ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint))
    wait_until(lambda: ship.health().archived == 1, 30, "the first file counted")
    wait_until(lambda: ship.health().last_error is not None, 30, "the forged copy named")
    health = ship.health()
    assert (health.state, health.behind, health.oldest) == ("shipping", 1, second.name)
    assert health.last_error is not None
    assert health.last_error.startswith(f"s3://{bucket}/casino/T1/{second.name}: does not check out, not ")
    assert {name: len(v) for name, v in archived(seaweed, bucket).items()} == {first.name: 1, second.name: 1}


def test_local_copies_go_only_once_archived_and_never_the_newest(
    seaweed: Seaweed, bucket: str, tmp_path: Path, running: list[Shipper]
) -> None:
    files = record(tmp_path / "rec", None, shoes=3)
    seaweed.stop()
    try:
        down = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint, keep_local_days=0))
        wait_until(lambda: down.health().errors >= 2, 30, "tries while the storage is down")
        assert all(path.exists() for path in files), "a file not archived is never removed"
        down.stop()
    finally:
        seaweed.start()
    ship = start(running, shipper(tmp_path / "rec", bucket, seaweed.endpoint, keep_local_days=0))
    wait_until(lambda: not files[0].exists() and not files[1].exists(), 30, "archived copies let go")
    assert files[2].exists(), "the newest file is where the table's chain goes on from"
    assert ship.health().archived == 3
    expected = [SealedFile.of(read_chained(path)) for path in files[2:]]
    assert expected[0].file == files[2].name
