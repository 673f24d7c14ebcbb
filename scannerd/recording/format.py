"""The recording format, version 1: what a table saw, as JSON Lines (docs/recording.md).

A recording keeps the daemon's *inputs*, not its outputs: the device's bytes
exactly as read, the game server's commands and the device link. Replaying
them through the same codec and validator gives the same events, so a
recording stays useful when the validator changes, and a bug report is a
file. The first line is a :class:`Header`; every further line has ``t``
(seconds since ``started_at``) and an ``event``. ``.gz`` files are read and
written transparently (by content, not by name). Readers ignore fields they
do not know, and lines of event kinds they do not know, so a later minor
addition does not break an older scannerd; a newer *major* version is
refused with a message saying so.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from scannerd.contract.events import Digest, Serial
from scannerd.contract.idents import TABLE_ID_PATTERN
from scannerd.contract.payloads import Software
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.recording.chain import Chain, b64, seal_message
from scannerd.recording.source import ContentError, RawLines, Recorded

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

FORMAT: Final = "scannerd-recording"
VERSION = 1
SUFFIX = ".jsonl"


def is_recording(path: Path) -> bool:
    """A finished recording's name: ``.jsonl`` or ``.jsonl.gz`` (one being written ends ``.part``)."""
    return is_recording_name(path.name)


def is_recording_name(name: str) -> bool:
    return name.endswith((SUFFIX, SUFFIX + ".gz"))


class RecordingError(ValueError):
    """A file that is not a recording this scannerd can read; ``str()`` names the file and line."""


class PastTheEnd(RecordingError):
    """A recording whose bytes stop being the table's at a line: what came before it was read as written.

    Lines after the seal, anything after the gzip member, a line no table
    writes, compressed data damaged: verify names the same thing, and a reader
    must never take what follows for the table's.
    """


def recordings_under(paths: Iterable[Recorded]) -> list[Recorded]:
    """Every recording named, or under a directory named at any depth, by path; once each.

    The one listing of recordings that verify, replay and audit share, so a
    directory means the same files to each of them. A RecordingError names a
    path that does not exist or a directory that holds none. An archive's
    objects come already listed (scannerd/archive/objects.py), and are kept.
    """
    found: list[Recorded] = []
    for path in paths:
        if not isinstance(path, Path):
            found.append(path)
        elif path.is_dir():
            inside = sorted(p for p in path.rglob("*") if is_recording(p) and p.is_file())
            if not inside:
                raise RecordingError(f"{path}: no recordings ({SUFFIX}, {SUFFIX}.gz) in this directory")
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise RecordingError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


