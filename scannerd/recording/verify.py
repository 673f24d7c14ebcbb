"""Checking recordings' chains and seals: intact, or the first line or file that is not as written.

Each file is read as bytes, through the one reading path replay and audit
use too (scannerd/recording/source.py), and walked line by line, in the
memory of a few lines, from its header's link to the previous file
(scannerd/recording/chain.py).
The first line whose number or digest is wrong is named, and told apart from
its neighbours: a line that the next one skips over was inserted, a number
that jumps ahead means lines are missing (or, when the skipped number comes
later, moved), a right number with a wrong digest is an edit. A file that
does not end with its seal was cut short. Across a table's files, sorted by
name (the order they were begun), the numbers in the headers must follow one
another and each header must name the digest its predecessor ends with (for
a file a crash left unsealed, at the line count the header names).

A file's name is checked against its header too: the recorder names a file
after its table (``<table>-<time>...``), so a name that says one table over
a header that says another is a file put in another's place. Its chain can
be whole and signed with the same key; only the name gives it away.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from scannerd.recording.chain import CHAINED, GENESIS, link, seal_message
from scannerd.recording.format import FORMAT, SEAL, Header, RecordingError, recordings_under
from scannerd.recording.signing import fingerprint, signature_ok
from scannerd.recording.source import ContentError, RawLines, Recorded

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

_NAMED = re.compile(r"^(.+?)-\d{8}T\d{6}Z")
"""A name as the recorder gives it: the table id, then the time the file was begun."""


@dataclass
class Entry:
    """A chained line as written: its bytes up to ``n``, its number, its digest."""

    covered: bytes
    n: int
    digest: bytes


@dataclass
class ChainedFile:
    """What walking one file found; ``problem`` is the first thing wrong with it, None when it is whole."""

    path: Recorded
    header: Header
    lines: int = 0
    last: bytes = GENESIS  # the digest of the last line that checked out
    sealed: bool = False
    signature: bytes | None = None
    before_seal: bytes = GENESIS
    problem: str | None = None
    walked: bool = False  # every whole line checked out: ``last`` is where the file's chain ends
    findings: tuple[str, ...] = ()  # what the place it lies in says of it (an archive's object)

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


def _header(path: Recorded, first: bytes) -> Header:
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


def read_chained(path: Recorded, upto: int | None = None) -> ChainedFile:
    """Walk ``path``'s chain (its first ``upto`` lines, if given); no recording at all is a RecordingError.

    The bytes come through the reading path replay and audit use too
    (recording/source.py): what a replay reads is exactly what is checked.
    """
    try:
        raw = RawLines(path)
    except OSError as exc:
        raise RecordingError(f"{path}: {exc.strerror or exc}") from None
    with raw:
        return _Walk(path, raw, upto).run()


class _Walk:
    """One file's lines, one at a time: a file of any size is walked in the memory of a few lines."""

    def __init__(self, path: Recorded, raw: RawLines, upto: int | None) -> None:
        self.path = path
        self.raw = raw
        self.texts = iter(raw)
        self.upto = upto

    def run(self) -> ChainedFile:
        try:
            first = next(self.texts, None)
        except ContentError as exc:
            raise RecordingError(f"{self.path}: {exc.finding}") from None
        if first is None:
            raise RecordingError(f"{self.path}: empty file: not a scannerd recording")
        header = _header(self.path, first.removesuffix(b"\n"))
        found = ChainedFile(self.path, header, findings=self.raw.findings)
        if found.header.chain is None:
            found.problem = "has no chain (recorded without one): nothing to verify"
            return found
        prev = bytes.fromhex(found.header.chain.prev) if found.header.chain.prev else GENESIS
        try:
            found.problem = self._chain(found, first, prev)
        except ContentError as exc:
            found.problem = exc.finding
        if found.problem and self.upto is None:
            # Read to its end: bytes their archive did not take in say so, before any line they spoil.
            for _ in self._whole():
                pass
            found.problem = self.raw.altered or found.problem
        return found

    def _chain(self, found: ChainedFile, first: bytes, prev: bytes) -> str | None:
        """The first thing wrong with the file's lines, None when they are all as written and sealed."""
        text: bytes | None = first
        i = 0
        while text is not None and found.lines != self.upto:
            if found.sealed:
                return f"line {i + 1}: added after the seal"
            if i and not text.endswith(b"\n"):
                found.walked = True
                return f"truncated: line {i + 1} is cut short, and the file has no seal"
            body = text.removesuffix(b"\n")
            entry = _entry(body)
            if entry is None or entry.n != i or link(prev, entry.covered) != entry.digest:
                return self._classify(i, entry, prev)
            if (seal := _seal(body)) is not None:
                found.sealed, found.before_seal = True, prev
                found.signature = _signature(seal)
            prev = entry.digest
            found.lines, found.last = i + 1, prev
            i += 1
            text = next(self.texts, None)
        found.walked = True
        if found.lines == self.upto:
            return None
        if not found.sealed:
            return f"truncated: the file ends after line {found.lines} without its seal"
        if self.raw.cut:
            return "truncated: its compressed data ends before its end marker"
        return None

    def _whole(self) -> Iterator[Entry | None]:
        """The entries of the whole lines still to come; a line cut short or damage ends them."""
        try:
            for text in self.texts:
                if not text.endswith(b"\n"):
                    return
                yield _entry(text.removesuffix(b"\n"))
        except ContentError:
            return

    def _classify(self, i: int, entry: Entry | None, prev: bytes) -> str:
        """What line ``i + 1`` (the first that does not check out) is: moved, inserted, edited or missing."""
        where = f"line {i + 1}"
        rest = self._whole()
        after = next(rest, None)
        if entry is not None and entry.n > i:
            # A line written further on, if the one it was written after is in the file and it follows it.
            moved, before = _find(i, entry.n - 1, itertools.chain([after], rest), i + 1)
            if (
                moved is not None
                and before is not None
                and link(before.digest, entry.covered) == entry.digest
            ):
                return f"{where}: out of order (written as line {entry.n + 1}; line {moved + 1} belongs here)"
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


