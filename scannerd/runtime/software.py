"""What software a table runs: its installed files held to the hashes its wheel recorded.

A wheel lists every file it installs with a SHA-256 (its RECORD); pip keeps
that list beside the installed package. Holding each file's bytes to it shows
that what runs is what was shipped, and a digest of the list itself names the
whole installed set in one value a regulator's record can carry.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import scannerd

DISTRIBUTION = "scannerd"


@dataclass(frozen=True)
class Installed:
    """The installed files as checked: ``digest`` of the wheel's RECORD, and what does not match it."""

    version: str
    digest: str
    checked: int
    differing: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.differing and not self.missing


class NotFromAWheel(Exception):
    """An editable or source install: no recorded hashes to hold the files to."""


def _recorded(data: bytes) -> str:
    """A file's hash as RECORD writes it: URL-safe base64 of its SHA-256, without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def check(name: str = DISTRIBUTION) -> Installed:
    """Hold every installed file that RECORD hashes to its hash; raise ``NotFromAWheel`` without one."""
    dist = metadata.distribution(name)
    record = dist.read_text("RECORD")
    files = [f for f in dist.files or () if f.hash is not None]
    package = next((f for f in files if str(f) == f"{name}/__init__.py"), None)
    if record is None or package is None:
        # An editable install records only a path file: its package's files are a checkout's.
        raise NotFromAWheel(
            f"{name} {dist.version} is not installed from a wheel: no recorded hashes to check"
        )
    running = Path(scannerd.__file__).resolve()
    installed = Path(str(dist.locate_file(package))).resolve()
    if running != installed:
        raise NotFromAWheel(
            f"the {name} that runs ({running.parent}) is not the one installed ({installed.parent})"
        )
    differing, missing = [], []
    for entry in files:
        assert entry.hash is not None
        try:
            data = dist.locate_file(entry).read_bytes()  # type: ignore[attr-defined]
        except OSError:
            missing.append(str(entry))
            continue
        if entry.hash.mode != "sha256" or _recorded(data) != entry.hash.value:
            differing.append(str(entry))
    digest = hashlib.sha256(record.encode()).hexdigest()
    return Installed(dist.version, digest, len(files), differing, missing)
