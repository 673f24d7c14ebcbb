"""``scannerd verify`` and ``scannerd audit`` of an archive where it lies, in a real S3 server (SeaweedFS).

A simulated week of two tables, signed, is shipped into a locked bucket by the
shipper, then read back by the commands as an auditor would: with credentials
of its own from the environment, streaming each object. What they say of the
archive is what they say of the same files on disk; and what an insider did
to the archive (a delete, an overwrite, an object altered where it rests, a
lock too short, a file put where none was anchored) is one line each.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from scannerd.archive.settings import ArchiveSettings
from scannerd.archive.shipper import Shipper
from scannerd.contract.events import AnchorEvent
from scannerd.recording.signing import load_private_key, write_key_pair
from scannerd.recording.verify import read_chained
from simulators.week import write_week
from tests.support.broker import wait_until
from tests.support.command import scannerd
from tests.support.cutting_proxy import cutting_proxy
from tests.support.seaweed import ADMIN, TABLE, Seaweed

TABLES = ("BAC-01", "BAC-02")


@dataclass(frozen=True)
class Week:
    files: Path
    key: Path  # the public key
    anchors: Path  # as the game server kept them


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Week:
    out = tmp_path_factory.mktemp("week")
    write_key_pair(out / "key", out / "key.pub")
    write_week(out / "files", tables=2, days=2, lazy=1, seed=3, key=load_private_key(out / "key"))
    anchors = [
        AnchorEvent(
            seq=seq, ts=1.7e9 + seq, table_id=found.header.table_id, file=path.name,
            lines=found.lines, digest=found.last.hex(),
        ).model_dump_json()
        for seq, path in enumerate(sorted((out / "files").glob("*.jsonl.gz")), 1)
        if (found := read_chained(path))
    ]  # fmt: skip
    (out / "anchors.jsonl").write_text("".join(line + "\n" for line in anchors))
    return Week(out / "files", out / "key.pub", out / "anchors.jsonl")


def ship(seaweed: Seaweed, week: Week, bucket: str, tmp_path: Path) -> str:
    """The week into a new locked bucket, by the table's own shipper: ``s3://BUCKET/casino``."""
    seaweed.bucket(bucket)
    settings = ArchiveSettings(url=f"s3://{bucket}/casino", endpoint=seaweed.endpoint, access_key="x")
    for table in TABLES:
        copy = tmp_path / table
        copy.mkdir()
        for path in week.files.glob(f"{table}-*"):
            shutil.copyfile(path, copy / path.name)
        shipper = Shipper(
            settings, table_id=table, directory=copy, compress=True, writing=lambda: None, credentials=TABLE
        )
        shipper.start()
        try:
            # The bound is for a hang only: under the suite's load a retried put waits out its backoff.
            wait_until(lambda s=shipper: s.health().archived == 2, 120, f"{table} archived")
        finally:
            shipper.stop()
    return f"s3://{bucket}/casino"