def _find(
    wanted: int, written_after: int, entries: Iterable[Entry | None], start: int
) -> tuple[int | None, Entry | None]:
    """Where the first line numbered ``wanted`` is, and the last line numbered ``written_after``."""
    moved, before = None, None
    for j, e in enumerate(entries, start):
        if e is None:
            continue
        if e.n == wanted and moved is None:
            moved = j
        if e.n == written_after:
            before = e
    return moved, before


def _seal(text: bytes) -> dict[str, Any] | None:
    """A seal line's fields; None for any other line."""
    if not (text.startswith(b'{"t":') and b'"event":"seal"' in text):
        return None
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) and raw.get("event") == SEAL else None


def _signature(seal: dict[str, Any]) -> bytes | None:
    sig = seal.get("sig")
    if not isinstance(sig, str):
        return None
    try:
        return base64.b64decode(sig, validate=True)
    except binascii.Error:
        return b""


@dataclass
class Verdict:
    """The files checked and every problem found, each naming its file."""

    files: list[ChainedFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    by_file: dict[Recorded, list[str]] = field(default_factory=dict)  # each problem, under the file it names
    unusable: list[str] = field(
        default_factory=list
    )  # files that could not be checked at all, each naming it

    @property
    def intact(self) -> bool:
        return not self.problems and not self.unusable

    def problem(self, path: Recorded, text: str) -> None:
        self.problems.append(f"{path}: {text}")
        self.by_file.setdefault(path, []).append(text)


def verify(paths: Iterable[Recorded], key: Ed25519PublicKey | None = None) -> Verdict:
    """Check each file, then each table's sequence; with ``key`` (an Ed25519 public key) every seal too.

    A file that cannot be read as a recording at all is named in ``unusable``
    and the others are still checked.
    """
    walked: list[ChainedFile] = []
    unusable: list[str] = []
    for path in recordings_under(paths):
        try:
            walked.append(read_chained(path))
        except RecordingError as exc:
            unusable.append(str(exc))
    verdict = judge(walked, key)
    verdict.unusable = unusable
    return verdict


def judge(files: list[ChainedFile], key: Ed25519PublicKey | None = None) -> Verdict:
    """The verdict on files already walked (:func:`read_chained`, perhaps by other processes).

    What ``verify`` and ``audit`` both report: one judgement, so neither can pass what the other flags.
    """
    verdict = Verdict(files=list(files))
    tables: dict[str, list[ChainedFile]] = {}
    for found in verdict.files:
        tables.setdefault(found.header.table_id, []).append(found)
    for files in tables.values():
        files.sort(key=lambda f: f.path.name)
        for found in files:
            for finding in found.findings:
                verdict.problem(found.path, finding)
            if found.problem:
                verdict.problem(found.path, found.problem)
            elif key is not None:
                _check_signature(found, key, verdict)
        _check_sequence(files, verdict)
    for found in verdict.files:
        _check_name(found, verdict)
    return verdict


def _check_name(found: ChainedFile, verdict: Verdict) -> None:
    """A file named as the recorder names one must hold that table's recording."""
    named = _NAMED.match(found.path.name)
    if named and named[1] != found.header.table_id:
        verdict.problem(
            found.path, f"holds table {found.header.table_id}'s recording, but its name is table {named[1]}'s"
        )


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
    """A table's files (by name) against their numbers in the chain: the places, then each link."""
    by_name = [f for f in files if f.chained]
    by_number = sorted(by_name, key=lambda f: f.number)  # stable: files of one number stay in name order
    if by_number and by_number[0].number > 1:
        verdict.notes.append(
            f"{by_number[0].path}: continues the chain from file {by_number[0].number - 1}, not given here"
        )
    _check_places(by_name, by_number, verdict)
    for before, after in itertools.pairwise(by_number):
        if after.number == before.number:
            verdict.problem(
                after.path,
                f"is file {after.number} of the chain, as {before.path.name} is: "
                "one of them is not this chain's",
            )
        elif after.number > before.number + 1:
            gap = after.number - before.number - 1
            verdict.problem(
                after.path,
                f"{gap} file{'s' if gap > 1 else ''} missing before it "
                f"(after {before.path.name}, file {before.number}, comes file {after.number})",
            )
        else:
            _check_link(before, after, verdict)


def _check_places(by_name: list[ChainedFile], by_number: list[ChainedFile], verdict: Verdict) -> None:
    """Files whose names sort them out of their chain's order: each swap or renaming is one finding.

    Two files that took each other's places are one swap. Of the rest, the
    longest run already in chain order stays put, and each file outside it
    was renamed out of its place.
    """
    place = {id(f): k for k, f in enumerate(by_name)}
    swapped: set[int] = set()
    for k, (here, belongs) in enumerate(zip(by_name, by_number, strict=True)):
        there = place[id(belongs)]
        if here is not belongs and by_number[there] is here and k < there:
            swapped |= {id(here), id(belongs)}
            verdict.problem(
                here.path,
                f"swapped with {belongs.path.name}: it is file {here.number} of the chain and "
                f"{belongs.path.name} file {belongs.number}, but their names sort the other way",
            )
    rest = [f for f in by_name if id(f) not in swapped]
    in_order = {id(f) for f in _longest_in_order(rest)}
    for k, found in enumerate(rest):
        if id(found) not in in_order:
            near = (
                f"after {rest[k - 1].path.name} (file {rest[k - 1].number})"
                if k
                else (f"before {rest[1].path.name} (file {rest[1].number})")
            )
            verdict.problem(
                found.path, f"out of order: it is file {found.number} of the chain and sorts {near}: renamed"
            )


def _longest_in_order(files: list[ChainedFile]) -> list[ChainedFile]:
    """The longest run of ``files`` (not necessarily adjacent) whose chain numbers never fall.

    Two files of one number in name order are both in their places: a fork, which the check of
    each link names, not a renaming.
    """
    tails: list[int] = []  # the smallest last number of a run of each length
    ends: list[int] = []  # the index in ``files`` of that run's last file
    before: list[int] = []  # each file's predecessor in the best run ending there, -1 for none
    for i, f in enumerate(files):
        at = bisect.bisect_right(tails, f.number)
        tails[at : at + 1], ends[at : at + 1] = [f.number], [i]
        before.append(ends[at - 1] if at else -1)
    run, i = [], ends[-1] if ends else -1
    while i >= 0:
        run.append(files[i])
        i = before[i]
    return run


def _check_link(before: ChainedFile, after: ChainedFile, verdict: Verdict) -> None:
    """Whether ``after``'s header takes the chain on from exactly where ``before`` ends.

    A file left unsealed by a crash is proven by the next file alone: its
    header names the digest and the number of lines the crashed file had when
    the table took the chain on, so the crashed file cannot be edited,
    re-chained or cut afterwards unseen.
    """
    link_to = after.header.chain
    if link_to is None or not before.walked:
        return  # what is wrong with ``before`` is named already; where its chain ends is unknown
    if before.sealed or link_to.lines is None:
        if link_to.prev != before.last.hex():
            says = _not_continued(after, before) if before.sealed else _not_where_continued(after, before)
            verdict.problem(*says)
        return
    if before.lines < link_to.lines:
        verdict.problem(
            before.path,
            f"cut: {after.path.name} takes the chain on after its line {link_to.lines}, "
            f"and it now ends after line {before.lines}",
        )
    elif before.lines > link_to.lines and read_chained(before.path, link_to.lines).last.hex() == link_to.prev:
        verdict.problem(
            before.path,
            f"line {link_to.lines + 1}: added after {after.path.name} took the chain on "
            f"from line {link_to.lines}",
        )
    elif before.lines > link_to.lines or before.last.hex() != link_to.prev:
        verdict.problem(*_not_where_continued(after, before))


def _not_continued(after: ChainedFile, before: ChainedFile) -> tuple[Recorded, str]:
    return after.path, f"does not continue {before.path.name}: its header names another last digest"


def _not_where_continued(after: ChainedFile, before: ChainedFile) -> tuple[Recorded, str]:
    return before.path, (
        f"edited: its chain was rewritten since {after.path.name} took it on "
        "(its lines no longer end in the digest that file names)"
    )
