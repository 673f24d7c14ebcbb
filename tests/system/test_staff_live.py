"""Who did what, at a live table: staff PINs at the dealer display, a lockout, an acknowledgement
with its staff id, and a table suspended after a malfunction that only a supervisor clears.

A real daemon (in the test's process, where the test plays the game server), a framed shoe on a
pty, Mosquitto, the staff list written by ``scannerd staff``, and the page in Chromium.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from drivers.events import DeviceCard
from scannerd.recording.replay import replay
from tests.support.broker import Broker, wait_until
from tests.support.browser import action, banners, open_page, text, wait_for
from tests.support.process import LiveTable, live_table

STAFF = {"D-1": ("dealer", "1111"), "D-2": ("dealer", "2222"), "S-1": ("supervisor", "9999")}
EVENTS = ("card", "round", "alert", "shoe", "dealer", "suspension")


def staff_list(path: Path) -> Path:
    """The list as the house writes it: ``scannerd staff add``, the PIN on standard input."""
    path.parent.mkdir(mode=0o750, exist_ok=True)
    for staff_id, (role, pin) in STAFF.items():
        add = [sys.executable, "-m", "scannerd", "staff", "--file", str(path), "add", staff_id]
        done = subprocess.run(
            [*add, "--role", role], input=pin + "\n", capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
    assert not any(pin in path.read_text() for _, pin in STAFF.values())  # hashes, never a PIN
    return path


@contextmanager
def staffed_table(tmp_path: Path, broker: Broker, **rules: Any) -> Iterator[LiveTable]:
    """Table BAC-09 with a staff list, recording, its display on a free port; the suspension the
    house gets by default unless ``rules`` say otherwise."""
    with live_table(
        tmp_path,
        broker,
        table_id="BAC-09",
        in_process=True,
        rules={"burn": "none", "decks": 1, "suspend_on": None, **rules},
        display={"enabled": True, "listen": "127.0.0.1:0"},
        staff={"file": str(staff_list(tmp_path / "staff" / "staff.json"))},
        record={"dir": str(tmp_path / "recordings")},
    ) as table:
        daemon = table.daemon
        assert daemon is not None and table.shoe is not None
        wait_until(lambda: daemon.reader.link_up, 10, "the shoe to open")
        table.server.wait_online("casino/tables/BAC-09")  # a request before it would reach nobody
        yield table


def command(table: LiveTable, name: str, **args: Any) -> dict[str, Any]:
    """The game server's request, over the broker; its answer."""
    server = table.server
    transaction = f"{name}-{len(server.messages('/response/' + name))}"
    server.request(f"casino/tables/BAC-09/request/{name}", {"transaction": transaction, **args})
    server.wait_for(lambda ms: any(json.loads(m.payload).get("transaction") == transaction for m in ms
                                   if m.topic.endswith("/response/" + name)))  # fmt: skip
    return next(p for p in table.server.payloads("/response/" + name) if p["transaction"] == transaction)


def ms_status(messages: list[Any]) -> list[Any]:
    return [m for m in messages if m.topic.endswith("/status")]


def published(table: LiveTable, kind: str) -> list[dict[str, Any]]:
    return table.server.payloads(f"/{kind}")


def sign_in(browser: Any, dealer_id: str, pin: str) -> str:
    """Type the id and PIN into the display's sign-in form; the error it shows ("" once signed in)."""
    if browser.find_element("id", "sign-in").get_attribute("hidden") is not None:
        browser.find_element("id", "dealer").click()
    browser.find_element("id", "dealer-input").clear()
    browser.find_element("id", "dealer-input").send_keys(dealer_id)
    browser.find_element("id", "pin-input").send_keys(pin)
    before = browser.execute_script("return window.scannerdDisplay.views")
    browser.find_element("id", "sign-in-ok").click()
    wait_for(
        browser,
        lambda b: text(b, "sign-in-error") or b.find_element("id", "sign-in").get_attribute("hidden"),
        10,
        f"the answer to {dealer_id}'s sign-in",
    )
    assert before is not None
    return text(browser, "sign-in-error")


