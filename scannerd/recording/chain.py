"""The recording chain: every line's digest covers the line before it, and each file's last one is signed.

A line is chained by appending ``"n":<its number in the file, the header's
0>`` and ``"h":<hex digest>`` as its last two fields. The digest is SHA-256
over the previous line's digest (32 bytes; for a file's header, the previous
file's last digest, or 32 zero bytes when the chain begins) followed by the
line's UTF-8 bytes up to and including its ``n``. Working on the bytes as
written, not on parsed JSON, means nobody has to agree on how to re-serialise
a line; ``n`` lets a reader tell a missing line from an edited one. Readers of
the recording format ignore both fields, as they ignore any they do not know.

A finished file ends with a ``seal`` line, chained like the others, whose
``sig`` (when the table has a key) is an Ed25519 signature over the digest of
the line before it: that digest covers the whole file, the header's key
fingerprint and the previous file included.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

GENESIS = bytes(32)
"""The digest before the first file of a chain."""

SEAL_CONTEXT = b"scannerd-recording seal\n"
"""Signed ahead of the digest, so a seal's signature can be taken for nothing else."""

CHAINED = re.compile(rb'^(\{.*,"n":(\d{1,12})),"h":"([0-9a-f]{64})"\}$')
"""A chained line: the covered bytes, its number, its digest."""


def link(prev: bytes, covered: bytes) -> bytes:
    """The digest of a line whose bytes up to its ``n`` are ``covered``, after the line digested ``prev``."""
    return hashlib.sha256(prev + covered).digest()


def seal_message(digest: bytes) -> bytes:
    """What a seal signs: the digest of the file's last line before the seal."""
    return SEAL_CONTEXT + digest


@dataclass
class Chain:
    """The running digest of the file being written; ``extend`` turns a JSON object's text into its line."""

    digest: bytes = GENESIS
    n: int = 0

    def extend(self, body: str) -> str:
        """``body`` (a compact JSON object, no newline) with its ``n`` and ``h`` appended."""
        covered = f'{body[:-1]},"n":{self.n}'
        self.digest = link(self.digest, covered.encode("utf-8"))
        self.n += 1
        return f'{covered},"h":"{self.digest.hex()}"}}'


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