def rfc3339(moment: datetime) -> str:
    """UTC with a ``Z``, microseconds only when there are any: ``2024-05-01T12:00:00Z``."""
    text = moment.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def _compact(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class ChainLink(BaseModel):
    """Where a chained file's header joins the table's chain (scannerd/recording/chain.py)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    file: int = Field(ge=1, description="This file's number in the table's chain, the first 1.")
    prev: Digest | None = Field(None, description="The previous file's last digest; None for the first.")
    key: str | None = Field(None, description="Fingerprint of the key that signs the file; None: unsigned.")
    lines: int | None = Field(
        None,
        ge=1,
        description="How many lines the previous file held when this one took the chain on (its seal "
        "included): a file a crash left unsealed is proven by this and ``prev``. None for the first file, "
        "and in files of older versions.",
    )


class Header(BaseModel):
    """The first line: which table, which driver, when, and under which house settings.

    ``driver_options`` (codec settings such as a linecode ``table``) and
    ``state`` (the validator snapshot and framed-shoe dedup state the table
    had when the file began, as the outbox stores them) are optional: a file
    without ``state`` replays from a fresh table.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    format: Literal["scannerd-recording"] = FORMAT
    version: int = VERSION
    table_id: str = Field(pattern=TABLE_ID_PATTERN)
    driver: str = Field(min_length=1)
    started_at: datetime
    rules: HouseRules = Field(default_factory=HouseRules)
    driver_options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    state: dict[str, Any] | None = None
    scannerd: str | None = Field(None, description="Version of the scannerd that wrote the file.")
    chain: ChainLink | None = None
    software: Software | None = Field(
        None, description="The installed files' digest the table checked at start; None in older files."
    )
    config_digest: Digest | None = Field(
        None,
        description="SHA-256 of the effective config (docs/mqtt.md); None in older files.",
    )

    @field_validator("started_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("started_at needs a time zone (RFC 3339, e.g. 2024-05-01T12:00:00Z)")
        return value.astimezone(UTC)

    @field_validator("rules", mode="before")
    @classmethod
    def _known_rules(cls, value: object) -> object:
        # House settings added by a later scannerd are ignored like any other unknown field. A file
        # from before tables chose their game names none: it replays as it was made, without facts;
        # one from before tables stopped after a malfunction names no alert that suspends, as one
        # of a table that suspends on nothing.
        if isinstance(value, dict):
            return {"game": None, "suspend_on": ()} | {
                k: v for k, v in value.items() if k in HouseRules.model_fields
            }
        return value

    @property
    def start_ts(self) -> float:
        """``started_at`` as Unix seconds: a line's time is ``start_ts + t``."""
        return self.started_at.timestamp()

    def to_json(self) -> str:
        data = {k: v for k, v in self.model_dump(mode="json").items() if v is not None}
        data["started_at"] = rfc3339(self.started_at)
        return _compact(data)


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    t: float = Field(ge=0, description="Seconds since the header's started_at.")


class RxLine(_Line):
    """Bytes exactly as read from the device; a chunk may split or merge frames anywhere."""

    event: Literal["rx"] = "rx"
    hex: str

    @field_validator("hex")
    @classmethod
    def _is_hex(cls, value: str) -> str:
        bytes.fromhex(value)  # ValueError names the offending position
        return value

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.hex)


class CmdLine(_Line):
    """A command as received; ``args`` is the request's payload, ``actor`` who took it (never a PIN).

    Files made before actions carried who took them have no ``actor``.
    """

    event: Literal["cmd"] = "cmd"
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    actor: Actor | None = None


class LinkLine(_Line):
    """The device link went up or down; ``detail`` (optional) says why, for people reading the file."""

    event: Literal["link"] = "link"
    state: Literal["up", "down"]
    detail: str = ""

    @property
    def up(self) -> bool:
        return self.state == "up"


class RestartLine(_Line):
    """The daemon started again on saved state: whatever it did not read meanwhile is unknown."""

    event: Literal["restart"] = "restart"
    detail: str = ""
    repeats: bool = False  # the shoe repeats what was not acknowledged: no card of it was lost


class AnchorLine(_Line):
    """An earlier file's anchor went out (``scannerd.core.inputs.Anchored``): kept so a replay numbers it
    too."""

    event: Literal["anchor"] = "anchor"
    file: str = Field(min_length=1)
    lines: Serial
    digest: Digest


class ConfigLine(_Line):
    """The table started under another configuration (``scannerd.core.inputs.ConfigChanged``): kept so a
    replay publishes the same event."""

    event: Literal["config"] = "config"
    digest: Digest
    previous: Digest
    changed: list[str]


class FaultLine(_Line):
    """A fault the daemon itself raised or cleared (``scannerd.core.inputs.Fault``/``FaultCleared``): the
    clock out of limits, the outbox filling. Its cause is no device byte and no command, so without it a
    replay would miss the alert and number every event after it one lower than the table did.

    A fault the shoe reported is not here: its bytes are, in an ``rx`` line.
    """

    event: Literal["fault"] = "fault"
    code: str = Field(min_length=1)
    message: str = ""
    cleared: bool = False  # the cause is over: the fault's open alerts clear


AnyLine = RxLine | CmdLine | LinkLine | RestartLine | AnchorLine | ConfigLine | FaultLine
Line = Annotated[AnyLine, Field(discriminator="event")]
_LINE = TypeAdapter(Line)
EVENT_KINDS = frozenset({"rx", "cmd", "link", "restart", "anchor", "config", "fault"})
SEAL = "seal"
"""A chained file's last line (recording/chain.py): it proves the file; a replay has nothing to do with it."""


def _create_text(path: Path) -> IO[str]:
    """Gzip when the file's name says so."""
    if path.suffix == ".gz":
        # mtime 0: the same session always compresses to the same bytes
        return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8", newline="\n")
    return path.open("w", encoding="utf-8", newline="\n")


class _File:
    """Closed by ``close``, and at the end of a ``with`` block."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class RecordingReader(_File):
    """Reads one recording: ``header`` at once, then ``lines()`` lazily.

    Lines of an event kind this version does not know are skipped and counted
    in ``skipped``; a last line cut short (the recorder stopped mid-write)
    ends the file and sets ``truncated``; anything else malformed raises
    :class:`RecordingError` naming the file and line. The bytes come through
    the one reading path every reader shares (recording/source.py), and the
    file ends at its seal: anything after it raises :class:`PastTheEnd`.
    """

    def __init__(self, path: str | Recorded) -> None:
        self.path = Path(path) if isinstance(path, str) else path
        self.skipped = 0
        self.truncated = False
        self._lineno = 0
        self._sealed = False
        try:
            self._raw_lines = RawLines(self.path)
        except OSError as exc:
            raise RecordingError(f"{self.path}: {exc.strerror or exc}") from None
        self._texts = iter(self._raw_lines)
        try:
            self.header = self._read_header()
        except BaseException:
            self._raw_lines.close()
            raise

    def _fail(self, text: str) -> RecordingError:
        return RecordingError(f"{self.path}:{self._lineno}: {text}")

    def _next_text(self) -> str | None:
        """The next line that is not blank, or None at the end of the file."""
        while True:
            try:
                data = next(self._texts, None)
            except ContentError as exc:
                raise PastTheEnd(f"{self.path}: {exc.finding}") from None
            except OSError as exc:
                raise self._fail(f"unreadable: {exc.strerror or exc}") from None
            if data is None:
                self.truncated |= self._raw_lines.cut  # a compressed copy broken off: as a cut-off line
                return None
            self._lineno += 1
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._fail(f"unreadable: {exc}") from None
            if not text.strip():
                continue
            if self._sealed:
                raise PastTheEnd(f"{self.path}: line {self._lineno}: added after the seal")
            return text

    def _raw(self, text: str) -> dict[str, Any] | None:
        """A line's JSON object; None when it is the cut-off last line of an interrupted file."""
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError) as exc:  # also integers too long, nesting too deep
            if not text.endswith("\n") and self._lineno > 1:
                self.truncated = True  # the writer stopped mid-line (power cut, full disk)
                return None
            raise self._fail(f"not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise self._fail("a line must be a JSON object")
        return raw

    def _read_header(self) -> Header:
        text = self._next_text()
        raw = None if text is None else self._raw(text)
        if raw is None:
            raise self._fail("empty file: not a scannerd recording")
        if raw.get("format") != FORMAT:
            raise self._fail(f"not a scannerd recording (format is {raw.get('format')!r}, not {FORMAT!r})")
        version = raw.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise self._fail(f"bad recording version {version!r}: expected a whole number")
        if version > VERSION:
            raise self._fail(
                f"recording format version {version} was written by a newer scannerd; "
                f"this one reads version {VERSION}: upgrade scannerd to read it"
            )
        try:
            return Header.model_validate(raw)
        except ValidationError as exc:
            raise self._fail(f"bad header: {_explain(exc)}") from None

    def lines(self) -> Iterator[AnyLine]:
        last_t = 0.0
        while (text := self._next_text()) is not None:
            try:
                # Nearly every line is a good one: parsed and checked in one step in pydantic-core.
                line = _LINE.validate_json(text)
            except ValidationError:
                # Anything else takes the long way, which says what is wrong with it.
                raw = self._raw(text)
                if raw is None:
                    return
                event = raw.get("event")
                if event == SEAL:
                    self._sealed = True
                    continue
                if not isinstance(event, str) or event not in EVENT_KINDS:  # a list or object is no kind
                    self.skipped += 1
                    continue
                try:
                    line = _LINE.validate_python(raw)
                except ValidationError as exc:
                    raise self._fail(f"bad {event} line: {_explain(exc)}") from None
            if line.t < last_t:
                raise self._fail(f"t goes backwards ({line.t} after {last_t})")
            last_t = line.t
            yield line

    def close(self) -> None:
        self._raw_lines.close()


def _explain(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors(include_url=False)
    )


class RecordingWriter(_File):
    """Writes one recording to a text stream; times go in as Unix seconds and come out as ``t``.

    ``t`` is kept non-decreasing (a line stamped earlier than the one before,
    which threads racing to be recorded can cause, gets the previous ``t``).
    With a whole-second ``started_at``, ``t = ts - start`` is exact in binary
    floating point, so a replay's ``start + t`` gives back the very ``ts``
    the live table stamped.

    With a ``chain`` (a header with ``chain`` set), every line is chained to
    the one before and :meth:`seal` ends the file, signed with ``key``.
    """

    def __init__(
        self,
        stream: IO[str],
        header: Header,
        chain: Chain | None = None,
        key: Ed25519PrivateKey | None = None,
    ) -> None:
        self.stream = stream
        self.header = header
        self.start = header.start_ts
        self.lines = 0
        self.chain = chain
        self._key = key
        self._last_t = 0.0
        self._put(header.to_json())

    @classmethod
    def create(
        cls,
        path: str | Path,
        header: Header,
        chain: Chain | None = None,
        key: Ed25519PrivateKey | None = None,
    ) -> RecordingWriter:
        """A new file at ``path``, gzip-compressed when its name ends in ``.gz``."""
        return cls(_create_text(Path(path)), header, chain, key)

    def _put(self, body: str) -> None:
        self.stream.write((self.chain.extend(body) if self.chain else body) + "\n")

    def _write(self, ts: float, fields: dict[str, Any]) -> None:
        t = max(ts - self.start, self._last_t)
        self._last_t = t
        self._put(_compact({"t": t, **fields}))
        self.lines += 1

    def seal(self) -> None:
        """The chained file's last line: what lets a verifier call the file whole and, with a key, signed."""
        if self.chain is None:
            return
        fields: dict[str, Any] = {"t": self._last_t, "event": SEAL}
        if self._key is not None:
            fields["sig"] = b64(self._key.sign(seal_message(self.chain.digest)))
        self._put(_compact(fields))

    def rx(self, ts: float, data: bytes) -> None:
        self._write(ts, {"event": "rx", "hex": data.hex()})

    def cmd(self, ts: float, name: str, args: dict[str, Any], actor: Actor | None = None) -> None:
        fields: dict[str, Any] = {"event": "cmd", "name": name, "args": args}
        if actor is not None:
            fields["actor"] = actor.to_dict()
        self._write(ts, fields)

    def link(self, ts: float, up: bool, detail: str = "") -> None:
        fields = {"event": "link", "state": "up" if up else "down"}
        if detail:
            fields["detail"] = detail
        self._write(ts, fields)

    def restart(self, ts: float, detail: str = "", repeats: bool = False) -> None:
        fields: dict[str, Any] = {"event": "restart"}
        if detail:
            fields["detail"] = detail
        if repeats:
            fields["repeats"] = True
        self._write(ts, fields)

    def anchor(self, ts: float, file: str, lines: int, digest: str) -> None:
        self._write(ts, {"event": "anchor", "file": file, "lines": lines, "digest": digest})

    def config(self, ts: float, digest: str, previous: str, changed: Iterable[str]) -> None:
        self._write(ts, {"event": "config", "digest": digest, "previous": previous, "changed": list(changed)})

    def fault(self, ts: float, code: str, message: str = "", cleared: bool = False) -> None:
        fields: dict[str, Any] = {"event": "fault", "code": code}
        if message:
            fields["message"] = message
        if cleared:
            fields["cleared"] = True
        self._write(ts, fields)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def whole_second(ts: float) -> datetime:
    """The ``started_at`` for a file begun at ``ts``: the second it falls in (keeps ``t`` exact)."""
    return datetime.fromtimestamp(int(ts // 1), UTC)
