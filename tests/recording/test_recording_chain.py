"""Tamper-evident recordings: files the real Recorder wrote, then edited the ways someone could edit them.

Every change is named by ``scannerd verify`` (exit 1) with the file and the
first line or file it touches; a file that cannot be checked at all is exit 2.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from scannerd.core.house import HouseRules
from scannerd.core.inputs import Command, LinkChanged
from scannerd.core.table import SavedState
from scannerd.recording.chain import Chain
from scannerd.recording.format import PastTheEnd, RecordingReader
from scannerd.recording.recorder import Recorder
from scannerd.recording.settings import RecordSettings
from scannerd.recording.signing import load_private_key, write_key_pair
from tests.runtime.test_service_start_errors import the_error
from tests.support.broker import Broker, wait_until
from tests.support.command import scannerd
from tests.support.frames import beetek
from tests.support.process import live_table, log_lines, wait_shoe_open

T0 = 1_714_564_800.0 + 0.25  # 2024-05-01 12:00:00.25 UTC


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    private, public = tmp_path / "recording-key", tmp_path / "recording-key.pub"
    write_key_pair(private, public)
    return private, public


def shoe_state(shoe_id: str) -> SavedState:
    return SavedState({"shoe": {"shoe_id": shoe_id, "cards_dealt": 0, "hands_started": 0}})


def recorder(
    directory: Path, key: Path | None, state: Callable[[], SavedState], table_id: str = "T1"
) -> Recorder:
    """A table's recorder as the daemon makes it: a file per shoe, gzipped, signed with ``key``."""
    return Recorder(
        RecordSettings(dir=directory, rotate="shoe"),
        table_id=table_id,
        driver="linecode",
        rules=HouseRules(burn="none"),
        state=state,
        key=load_private_key(key) if key else None,
    )


def record(
    directory: Path, key: Path | None, shoes: int = 3, start: float = T0, table_id: str = "T1"
) -> list[Path]:
    """``shoes`` files of one table, as the daemon's recorder writes them: a shoe per file, gzipped."""
    state = {"now": shoe_state("S1")}
    rec = recorder(directory, key, lambda: state["now"], table_id)
    rec.start(start)
    t = start
    for shoe in range(1, shoes + 1):
        rec.on_input(LinkChanged(t + 0.5, True, "linecode on /dev/shoe-1"))
        rec.on_input(Command(t + 1, "betting_open", {"round_id": f"R{shoe}"}))
        for card in range(8):
            rec.on_rx(t + 2 + card, f"A0{card + 1}\r\n".encode())
        state["now"] = shoe_state(f"S{shoe + 1}")
        if shoe < shoes:
            rec.on_input(Command(t + 20, "new_shoe", {"shoe_id": f"S{shoe + 1}"}))
        t += 30
    rec.stop()
    assert rec.health().errors == 0
    return list(rec.files)


def lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        return f.read().split("\n")[:-1]


def rewrite(path: Path, new: list[str], *, newline: bool = True) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(new) + ("\n" if newline else ""))