def replayed_as_published(table: LiveTable) -> None:
    """The recording replays to exactly the events the table published: PIN verdicts and all."""
    assert table.daemon is not None
    table.daemon.stop()
    live = sorted(
        (m.payload for m in table.server.messages() if m.topic.rsplit("/", 1)[1] in EVENTS),
        key=lambda p: json.loads(p)["seq"],
    )
    files = sorted((table.config.parent / "recordings").glob("*.jsonl*"))
    again = [m.payload for f in files for m in replay(f) if m.topic.rsplit("/", 1)[1] in EVENTS]
    assert sorted(again, key=lambda p: json.loads(p)["seq"]) == live


def test_pins_at_the_display_a_lockout_and_an_acknowledgement_with_its_staff_id(browser, tmp_path, mosquitto):
    with staffed_table(tmp_path, mosquitto, ack_needs_pin=True, pin_attempts=5) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and daemon.display is not None and shoe is not None
        open_page(browser, daemon.display.url)
        status = json.loads(table.server.messages("/status")[-1].payload)
        assert status["staff_list"] is True

        assert sign_in(browser, "D-1", "1234") == "Not signed in: wrong staff id or PIN"
        assert sign_in(browser, "NOBODY", "1111") == "Not signed in: wrong staff id or PIN"  # no hint
        for _ in range(4):
            sign_in(browser, "D-1", "0000")
        table.server.wait_for(lambda ms: any(b"PIN_LOCKOUT" in m.payload for m in ms), 10)
        (lockout,) = [a for a in published(table, "alert") if a["code"] == "PIN_LOCKOUT"]
        assert lockout["severity"] == "warning" and "D-1" in lockout["message"]
        assert "locked" in sign_in(browser, "D-1", "1111")  # the right PIN, too late
        assert published(table, "dealer") == []  # nobody signed in by any of it
        assert banners(browser) == []  # the lockout is the pit's, not the dealer's

        assert sign_in(browser, "D-2", "2222") == ""
        table.server.wait_for(lambda ms: any(m.topic.endswith("/dealer") for m in ms), 10)
        (signed,) = published(table, "dealer")
        assert (signed["dealer_id"], signed["by"], signed["via"]) == ("D-2", "D-2", "display")
        wait_for(browser, lambda b: text(b, "dealer") == "DEALER D-2", 10, "the dealer's name")

        shoe.send(DeviceCard("7H"))  # no round: an extra card, a misdeal to acknowledge
        wait_for(browser, banners, 10, "the misdeal")
        banners(browser)[0].find_element("css selector", "button.ack").click()
        wait_for(browser, lambda b: b.find_element("id", "ack-pin").is_displayed(), 10, "the PIN form")
        browser.find_element("id", "ack-staff").send_keys("D-2")
        browser.find_element("id", "ack-pin-input").send_keys("2222")
        browser.find_element("id", "ack-pin-ok").click()
        wait_for(browser, lambda b: not banners(b), 10, "the banner to clear")
        acked = [a for a in published(table, "alert") if a["acknowledged"]]
        assert [(a["code"], a["by"], a["via"]) for a in acked] == [("EXTRA_CARD", "D-2", "display")]

        replayed_as_published(table)
    log = (tmp_path / "scannerd.log").read_text() if (tmp_path / "scannerd.log").exists() else ""
    assert not any(pin in log for _, pin in STAFF.values())


