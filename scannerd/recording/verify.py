"""Checking recordings' chains and seals: intact, or the first line or file that is not as written.

Each file is read as bytes (through gzip when it is compressed) and walked
line by line from its header's link to the previous file (scannerd/recording/chain.py).
The first line whose number or digest is wrong is named, and told apart from
its neighbours: a line that the next one skips over was inserted, a number
that jumps ahead means lines are missing (or, when the skipped number comes
later, moved), a right number with a wrong digest is an edit. A file that
does not end with its seal was cut short. Across a table's files, sorted by
name (the order they were begun), the numbers in the headers must follow one
another and each header must name the digest its predecessor ends with.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from scannerd.recording.chain import CHAINED, GENESIS, link, seal_message
from scannerd.recording.format import FORMAT, GZIP_MAGIC, SEAL, Header, RecordingError, is_recording
from scannerd.recording.signing import fingerprint, signature_ok

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


@dataclass
class Entry:
    """A chained line as written: its bytes up to ``n``, its number, its digest."""

    covered: bytes
    n: int
    digest: bytes


@dataclass
class ChainedFile:
    """What walking one file found; ``problem`` is the first thing wrong with it, None when it is whole."""

    path: Path
    header: Header
    lines: int = 0
    last: bytes = GENESIS  # the digest of the last line that checked out
    sealed: bool = False
    signature: bytes | None = None
    before_seal: bytes = GENESIS
    problem: str | None = None

    @property
    def chained(self) -> bool:
        return self.header.chain is not None

    @property
    def number(self) -> int:
        return self.header.chain.file if self.header.chain else 0


def _entry(text: bytes) -> Entry | None:
    match = CHAINED.match(text)
    if match is None:
        return None
    return Entry(match[1], int(match[2]), bytes.fromhex(match[3].decode()))


def _content(path: Path) -> tuple[bytes, bool]:
    """The file's bytes, through gzip when it is compressed, and whether the gzip stream was cut short."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"{path}: {exc.strerror or exc}") from None
    if not data.startswith(GZIP_MAGIC):
        return data, False
    inflate = zlib.decompressobj(wbits=31)
    try:
        text = inflate.decompress(data)
    except zlib.error:
        return b"", True
    return text, not inflate.eof


def _header(path: Path, first: bytes) -> Header:
    try:
        raw = json.loads(first)
    except ValueError:
        raise RecordingError(f"{path}:1: not a scannerd recording (the first line is not JSON)") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise RecordingError(f"{path}:1: not a scannerd recording")
    try:
        return Header.model_validate(raw)
    except ValidationError as exc:
        raise RecordingError(f"{path}:1: bad header: {exc.errors(include_url=False)[0]['msg']}") from None


def read_chained(path: Path) -> ChainedFile:
    """Walk ``path``'s chain; a file that is no recording at all is a RecordingError."""
    data, cut = _content(path)
    texts = data.split(b"\n")
    if texts[-1] == b"":
        texts.pop()
    elif len(texts) > 1 or cut:
        cut = True  # the last line has no newline: the writer stopped in its middle
    if not texts:
        raise RecordingError(f"{path}: empty file: not a scannerd recording")
    found = ChainedFile(path, _header(path, texts[0]))
    if found.header.chain is None:
        found.problem = "has no chain (recorded without one): nothing to verify"
        return found
    whole = texts[:-1] if cut else texts
    prev = bytes.fromhex(found.header.chain.prev) if found.header.chain.prev else GENESIS
    entries = [_entry(text) for text in whole]
    for i, entry in enumerate(entries):
        if entry is None or entry.n != i or link(prev, entry.covered) != entry.digest:
            found.problem = _classify(i, entries, prev)
            return found
        if found.sealed:
            found.problem = f"line {i + 1}: added after the seal"
            return found
        if _is_seal(whole[i]):
            found.sealed, found.before_seal = True, prev
            found.signature = _signature(whole[i])
        prev = entry.digest
        found.lines, found.last = i + 1, prev
    if cut:
        found.problem = f"truncated: line {len(texts)} is cut short, and the file has no seal"
    elif not found.sealed:
        found.problem = f"truncated: the file ends after line {found.lines} without its seal"
    return found


def _is_seal(text: bytes) -> bool:
    return text.startswith(b'{"t":') and b'"event":"seal"' in text and json.loads(text).get("event") == SEAL


def _signature(text: bytes) -> bytes | None:
    sig = json.loads(text).get("sig")
    if not isinstance(sig, str):
        return None
    try:
        return base64.b64decode(sig, validate=True)
    except binascii.Error:
        return b""


