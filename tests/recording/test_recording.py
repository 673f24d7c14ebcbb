"""The recording format: what the writer puts down the reader gives back; what it cannot read, it says."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from scannerd.core.house import SUSPEND_ON, HouseRules
from scannerd.recording.format import (
    CmdLine,
    Header,
    LinkLine,
    RecordingError,
    RecordingReader,
    RecordingWriter,
    RxLine,
    whole_second,
)

STARTED = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
HEADER = Header(table_id="T7", driver="beetek", started_at=STARTED, rules=HouseRules(decks=6, burn=2))


def write_lines(path: Path, *lines: dict | str, header: dict | None = None) -> Path:
    first = header if header is not None else json.loads(HEADER.to_json())
    text = "\n".join([json.dumps(first), *(ln if isinstance(ln, str) else json.dumps(ln) for ln in lines)])
    path.write_text(text + "\n")
    return path


@pytest.mark.parametrize("name", ["session.jsonl", "session.jsonl.gz"])
def test_what_is_written_reads_back(tmp_path: Path, name: str) -> None:
    start = STARTED.timestamp()
    with RecordingWriter.create(tmp_path / name, HEADER) as w:
        w.link(start + 0.5, True, "beetek on /dev/shoe-1")
        w.cmd(start + 1.25, "betting_open", {"round_id": "R-1"})
        w.rx(start + 2.0, b"\x00 [Game]<Card:4S> \xff")
        w.link(start + 3.0, False)
    with RecordingReader(tmp_path / name) as r:
        assert r.header == HEADER
        lines = list(r.lines())
    assert lines == [
        LinkLine(t=0.5, state="up", detail="beetek on /dev/shoe-1"),
        CmdLine(t=1.25, name="betting_open", args={"round_id": "R-1"}),
        RxLine(t=2.0, hex=b"\x00 [Game]<Card:4S> \xff".hex()),
        LinkLine(t=3.0, state="down"),
    ]
    assert lines[2].data == b"\x00 [Game]<Card:4S> \xff"


def test_the_file_is_the_documented_json_lines(tmp_path: Path) -> None:
    with RecordingWriter.create(tmp_path / "s.jsonl.gz", HEADER) as w:
        w.rx(STARTED.timestamp() + 1.5, b"AB")
    header, line = (
        json.loads(x) for x in gzip.decompress((tmp_path / "s.jsonl.gz").read_bytes()).splitlines()
    )
    assert header["format"] == "scannerd-recording" and header["version"] == 1
    assert header["started_at"] == "2024-05-01T12:00:00Z"
    assert header["rules"] == {
        "game": "punto_banco",
        "decks": 6,
        "round_control": "server",
        "burn": 2,
        "cut_card_remaining": None,
        "last_hand": "finish",
        "stall_timeout_s": 30.0,
        # Always written: a file without it is from before tables stopped, and nothing suspends it.
        "suspend_on": list(SUSPEND_ON),
    }
    assert line == {"t": 1.5, "event": "rx", "hex": "4142"}


def test_gzip_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    plain = write_lines(tmp_path / "plain.jsonl", {"t": 1, "event": "rx", "hex": "41"})
    disguised = tmp_path / "named-plain.jsonl"
    disguised.write_bytes(gzip.compress(plain.read_bytes()))
    with RecordingReader(disguised) as r:
        assert [line.data for line in r.lines()] == [b"A"]


@given(st.floats(min_value=1.5e9, max_value=2.5e9, allow_nan=False))
def test_times_come_back_exactly_as_the_table_stamped_them(ts: float) -> None:
    """``started_at + t`` in a replay is bit-for-bit the live ``ts``, so replayed events equal live ones."""
    import io

    header = HEADER.model_copy(update={"started_at": whole_second(ts)})
    out = io.StringIO()
    RecordingWriter(out, header).rx(ts, b"x")
    line = RxLine.model_validate_json(out.getvalue().splitlines()[1])
    assert header.start_ts + line.t == ts


def test_time_never_runs_backwards_in_a_file(tmp_path: Path) -> None:
    start = STARTED.timestamp()
    with RecordingWriter.create(tmp_path / "s.jsonl", HEADER) as w:
        w.cmd(start + 2.0, "betting_close", {})
        w.rx(start + 1.9, b"late stamp")  # a thread that stamped earlier was recorded later
    with RecordingReader(tmp_path / "s.jsonl") as r:
        assert [line.t for line in r.lines()] == [2.0, 2.0]


def test_unknown_fields_and_event_kinds_are_ignored(tmp_path: Path) -> None:
    header = json.loads(HEADER.to_json()) | {"site": "Macau-3", "rules": {"decks": 6, "shuffler": "csm"}}
    path = write_lines(
        tmp_path / "s.jsonl",
        {"t": 0.5, "event": "rx", "hex": "41", "port": "/dev/ttyUSB0"},
        {"t": 0.6, "event": "heartbeat", "lid": "closed"},
        {"t": 0.7, "event": "link", "state": "up"},
        header=header,
    )
    with RecordingReader(path) as r:
        # A file from before tables chose a game, and before they stopped after a malfunction.
        assert r.header.rules == HouseRules(decks=6, game=None, suspend_on=())
        assert [line.event for line in r.lines()] == ["rx", "link"]
        assert r.skipped == 1


def test_a_newer_major_version_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    header = json.loads(HEADER.to_json()) | {"version": 2, "layout": "something else entirely"}
    path = write_lines(tmp_path / "s.jsonl", header=header)
    with pytest.raises(RecordingError) as err:
        RecordingReader(path)
    assert (
        "version 2" in str(err.value) and "newer scannerd" in str(err.value) and "upgrade" in str(err.value)
    )


@pytest.mark.parametrize(
    ("lines", "header", "message"),
    [
        ((), {"format": "something-else"}, "not a scannerd recording"),
        ((), {"format": "scannerd-recording", "version": "one"}, "bad recording version"),
        ((), {"format": "scannerd-recording", "version": 1, "driver": "beetek"}, "table_id"),
        (({"t": 1, "event": "rx", "hex": "4x"},), None, "s.jsonl:2: bad rx line"),
        (
            ({"t": 2, "event": "cmd", "name": "betting_open"}, {"t": 1, "event": "link", "state": "up"}),
            None,
            ":3:",
        ),
        (({"t": 1, "event": "link", "state": "sideways"},), None, "state"),
        (("{not json",), None, "not JSON"),
        (("[" * 5000 + "]" * 5000,), None, "not JSON"),
        (('{"t": ' + "1" * 5000 + "}",), None, "not JSON"),
        ((), json.loads(HEADER.to_json()) | {"table_id": "T/#"}, "table_id"),
        (("[1, 2]",), None, "JSON object"),
    ],
)
def test_a_bad_file_is_named_with_its_line(tmp_path: Path, lines, header, message: str) -> None:
    path = write_lines(tmp_path / "s.jsonl", *lines, header=header)
    with pytest.raises(RecordingError, match=message) as err, RecordingReader(path) as r:
        list(r.lines())
    assert str(path) in str(err.value)


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False),
    st.sampled_from(["rx", "cmd", "link", "up", "down", "00ff", "4x", "", "1.5"]),
    st.text(max_size=4),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@given(st.dictionaries(st.sampled_from(["t", "event", "hex", "name", "args", "state", "detail"]), _VALUES))
@example(raw={"event": {}})  # an unhashable kind: it crashed the reader once
@example(raw={"t": 1, "event": "rx", "hex": "4x"})
@settings(deadline=None)  # each example writes a file: no clock in the verdict
def test_every_line_reads_as_checking_its_json_object_says(tmp_path_factory, raw: dict) -> None:
    """Lines are parsed and checked in one step; that must agree with parsing, then checking, each line."""
    models = {"rx": RxLine, "cmd": CmdLine, "link": LinkLine}
    expected: object = "skipped"
    if isinstance(raw.get("event"), str) and raw["event"] in models:
        try:
            expected = models[raw["event"]].model_validate(raw)
        except ValidationError:
            expected = "refused"
    path = write_lines(tmp_path_factory.mktemp("r") / "s.jsonl", raw)
    try:
        with RecordingReader(path) as r:
            got: object = list(r.lines()) or ("skipped" if r.skipped == 1 else "nothing")
    except RecordingError:
        got = "refused"
    assert got == (expected if isinstance(expected, str) else [expected])


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordingError, match="empty file"):
        RecordingReader(tmp_path / "empty.jsonl")
    with pytest.raises(RecordingError, match="No such file"):
        RecordingReader(tmp_path / "absent.jsonl")


def test_started_at_must_say_its_time_zone(tmp_path: Path) -> None:
    header = json.loads(HEADER.to_json()) | {"started_at": "2024-05-01T12:00:00"}
    with pytest.raises(RecordingError, match="time zone"):
        RecordingReader(write_lines(tmp_path / "s.jsonl", header=header))


def test_a_last_line_cut_short_ends_the_file_and_says_so(tmp_path: Path, capsys) -> None:
    """A power cut or a full disk can stop the recorder mid-line; everything before it still replays."""
    from tests.support.command import scannerd

    path = write_lines(tmp_path / "s.jsonl", {"t": 1, "event": "link", "state": "down"})
    path.write_text(path.read_text() + '{"t": 2, "event": "rx", "he')
    with RecordingReader(path) as r:
        assert [line.event for line in r.lines()] == ["link"]
        assert r.truncated
    assert scannerd("replay", "--fast", str(path)) == 0
    assert "cut-off line" in capsys.readouterr().err
