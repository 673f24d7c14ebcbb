"""The catalogues of alert codes, commands and id rules are the one place each fact is written.

The docs' tables are held to them, the golden sessions' alerts say what they
say, and the validator refuses the ids the game server's request models refuse.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import get_args

import pytest

from drivers.events import DeviceFault
from scannerd.contract.alert_catalogue import ALERT_CODES, ALERTS, FAULT_CODES, Case
from scannerd.contract.command_catalogue import COMMANDS, JUDGED, READS_ONLY
from scannerd.contract.events import AlertEvent
from scannerd.contract.idents import MAX_ID_LENGTH
from scannerd.contract.requests import RequestError, parse_request
from scannerd.core.ingest import to_input
from scannerd.core.inputs import Command, Fault
from scannerd.core.validator import CommandRejected, Validator
from scannerd.runtime.daemon import _OUTBOX_FAULTS
from scannerd.store.outbox import OutboxHealth
from tests.sessions import DIR as SESSIONS
from tests.support.docs import markdown_table

ROOT = Path(__file__).resolve().parents[2]


def ticked(cell: str) -> str:
    """``EXTRA_CARD`` from the cell "`EXTRA_CARD`"."""
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"not one name in backticks: {cell!r}"
    return match.group(1)


def test_the_alert_table_in_the_validator_docs_is_the_catalogue() -> None:
    rows = markdown_table(ROOT / "docs" / "validator.md", "## Alerts")
    assert [ticked(row[0]) for row in rows] == list(ALERT_CODES)
    for row in rows:
        kind, text = ALERTS[ticked(row[0])], " | ".join(row)
        severities = list(dict.fromkeys(case.severity for case in kind.cases))
        assert row[1] == " / ".join(severities), row[0]
        assert ("`void`" in text) == any(case.voids for case in kind.cases), row[0]
        assert ("left off the dealer display" in text) == kind.pit_only, row[0]


def test_the_alert_model_takes_exactly_the_catalogued_codes() -> None:
    assert get_args(AlertEvent.model_fields["code"].annotation) == ALERT_CODES


def said_by(case: Case, message: str) -> bool:
    """Whether ``message`` is ``case``'s text with some facts filled in."""
    pattern = "".join(
        re.escape(literal) + (".+?" if name is not None else "")
        for literal, name, _, _ in string.Formatter().parse(case.text)
    )
    return re.fullmatch(pattern, message) is not None


def test_every_alert_in_the_golden_sessions_says_what_the_catalogue_says() -> None:
    """The goldens were written before the catalogue: the words and severities are the ones tables sent."""
    seen = set()
    for golden in sorted(SESSIONS.glob("*.chk")):
        for line in golden.read_text().splitlines():
            message = json.loads(line)
            alert = message["payload"]
            if not message["topic"].endswith("/alert"):
                continue
            cases = ALERTS[alert["code"]].cases
            fits = [c for c in cases if c.severity == alert["severity"] and said_by(c, alert["message"])]
            assert fits, f"{golden.name}: {alert['code']} {alert['severity']}: {alert['message']!r}"
            seen.add(alert["code"])
    assert len(seen) >= 10  # most codes are in some session


def test_the_faults_raised_outside_the_validator_say_what_the_catalogue_says() -> None:
    faults = [
        to_input(1.0, DeviceFault("E3", "Card Not Read")),
        to_input(1.0, DeviceFault("W07", "")),
        _OUTBOX_FAULTS["warn"](1.0, OutboxHealth(120, 0, 800, 1000, "warn")),
        _OUTBOX_FAULTS["full"](1.0, OutboxHealth(5, 7, 999, 999, "full")),
    ]
    assert [f.message for f in faults if isinstance(f, Fault)] == [
        "Shoe alarm E3: Card Not Read",
        "Shoe alarm W07: see the shoe",
        "Game server unreachable: 120 events waiting on disk (80% of the budget)",
        "Outbox full: 7 events held in memory only - call technical support",
    ]
    for fault in faults:
        assert isinstance(fault, Fault) and fault.code in FAULT_CODES
        assert any(said_by(case, fault.message) for case in ALERTS[fault.code].cases)


def test_the_command_table_in_the_mqtt_docs_is_the_catalogue() -> None:
    rows = markdown_table(ROOT / "docs" / "mqtt.md", "## Requests and responses")
    assert [ticked(row[0]) for row in rows] == list(COMMANDS)
    for row in rows:
        model = COMMANDS[ticked(row[0])]
        documented = re.findall(r"`(\w+)(\??)`", row[1])
        fields = [
            (name, "" if field.is_required() else "?")
            for name, field in model.model_fields.items()
            if name != "transaction"
        ]
        assert documented == fields, row[0]


def test_the_validator_judges_every_command_but_those_that_only_read() -> None:
    assert set(JUDGED) | READS_ONLY == set(COMMANDS) and not set(JUDGED) & READS_ONLY
    v = Validator("T1")
    for name in JUDGED:
        try:
            v.handle(Command(1.0, name, {}))
        except CommandRejected as exc:
            assert "unknown command" not in str(exc), name


IDS = [
    "",
    "   ",
    "S" * (MAX_ID_LENGTH + 1),
    "S-1\x00",  # a NUL cuts a C string short
    "S-\u202e21",  # a right-to-left override shows it as another id
    "S-1\x1b[2J",  # an escape sequence clears a terminal
    17,
    True,
]


@pytest.mark.parametrize(("command", "key"), [("new_shoe", "shoe_id"), ("betting_open", "round_id")])
@pytest.mark.parametrize("value", IDS, ids=repr)
def test_the_validator_refuses_the_ids_a_request_may_not_carry(command: str, key: str, value: object) -> None:
    """One rule for ids, whether a command comes through the request models or straight in."""
    with pytest.raises(RequestError):
        parse_request(command, json.dumps({key: value}).encode())
    with pytest.raises(CommandRejected, match=key):
        Validator("T1").handle(Command(1.0, command, {key: value}))


def test_the_longest_id_a_request_may_carry_is_taken_both_ways() -> None:
    longest = "S" * MAX_ID_LENGTH
    assert parse_request("new_shoe", json.dumps({"shoe_id": longest}).encode()).args == {"shoe_id": longest}
    (shoe,) = Validator("T1").handle(Command(1.0, "new_shoe", {"shoe_id": longest}))
    assert shoe.shoe_id == longest


def test_the_dealer_display_holds_a_dealer_id_to_the_same_length() -> None:
    page = (ROOT / "scannerd" / "display" / "static" / "index.html").read_text()
    (field,) = re.findall(r'<input id="dealer-input"[^>]*>', page)
    assert f'maxlength="{MAX_ID_LENGTH}"' in field