def test_a_suspended_table_refuses_betting_sets_cards_aside_and_only_a_supervisor_resumes_it(
    browser, tmp_path, mosquitto
):
    with staffed_table(tmp_path, mosquitto) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and daemon.display is not None and shoe is not None
        open_page(browser, daemon.display.url)
        for name in ("new_shoe", "betting_open", "betting_close"):
            assert command(table, name)["status"] == "ok"
        shoe.send(DeviceCard("AS"))
        shoe.send(DeviceCard("AS"))  # one deck: a second ace of spades is foreign, the round void
        table.server.wait_for(lambda ms: any(m.topic.endswith("/suspension") for m in ms), 10)
        (stopped,) = published(table, "suspension")
        assert (stopped["suspended"], stopped["cause"]) == (True, "FOREIGN_CARD")
        wait_for(browser, lambda b: b.find_element("id", "suspended").is_displayed(), 10, "SUSPENDED")
        assert "Foreign card" in text(browser, "suspended-why")
        assert action(browser) == "TABLE SUSPENDED - DO NOT DEAL"
        table.server.wait_for(lambda ms: "suspended" in json.loads(ms_status(ms)[-1].payload), 10)
        status = json.loads(ms_status(table.server.messages())[-1].payload)
        assert (status["state"], status["suspended"]["cause"]) == ("online", "FOREIGN_CARD")

        refused = command(table, "betting_open")
        assert refused["status"] == "error" and "suspended" in refused["error"]
        shoe.send(DeviceCard("KD"))  # the dealer draws anyway
        table.server.wait_for(lambda ms: any(b"CARD_WHILE_SUSPENDED" in m.payload for m in ms), 10)
        assert published(table, "card")[-1]["position"] == "discard"

        # A dealer's PIN does not clear it, at the display or named by the game server.
        browser.find_element("id", "resume-staff").send_keys("D-1")
        browser.find_element("id", "resume-pin").send_keys("1111")
        browser.find_element("id", "resume-reason").send_keys("looks fine to me")
        browser.find_element("id", "resume-ok").click()
        wait_for(browser, lambda b: "not a supervisor" in text(b, "resume-error"), 10, "the refusal")
        named = command(table, "resume", reason="cleared", supervisor_id="D-1")
        assert named["status"] == "error" and "not a supervisor" in named["error"]
        assert command(table, "resume", reason="cleared")["status"] == "error"  # nobody named

        for field in ("resume-staff", "resume-reason"):
            browser.find_element("id", field).clear()
        browser.find_element("id", "resume-staff").send_keys("S-1")
        browser.find_element("id", "resume-pin").send_keys("9999")
        browser.find_element("id", "resume-reason").send_keys("foreign card removed, shoe checked")
        browser.find_element("id", "resume-ok").click()
        wait_for(browser, lambda b: not b.find_element("id", "suspended").is_displayed(), 10, "resumed")
        resumed = published(table, "suspension")[-1]
        assert (resumed["suspended"], resumed["by"], resumed["via"]) == (False, "S-1", "display")
        assert (resumed["cause"], resumed["since"]) == (stopped["cause"], stopped["since"])
        assert resumed["reason"] == "foreign card removed, shoe checked"
        table.server.wait_for(lambda ms: "suspended" not in json.loads(ms_status(ms)[-1].payload), 10)
        assert command(table, "betting_open")["status"] == "ok"

        replayed_as_published(table)


def test_the_shoes_lid_opened_mid_hand_voids_it_and_suspends_the_table_until_a_supervisor_resumes(
    tmp_path, mosquitto
):
    """The simulated shoe reports its lid open while a hand is dealt, as a real one does with every
    heartbeat: a misdeal, the hand void, the table stopped; shut, the alert clears itself, and only a
    supervisor resumes. The recording replays every step to what was published."""
    with staffed_table(tmp_path, mosquitto) as table:
        shoe = table.shoe
        assert shoe is not None
        for name in ("new_shoe", "betting_open", "betting_close"):
            assert command(table, name)["status"] == "ok"
        shoe.send(DeviceCard("9H"))
        shoe.heartbeat()  # the lid shut: nothing new, nothing judged
        shoe.heartbeat(lid_open=True)
        table.server.wait_for(lambda ms: any(m.topic.endswith("/suspension") for m in ms), 10)
        (lid,) = [a for a in published(table, "alert") if a["code"] == "SHOE_LID_OPEN"]
        assert lid["severity"] == "misdeal" and not lid["acknowledged"]
        void = published(table, "round")[-1]
        assert (void["phase"], void["reason"]) == ("void", "SHOE_LID_OPEN")
        assert published(table, "suspension")[-1]["cause"] == "SHOE_LID_OPEN"
        shoe.heartbeat(lid_open=True)  # said again with every heartbeat: judged once
        shoe.heartbeat()  # shut again
        table.server.wait_for(lambda ms: any(json.loads(m.payload).get("cleared") for m in ms
                                             if m.topic.endswith("/alert")), 10)  # fmt: skip
        assert len([a for a in published(table, "alert") if a["code"] == "SHOE_LID_OPEN"]) == 2
        assert command(table, "betting_open")["status"] == "error"  # still suspended: a supervisor's
        assert command(table, "resume", reason="lid checked", supervisor_id="S-1")["status"] == "ok"
        assert command(table, "betting_open")["status"] == "ok"
        replayed_as_published(table)