def verify(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    capsys.readouterr()
    status = scannerd("verify", *map(str, argv))
    out = capsys.readouterr()
    return status, out.out + out.err


@pytest.fixture
def signed(tmp_path: Path, keys: tuple[Path, Path]) -> list[Path]:
    return record(tmp_path / "rec", keys[0])


def test_what_the_recorder_writes_is_intact_signed_and_replays_as_before(
    tmp_path: Path, signed: list[Path], keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = verify(capsys, tmp_path / "rec", "--key", keys[1])
    assert status == 0, out
    assert out.startswith("intact: 3 file(s), 38 lines, signed with ed25519:")
    # The chain is invisible to a reader: the same lines, nothing skipped, the seal not among them.
    with RecordingReader(signed[0]) as reader:
        kinds = [line.event for line in reader.lines()]
        assert reader.skipped == 0 and not reader.truncated
    assert kinds == ["link", "cmd", *["rx"] * 8, "cmd"]
    assert json.loads(lines(signed[1])[0])["chain"]["file"] == 2
    assert json.loads(lines(signed[0])[-1])["event"] == "seal"


def test_an_unsigned_table_is_still_chained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record(tmp_path / "rec", None)
    assert verify(capsys, tmp_path / "rec")[0] == 0
    status, out = verify(capsys, tmp_path / "rec", "--key", _other_key(tmp_path))
    assert status == 1 and out.count("not signed") == 3, out


def _other_key(tmp_path: Path) -> Path:
    write_key_pair(tmp_path / "other", tmp_path / "other.pub")
    return tmp_path / "other.pub"


def _tampered(capsys: pytest.CaptureFixture[str], directory: Path, key: Path) -> str:
    status, out = verify(capsys, directory, "--key", key)
    assert status == 1, out
    assert "NOT intact" in out
    return out


def test_an_edited_line_is_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    text = lines(signed[1])
    assert '"hex":"4130330d0a"' in text[5]
    text[5] = text[5].replace('"hex":"413033', '"hex":"4b3033')  # the third card: a 3 became a king
    rewrite(signed[1], text)
    out = _tampered(capsys, signed[1].parent, keys[1])
    assert f"{signed[1]}: line 6: edited (it does not match its digest)" in out


def test_a_deleted_line_is_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    text = lines(signed[0])
    del text[6]
    rewrite(signed[0], text)
    assert f"{signed[0]}: line 7: 1 line missing before it" in _tampered(capsys, signed[0].parent, keys[1])


def test_an_inserted_line_is_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    text = lines(signed[2])
    text.insert(3, '{"t":2.5,"event":"rx","hex":"4b30330d0a"}')
    rewrite(signed[2], text)
    assert f"{signed[2]}: line 4: inserted" in _tampered(capsys, signed[2].parent, keys[1])


def test_an_inserted_copy_of_a_chained_line_is_named(
    signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    text = lines(signed[0])
    text.insert(6, text[3])  # a card dealt twice, digest and all
    rewrite(signed[0], text)
    assert f"{signed[0]}: line 7: inserted" in _tampered(capsys, signed[0].parent, keys[1])


def test_reordered_lines_are_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    text = lines(signed[0])
    text[5], text[6] = text[6], text[5]
    rewrite(signed[0], text)
    out = _tampered(capsys, signed[0].parent, keys[1])
    assert f"{signed[0]}: line 6: out of order (written as line 7; line 7 belongs here)" in out


@pytest.mark.parametrize("cut", ["seal", "mid-line", "lines"])
def test_a_truncated_tail_is_named(signed: list[Path], keys: tuple[Path, Path], capsys, cut: str) -> None:
    text = lines(signed[2])
    if cut == "seal":
        rewrite(signed[2], text[:-1])
        expected = f"{signed[2]}: truncated: the file ends after line {len(text) - 1} without its seal"
    elif cut == "lines":
        rewrite(signed[2], text[:4])
        expected = f"{signed[2]}: truncated: the file ends after line 4 without its seal"
    else:
        rewrite(signed[2], [*text[:5], text[5][:20]], newline=False)
        expected = f"{signed[2]}: truncated: line 6 is cut short, and the file has no seal"
    assert expected in _tampered(capsys, signed[2].parent, keys[1])


def test_a_gzip_stream_cut_short_is_a_truncated_tail(
    signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    data = signed[1].read_bytes()
    signed[1].write_bytes(data[: len(data) // 2])
    assert f"{signed[1]}: truncated" in _tampered(capsys, signed[1].parent, keys[1])


def test_an_unchained_line_after_the_seal_is_added_after_the_seal_for_verify_and_replay(
    signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    text = lines(signed[1])
    rewrite(signed[1], [*text, '{"t":99.0,"event":"rx","hex":"4b30330d0a"}'])
    out = _tampered(capsys, signed[1].parent, keys[1])
    assert out.splitlines()[0] == f"{signed[1]}: line {len(text) + 1}: added after the seal"
    with RecordingReader(signed[1]) as reader, pytest.raises(PastTheEnd) as refused:
        list(reader.lines())
    assert str(refused.value) == f"{signed[1]}: line {len(text) + 1}: added after the seal"


def test_a_damaged_compressed_file_is_named_and_every_other_file_is_still_checked(
    tmp_path: Path, signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    data = bytearray(signed[1].read_bytes())
    # A disk's bad block at the stream's end: its check (CRC-32) no longer matches what it holds. Bytes
    # spoilt inside the deflate data may instead decode to a shorter file (a signature differs each run).
    data[-8:-4] = bytes(b ^ 0xFF for b in data[-8:-4])
    signed[1].write_bytes(bytes(data))
    spoilt = bytearray(signed[2].read_bytes())
    spoilt[60:68] = b"\xff" * 8  # before its header is whole (past the gzip header and its file name)
    signed[2].write_bytes(bytes(spoilt))
    other = record(tmp_path / "other", keys[0], shoes=1, table_id="T2")
    capsys.readouterr()
    status = scannerd("verify", str(signed[0].parent), str(other[0]), "--key", str(keys[1]))
    said = capsys.readouterr()
    assert status == 2, said
    assert said.err == (
        f"scannerd verify: {signed[2]}: damaged: its compressed data is corrupt before its first line ends\n"
    )
    problems = said.out.splitlines()
    assert problems[0].startswith(f"{signed[1]}: damaged: its compressed data is corrupt after line ")
    assert problems[-1] == "NOT intact: 1 problem(s) in 3 file(s), 1 file(s) that could not be checked"
    assert "empty file" not in said.out + said.err


def test_a_missing_file_is_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    signed[1].unlink()
    out = _tampered(capsys, signed[0].parent, keys[1])
    assert f"{signed[2]}: 1 file missing before it (after {signed[0].name}, file 1, comes file 3)" in out


def test_swapped_files_are_named(signed: list[Path], keys: tuple[Path, Path], capsys) -> None:
    aside = signed[0].with_name("aside")
    signed[0].rename(aside)
    signed[1].rename(signed[0])
    aside.rename(signed[1])
    out = _tampered(capsys, signed[0].parent, keys[1])
    assert out.splitlines()[0] == (
        f"{signed[0]}: swapped with {signed[1].name}: it is file 2 of the chain and {signed[1].name} file 1, "
        "but their names sort the other way"
    )
    assert out.splitlines()[1] == "NOT intact: 1 problem(s) in 3 file(s)"


def test_one_swap_among_many_files_is_one_finding_that_says_swapped(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    files = record(tmp_path / "rec", keys[0], shoes=5)
    aside = files[1].with_name("aside")
    files[1].rename(aside)
    files[3].rename(files[1])
    aside.rename(files[3])
    out = _tampered(capsys, files[0].parent, keys[1])
    assert out.splitlines() == [
        f"{files[1]}: swapped with {files[3].name}: it is file 4 of the chain and {files[3].name} file 2, "
        "but their names sort the other way",
        "NOT intact: 1 problem(s) in 5 file(s)",
    ]


def test_a_renamed_file_out_of_its_place_is_named_without_files_called_missing(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    files = record(tmp_path / "rec", keys[0], shoes=4)
    files[0].rename(files[3].with_name(files[3].name.replace(".jsonl", "-z.jsonl")))
    out = _tampered(capsys, files[1].parent, keys[1])
    moved = files[3].with_name(files[3].name.replace(".jsonl", "-z.jsonl"))
    assert out.splitlines() == [
        f"{moved}: out of order: it is file 1 of the chain and sorts after {files[2].name} (file 3): renamed",
        "NOT intact: 1 problem(s) in 4 file(s)",
    ]


def test_a_file_replaced_by_one_of_another_chain_is_named(
    tmp_path: Path, signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    # A whole, well-signed file of the same table from another run, put in the middle file's place.
    other = record(tmp_path / "other", keys[0], shoes=2, start=T0 + 86_400)
    other[1].replace(signed[1])
    out = _tampered(capsys, signed[0].parent, keys[1])
    assert f"{signed[1]}: does not continue {signed[0].name}" in out


def test_a_wrong_key_is_named(tmp_path: Path, signed: list[Path], capsys) -> None:
    out = _tampered(capsys, signed[0].parent, _other_key(tmp_path))
    assert out.count(": wrong key: signed by ed25519:") == 3


def rechained(text: list[str], old: str, new: str) -> list[str]:
    """``text`` with ``old`` made ``new`` and every digest recomputed: as anyone knowing the format can."""
    header = json.loads(text[0])
    prev = bytes.fromhex(header["chain"]["prev"]) if header["chain"].get("prev") else bytes(32)
    chain = Chain(prev)
    return [chain.extend((line[: line.rindex(',"n":')] + "}").replace(old, new)) for line in text]


def test_a_chain_rewritten_whole_fails_the_signature(
    tmp_path: Path, signed: list[Path], keys: tuple[Path, Path], capsys
) -> None:
    # Someone who knows the format recomputes every digest after an edit: only the signature catches it.
    rewrite(signed[0], rechained(lines(signed[0]), '"hex":"413031', '"hex":"4b3031'))
    out = _tampered(capsys, signed[0].parent, keys[1])
    assert f"{signed[0]}: the signature does not verify with the key given" in out
    assert f"{signed[1]}: does not continue {signed[0].name}" in out


def test_a_restart_continues_the_chain_from_the_newest_file(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    first = record(tmp_path / "rec", keys[0], shoes=2)
    second = record(tmp_path / "rec", keys[0], shoes=2, start=T0 + 3600)
    assert json.loads(lines(second[0])[0])["chain"]["file"] == 3
    assert verify(capsys, *first, *second, "--key", keys[1])[0] == 0


def test_a_restart_continues_its_own_tables_chain_beside_another_tables_files(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    # "T1-x"'s files match the name pattern of "T1"'s and sort after them.
    record(tmp_path / "rec", keys[0], shoes=2)
    record(tmp_path / "rec", keys[0], shoes=2, start=T0 + 600, table_id="T1-x")
    again = record(tmp_path / "rec", keys[0], shoes=1, start=T0 + 3600)
    assert json.loads(lines(again[0])[0])["chain"]["file"] == 3
    status, out = verify(capsys, tmp_path / "rec", "--key", keys[1])
    assert status == 0, out


def test_a_crash_leaves_the_cut_file_named_and_the_next_run_continuing_from_its_last_line(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    first = record(tmp_path / "rec", keys[0], shoes=1)
    text = lines(first[0])
    # What a power cut leaves: no seal, the last line half-written, the file not yet compressed.
    first[0].unlink()
    plain = first[0].with_name(first[0].name.removesuffix(".gz"))
    plain.write_text("\n".join(text[:-2]) + "\n" + text[-2][:30], encoding="utf-8")
    second = record(tmp_path / "rec", keys[0], shoes=1, start=T0 + 3600)
    status, out = verify(capsys, tmp_path / "rec", "--key", keys[1])
    assert status == 1
    assert (
        out.splitlines()[0]
        == f"{first[0]}: truncated: line {len(text) - 1} is cut short, and the file has no seal"
    )
    assert str(second[0]) not in out  # it continues exactly where the cut file's whole lines end


def test_a_newest_file_a_power_cut_left_empty_is_named_and_the_chain_goes_on_from_the_one_before(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    """The file was made and the power went before its header reached the disk: zero bytes. Begun again
    at file 1, the chain would look cut for good where only that file is lost."""
    first = record(tmp_path / "rec", keys[0], shoes=2)
    empty = tmp_path / "rec" / "T1-20240501T121000Z-S3.jsonl"
    empty.write_bytes(b"")
    second = record(tmp_path / "rec", keys[0], shoes=1, start=T0 + 3600)
    link = json.loads(lines(second[0])[0])["chain"]
    assert link["file"] == 3 and link["lines"] == len(lines(first[1]))
    status, out = verify(capsys, tmp_path / "rec", "--key", keys[1])
    assert status == 2  # a file that could not be checked, and no break in the chain
    assert out.splitlines() == [
        "NOT intact: 0 problem(s) in 3 file(s), 1 file(s) that could not be checked",
        f"scannerd verify: {empty}.gz: empty file: not a scannerd recording",  # compressed at the start
    ]


def test_a_newest_file_there_but_not_to_be_read_stops_recording_rather_than_fork_the_chain(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    """Passed over, a whole file the recorder only cannot open now would be followed by a second file
    of its number, and a verifier that can read both sees a fork. (Root reads any file: a directory
    under a recording's name is what cannot be opened as one here.)"""
    first = record(tmp_path / "rec", keys[0], shoes=2)
    (tmp_path / "rec" / "T1-20240501T121000Z-S3.jsonl").mkdir()
    rec = recorder(tmp_path / "rec", keys[0], lambda: shoe_state("S4"))
    rec.start(T0 + 3600)
    rec.on_rx(T0 + 3601, b"A01\r\n")
    rec.stop()
    assert rec.health().errors >= 1 and list(rec.files) == []
    assert verify(capsys, *first, "--key", keys[1])[0] == 0


def test_a_fork_is_named_once_as_a_fork_not_as_a_renaming(
    tmp_path: Path, keys: tuple[Path, Path], capsys
) -> None:
    """Two runs went on from the same file (one recorder could not read the other's newest file):
    two files of one number, each in its place by name."""
    first = record(tmp_path / "rec", keys[0], shoes=2)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / first[0].name).write_bytes(first[0].read_bytes())
    fork = record(tmp_path / "other", keys[0], shoes=1, start=T0 + 3600)
    assert json.loads(lines(fork[0])[0])["chain"]["file"] == 2
    status, out = verify(capsys, *first, *fork, "--key", keys[1])
    assert status == 1
    assert f"{fork[0]}: is file 2 of the chain, as {first[1].name} is: one of them is not this chain's" in out
    assert "renamed" not in out and "swapped" not in out, out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tamper", ["edited", "cut"])
def test_a_file_a_kill_left_unsealed_cannot_be_edited_or_cut_unseen(
    tmp_path: Path, mosquitto: Broker, keys: tuple[Path, Path], capsys, tamper: str
) -> None:
    """A real ``scannerd run`` SIGKILLed mid-shoe and started again; then its unsealed file is changed.

    No seal signs the killed file, so only the next file's header can prove
    it: the digest and the number of lines the table took the chain on from.
    """
    rec = tmp_path / "rec"
    record = {"dir": str(rec), "key_file": str(keys[0])}
    with live_table(tmp_path, mosquitto, "beetek", table_id="REC-KILLED", record=record) as table:
        wait_shoe_open(table.server, "casino/tables/REC-KILLED")
        table.port.write(beetek("9H", "2S", "3D", "KC", crlf=False))
        wait_until(lambda: _written(rec, '"event":"rx"') >= 1, 30, "the cards recorded")
        assert table.kill() == -signal.SIGKILL
        table.start()
        wait_until(
            lambda: len(list(rec.glob("*.jsonl.gz"))) == 1 and _written(rec, '"link"') >= 1, 30, "the restart"
        )
    killed, after = sorted(rec.glob("*.jsonl.gz"))
    text = lines(killed)
    status, out = verify(capsys, rec, "--key", keys[1])
    # Untouched, the killed file is only unsealed: its last line may be half-written, the rest continues it.
    assert status == 1 and out.splitlines()[0].startswith(f"{killed}: truncated: "), out
    assert out.splitlines()[1:] == ["NOT intact: 1 problem(s) in 2 file(s)"]
    if tamper == "edited":  # the first card, a nine, made an eight; every digest recomputed
        rewrite(
            killed,
            rechained(text, '"hex":"205b47616d655d3c436172643a39', '"hex":"205b47616d655d3c436172643a38'),
        )
        said = (
            f"{killed}: edited: its chain was rewritten since {after.name} took it on "
            "(its lines no longer end in the digest that file names)"
        )
    else:  # the last line taken away
        rewrite(killed, text[:-1])
        said = (
            f"{killed}: cut: {after.name} takes the chain on after its line {len(text)}, "
            f"and it now ends after line {len(text) - 1}"
        )
    assert lines(killed) != text
    status, out = verify(capsys, rec, "--key", keys[1])
    assert status == 1 and said in out.splitlines(), out


def _written(rec: Path, what: str) -> int:
    """How many lines holding ``what`` the table's uncompressed file has on disk."""
    return sum(p.read_text().count(what) for p in rec.glob("*.jsonl"))


def test_the_first_file_given_may_continue_a_chain_begun_elsewhere(signed: list[Path], capsys) -> None:
    status, out = verify(capsys, signed[1], signed[2])
    assert status == 0
    assert f"note: {signed[1]}: continues the chain from file 1, not given here" in out


def test_an_old_recording_without_a_chain_is_named(capsys) -> None:
    status, out = verify(capsys, "samples/clean-shoe.jsonl.gz")
    assert status == 1 and "samples/clean-shoe.jsonl.gz: has no chain" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nowhere.jsonl"], "nowhere.jsonl: no such file or directory"),
        (["README.md"], "README.md:1: not a scannerd recording (the first line is not JSON)"),
        (
            ["samples/clean-shoe.jsonl.gz", "--key", "README.md"],
            "README.md: is not an Ed25519 public key in PEM",
        ),
    ],
)
def test_input_that_cannot_be_checked_is_exit_2(capsys, argv: list[str], says: str) -> None:
    status, out = verify(capsys, *argv)
    assert status == 2 and out.strip() == f"scannerd verify: {says}", out


@pytest.mark.parametrize("slip", ["public", "missing"])
def test_a_table_whose_key_cannot_be_read_does_not_start(
    tmp_path: Path, keys: tuple[Path, Path], slip: str
) -> None:
    # The public key named where the private one belongs, or a path to nothing: the table must not
    # go on recording unsigned when it was set up to sign.
    key = keys[1] if slip == "public" else tmp_path / "nowhere"
    error = the_error(tmp_path, record={"dir": str(tmp_path / "rec"), "key_file": str(key)})
    if slip == "public":
        assert error == f"{key}: is not an Ed25519 private key in PEM (scannerd keygen makes one)"
    else:
        assert error == f"{key}: No such file or directory"


def test_a_credential_that_is_not_the_private_key_stops_the_table(
    tmp_path: Path, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The public key put in /etc/credstore by a slip: the unit hands it over as the credential, and
    # a table set to sign by the credential alone must stop as one set to sign by key_file does.
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "recording-key").write_bytes(keys[1].read_bytes())
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    error = the_error(tmp_path, record={"dir": str(tmp_path / "rec")})
    problem = "is not an Ed25519 private key in PEM (scannerd keygen makes one)"
    assert error == f"{credentials / 'recording-key'}: {problem}"


def test_a_table_with_neither_key_records_unsigned_and_its_log_says_so(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """No key_file and no credential (the unit found nothing in /etc/credstore): not set to sign."""
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    env = {"CREDENTIALS_DIRECTORY": str(credentials)}
    with live_table(tmp_path, mosquitto, "beetek", env=env, record={"dir": str(tmp_path / "rec")}) as table:
        log = table.log
        wait_until(
            lambda: any(line["event"] == "recording" for line in log_lines(log)), 30, "the recording line"
        )
        assert table.kill(signal.SIGTERM) == 0
    (said,) = [line for line in log_lines(log) if line["event"] == "recording"]
    assert said["level"] == "info" and said["key"] is None


def test_an_empty_directory_is_exit_2(tmp_path: Path, capsys) -> None:
    status, out = verify(capsys, tmp_path)
    assert status == 2 and "no recordings (.jsonl, .jsonl.gz) in this directory" in out


def test_keygen_makes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path: Path, capsys) -> None:
    assert scannerd("keygen", str(tmp_path / "k")) == 0
    assert "fingerprint ed25519:" in capsys.readouterr().out
    assert os.stat(tmp_path / "k").st_mode & 0o777 == 0o600
    before = (tmp_path / "k").read_bytes()
    assert scannerd("keygen", str(tmp_path / "k")) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"scannerd keygen: {tmp_path / 'k'}: exists already: not overwritten"
    )
    assert (tmp_path / "k").read_bytes() == before