@pytest.fixture
def reader(seaweed: Seaweed, monkeypatch: pytest.MonkeyPatch) -> None:
    """An auditor's environment: the archive's endpoint and read credentials, the standard way."""
    for name, value in seaweed.table_env().items():
        monkeypatch.setenv(name, value)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = scannerd(*argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def shipped(seaweed: Seaweed, week: Week, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The week in an archive no test tampers with."""
    return ship(seaweed, week, "week", tmp_path_factory.mktemp("shipped"))


@pytest.mark.usefixtures("reader")
def test_verify_of_the_archive_says_what_verify_of_the_files_says(
    shipped: str, week: Week, capsys: pytest.CaptureFixture[str]
) -> None:
    on_disk = run(capsys, "verify", str(week.files), "--key", str(week.key), "--anchors", str(week.anchors))
    there = run(capsys, "verify", shipped, "--key", str(week.key), "--anchors", str(week.anchors))
    assert on_disk[0] == there[0] == 0, there
    assert there[1] == on_disk[1] == "intact: 4 file(s), " + on_disk[1].split(", ", 1)[1]
    table = run(capsys, "verify", f"{shipped}/BAC-01", "--key", str(week.key))
    assert table[0] == 0 and table[1].startswith("intact: 2 file(s)"), table
    day = run(capsys, "verify", f"{shipped}/BAC-02/BAC-02-20240507", "--key", str(week.key))
    assert day[0] == 0 and day[1].splitlines()[-1].startswith("intact: 1 file(s)"), day


def local_paths(report: str, archive: str, files: Path) -> str:
    """A report of the archive, each object named as its file on disk is: the only thing that differs."""
    return re.sub(re.escape(archive) + r"/BAC-0\d", str(files), report).replace(archive, str(files))


@pytest.mark.usefixtures("reader")
def test_the_audit_of_the_archive_is_the_audit_of_its_files_on_disk(
    shipped: str, week: Week, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Byte for byte, but for where each file lies; in one process and on two workers reading the objects."""
    key = ("--key", str(week.key))
    assert (
        run(capsys, "audit", str(week.files), "--out", str(tmp_path / "disk"), "--workers", "1", *key)[0] == 1
    )
    for workers in ("1", "2"):
        out = tmp_path / f"archive-{workers}"
        got = run(capsys, "audit", shipped, "--out", str(out), "--workers", workers, *key)
        assert got[0] == 1, got[2]
        for name in ("report.json", "report.html"):
            disk = (tmp_path / "disk" / name).read_text()
            assert local_paths((out / name).read_text(), shipped, week.files) == disk, (workers, name)


def test_on_a_dask_cluster_the_workers_read_the_objects_themselves(
    shipped: str, week: Week, seaweed: Seaweed, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The cluster's workers read with the credentials of their own environment: the objects handed to
    them carry where to read, and no client or secret of the command's."""
    distributed = pytest.importorskip("distributed")
    key = ("--key", str(week.key))
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, env=seaweed.table_env()
    ) as cluster:
        for name, value in seaweed.table_env().items():
            monkeypatch.setenv(name, value)
        assert run(capsys, "audit", shipped, "--out", str(tmp_path / "one"), "--workers", "1", *key)[0] == 1
        address = cluster.scheduler_address
        assert (
            run(capsys, "audit", shipped, "--out", str(tmp_path / "dask"), "--cluster", address, *key)[0] == 1
        )
    for name in ("report.json", "report.html"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name


@pytest.mark.usefixtures("reader")
def test_an_insider_can_delete_or_overwrite_nothing_locked_and_verify_names_what_was_tried(
    seaweed: Seaweed, week: Week, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = ship(seaweed, week, "insider", tmp_path)
    admin = seaweed.client(ADMIN)
    first, second = sorted(v["Key"] for v in seaweed.versions("insider", "casino/BAC-01/"))
    (locked,) = [v["VersionId"] for v in seaweed.versions("insider", first)]
    with pytest.raises(ClientError, match="AccessDenied"):
        admin.delete_object(Bucket="insider", Key=first, VersionId=locked)
    with pytest.raises(ClientError, match="AccessDenied"):
        admin.put_object_retention(
            Bucket="insider", Key=first, VersionId=locked,
            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": datetime.now(UTC) + timedelta(days=1)},
        )  # fmt: skip
    forged = admin.put_object(Bucket="insider", Key=first, Body=b"nothing happened at this table\n")
    marker = admin.delete_object(Bucket="insider", Key=second)
    status, out, err = run(capsys, "verify", archive, "--key", str(week.key), "--anchors", str(week.anchors))
    assert (status, err) == (1, "")
    findings = out.splitlines()[:-1]
    assert findings == [
        f"s3://insider/{first}: overwritten in the archive: version {forged['VersionId']} "
        f"({_when(seaweed, first, forged['VersionId'])}, 31 bytes) stands over the locked version {locked}, "
        "which is what was read",
        f"s3://insider/{second}: deleted in the archive: a delete marker ({marker['VersionId']}, "
        f"{_when(seaweed, second, marker['VersionId'], deleted=True)}) hides the locked version "
        f"{_first_version(seaweed, second)}, which is what was read",
    ]
    assert out.splitlines()[-1] == "NOT intact: 2 problem(s) in 4 file(s)"


def _when(seaweed: Seaweed, key: str, version: str, *, deleted: bool = False) -> str:
    page = seaweed.client(ADMIN).list_object_versions(Bucket="insider", Prefix=key)
    (found,) = [
        v for v in page.get("DeleteMarkers" if deleted else "Versions", []) if v["VersionId"] == version
    ]
    return f"{found['LastModified']:%Y-%m-%d %H:%M:%S}"


def _first_version(seaweed: Seaweed, key: str) -> str:
    (found,) = seaweed.versions("insider", key)
    return str(found["VersionId"])


@pytest.mark.usefixtures("reader")
def test_an_object_altered_where_it_rests_is_named_by_its_checksum(
    seaweed: Seaweed, week: Week, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The storage's own disk edited, its volume checksum made to match: only the SHA-256 the archive
    checked on arrival shows it."""
    archive = ship(seaweed, week, "altered", tmp_path)
    path = sorted(week.files.glob("BAC-02-*"))[0]
    seaweed.alter("altered", path.read_bytes(), at=len(path.read_bytes()) // 2)
    status, out, err = run(capsys, "verify", archive, "--key", str(week.key))
    assert (status, err) == (1, "")
    name = f"s3://altered/casino/BAC-02/{path.name}"
    checksum = base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    assert out.splitlines()[0] == (
        f"{name}: its bytes are not those the archive took in: they do not hash to the SHA-256 it "
        f"checked on arrival ({checksum}): altered where it rests"
    )


@pytest.mark.usefixtures("reader")
def test_a_lock_shorter_than_the_houses_or_none_is_named(
    seaweed: Seaweed, week: Week, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files copied by someone else into a bucket of their own: one with a lock of a year, one without."""
    admin = seaweed.client(ADMIN)
    seaweed.bucket("short-lock")
    seaweed.bucket("foreign", locked=False)
    files = sorted(week.files.glob("BAC-01-*"))
    year = datetime.now(UTC) + timedelta(days=365)
    for path in files:
        admin.put_object(
            Bucket="short-lock", Key=f"t/{path.name}", Body=path.read_bytes(),
            ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=year,
        )  # fmt: skip
        admin.put_object(Bucket="foreign", Key=f"t/{path.name}", Body=path.read_bytes())
    status, out, _ = run(
        capsys, "verify", "s3://short-lock/t", "--key", str(week.key), "--retention-days", "1827"
    )
    assert status == 1
    assert out.splitlines()[:-1] == [
        f"s3://short-lock/t/{p.name}: locked for 365 days only (governance until {year:%Y-%m-%d}), "
        "shorter than the house's 1827"
        for p in files
    ]
    status, out, _ = run(capsys, "verify", "s3://foreign/t", "--key", str(week.key))
    assert status == 1
    assert out.splitlines()[:-1] == [
        f"s3://foreign/t/{p.name}: not locked in the archive: anyone who may write there can delete or "
        "replace it"
        for p in files
    ]


@pytest.mark.usefixtures("reader")
def test_against_the_anchors_a_missing_object_and_one_no_anchor_names_are_named(
    seaweed: Seaweed, week: Week, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An anchored file the archive never got, and a file put there under a table's name that the table
    never anchored (a table's newest file is anchored only at its next start: it is not named)."""
    archive = ship(seaweed, week, "anchored", tmp_path)
    anchors = week.anchors.read_text().splitlines()
    gone = json.loads(anchors[0])
    unknown = {**gone, "seq": 99, "file": "BAC-01-20240505T120000Z.jsonl.gz"}
    kept = tmp_path / "anchors.jsonl"
    kept.write_text("\n".join([json.dumps(unknown), *anchors[1:]]) + "\n")
    status, out, _ = run(capsys, "verify", archive, "--anchors", str(kept))
    assert status == 1
    assert sorted(out.splitlines()[:-1]) == sorted([
        f"s3://anchored/casino/BAC-01/{gone['file']}: not anchored: no anchor of table BAC-01 names it, "
        "though the table anchors every file it records",
        f"{unknown['file']}: missing: anchored by table BAC-01 (seq 99) with {gone['lines']} lines; its "
        f"content is in {gone['file']}: renamed",
    ])  # fmt: skip


@pytest.mark.usefixtures("reader")
def test_what_cannot_be_read_as_an_archive_is_one_line(
    seaweed: Seaweed, shipped: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seaweed.bucket("garbage")
    seaweed.client(ADMIN).put_object(Bucket="garbage", Key="t/BAC-01-x.jsonl.gz", Body=b"\x1f\x8bnot gzip")
    said = {
        "s3://Not_A_Bucket": "s3://Not_A_Bucket: the bucket must be 3 to 63 lower-case letters, digits, "
        "'.' and '-' (s3://BUCKET/PREFIX)",
        "s3://no-such-bucket/x": "s3://no-such-bucket: cannot list x/: NoSuchBucket (The specified bucket "
        "does not exist)",
        f"{shipped}/BAC-09": f"{shipped}/BAC-09: no recordings in the archive there",
        "s3://week/../etc": "s3://week/../etc: the prefix may hold letters, digits, '_', '.', '-' and '/' "
        "only",
    }
    for url, line in said.items():
        assert run(capsys, "verify", url) == (2, "", f"scannerd verify: {line}\n"), url
    status, _, err = run(capsys, "verify", "s3://garbage/t")
    assert status == 2
    assert err.splitlines()[0] == (
        "scannerd verify: s3://garbage/t/BAC-01-x.jsonl.gz: damaged: its compressed data is corrupt before "
        "its first line ends"
    )
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    status, out, err = run(capsys, "verify", shipped)
    assert (status, out) == (2, "")
    assert err.startswith("scannerd verify: s3://week: cannot list casino/: SignatureDoesNotMatch")
    assert "\n" not in err.rstrip("\n") and "Traceback" not in err


def test_a_connection_the_storage_drops_is_asked_again_not_reported_unreadable(
    seaweed: Seaweed, shipped: str, week: Week, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A busy storage, or the balancer before it, now and then closes a connection unanswered: a
    reader of a million objects meets it, and an object it dropped once is still intact."""
    for name, value in seaweed.table_env().items():
        monkeypatch.setenv(name, value)
    with cutting_proxy(("127.0.0.1", seaweed.s3_port)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        proxy.arm("drop")  # the first connection the reader makes: its listing's
        status, out, err = run(capsys, "verify", shipped, "--key", str(week.key))
    assert (status, err) == (0, ""), err
    assert out.startswith("intact: 4 file(s)") and proxy.cuts == 1


def test_the_workers_read_with_the_credentials_the_command_was_given(
    seaweed: Seaweed, shipped: str, week: Week, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Workers come from a server started once, with the environment of its day: files on disk
    audited first without credentials, then the archive with them, is read with the ones given now."""
    for name in seaweed.table_env():
        monkeypatch.delenv(name, raising=False)
    first = run(capsys, "audit", str(week.files), "--out", str(tmp_path / "disk"), "--workers", "2")
    assert first[0] == 1, first
    for name, value in seaweed.table_env().items():
        monkeypatch.setenv(name, value)
    status, _, err = run(capsys, "audit", shipped, "--out", str(tmp_path / "given"), "--workers", "2")
    assert status == 1 and "cannot read" not in err, err