def _classify(i: int, entries: list[Entry | None], prev: bytes) -> str:
    """What line ``i + 1`` (the first that does not check out) is: moved, inserted, edited or missing."""
    where = f"line {i + 1}"
    entry = entries[i]
    if entry is not None and entry.n > i:
        # A line written further on, if the one it was written after is in the file and it follows it.
        numbered = {e.n: e for e in entries if e is not None}
        moved = next((j for j, e in enumerate(entries) if j > i and e is not None and e.n == i), None)
        before = numbered.get(entry.n - 1)
        if moved is not None and before is not None and link(before.digest, entry.covered) == entry.digest:
            return f"{where}: out of order (written as line {entry.n + 1}; line {moved + 1} belongs here)"
    after = entries[i + 1] if i + 1 < len(entries) else None
    if after is not None and after.n == i and link(prev, after.covered) == after.digest:
        return f"{where}: inserted (the line after it follows line {i})"
    if entry is None:
        return f"{where}: edited or inserted (it carries no chain digest)"
    if entry.n == i:
        return f"{where}: edited (it does not match its digest)"
    if entry.n > i:
        missing = entry.n - i
        return f"{where}: {missing} line{'s' if missing > 1 else ''} missing before it"
    return f"{where}: out of order (it was written as line {entry.n + 1})"


def recordings(paths: Iterable[Path]) -> list[Path]:
    """Every recording named, a directory standing for the recordings in it; a RecordingError if none."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and is_recording(p))
            if not inside:
                raise RecordingError(f"{path}: no recordings in this directory")
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise RecordingError(f"{path}: no such file or directory")
    return found


@dataclass
class Verdict:
    """The files checked and every problem found, each naming its file."""

    files: list[ChainedFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    by_file: dict[Path, list[str]] = field(default_factory=dict)  # each problem, under the file it names

    @property
    def intact(self) -> bool:
        return not self.problems

    def problem(self, path: Path, text: str) -> None:
        self.problems.append(f"{path}: {text}")
        self.by_file.setdefault(path, []).append(text)


def verify(paths: Iterable[Path], key: Ed25519PublicKey | None = None) -> Verdict:
    """Check each file, then each table's sequence; with ``key`` (an Ed25519 public key) every seal too."""
    return judge([read_chained(path) for path in recordings(paths)], key)


def judge(files: list[ChainedFile], key: Ed25519PublicKey | None = None) -> Verdict:
    """The verdict on files already walked (:func:`read_chained`, perhaps by other processes)."""
    verdict = Verdict(files=list(files))
    tables: dict[str, list[ChainedFile]] = {}
    for found in verdict.files:
        tables.setdefault(found.header.table_id, []).append(found)
    for files in tables.values():
        files.sort(key=lambda f: f.path.name)
        for found in files:
            if found.problem:
                verdict.problem(found.path, found.problem)
            elif key is not None:
                _check_signature(found, key, verdict)
        _check_sequence(files, verdict)
    return verdict


def _check_signature(found: ChainedFile, key: Ed25519PublicKey, verdict: Verdict) -> None:
    expected = fingerprint(key)
    signer = found.header.chain.key if found.header.chain else None
    if signer is None or found.signature is None:
        verdict.problem(found.path, "not signed")
    elif signer != expected:
        verdict.problem(found.path, f"wrong key: signed by {signer}, not by the key given ({expected})")
    elif not signature_ok(key, found.signature, seal_message(found.before_seal)):
        verdict.problem(found.path, "the signature does not verify with the key given")


def _check_sequence(files: list[ChainedFile], verdict: Verdict) -> None:
    chained = [f for f in files if f.chained]
    if chained and chained[0].number > 1:
        verdict.notes.append(
            f"{chained[0].path}: continues the chain from file {chained[0].number - 1}, not given here"
        )
    for before, after in itertools.pairwise(chained):
        if after.number <= before.number:
            verdict.problem(
                after.path,
                f"out of order: it is file {after.number} of the chain and sorts after "
                f"{before.path.name} (file {before.number}): the files were swapped or renamed",
            )
        elif after.number > before.number + 1:
            gap = after.number - before.number - 1
            verdict.problem(
                after.path,
                f"{gap} file{'s' if gap > 1 else ''} missing before it "
                f"(after {before.path.name}, file {before.number}, comes file {after.number})",
            )
        elif after.header.chain and after.header.chain.prev != before.last.hex() and not before.problem:
            verdict.problem(
                after.path, f"does not continue {before.path.name}: its header names another last digest"
            )
