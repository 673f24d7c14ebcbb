"""A Dragon Tiger table and a No Commission table, end to end, with a dealer who makes mistakes.

The whole path each game takes at a real table: the simulated shoe on a real pty, the daemon
reading it through its driver, Mosquitto between it and the game server's stand-in that runs
the betting, and the dealer display in headless Chromium. The dealer's own rules (not the
daemon's) say what each round's result must be; the game server must get every round with
its game's sides and facts, and the dealer's screen must name the sides and count the hands.
"""

from __future__ import annotations

import json
import random
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from scannerd.contract.events import RoundEvent
from simulators.actions import Step, Unplug
from simulators.feeder import Feeder
from simulators.game_server import GameServer as BettingServer
from simulators.registry import make_device
from simulators.scenario import parse
from tests.support.broker import Broker
from tests.support.browser import js, open_page, text, wait_for
from tests.support.process import live_table

GAMES = {
    "dragon_tiger": ("house game=dragon_tiger burn=none", ("dragon", "tiger")),
    "no_commission": ("house commission=no_commission burn=none", ("player", "banker")),
}


def rounds(server: Any, phase: str | None = None) -> list[dict[str, Any]]:
    out = [json.loads(m.payload) for m in server.messages("/round")]
    return [r for r in out if phase is None or r["phase"] == phase]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("game", GAMES)
def test_a_table_of_each_game_deals_a_careless_dealers_rounds_to_the_game_server_and_the_screen(
    browser: Any, tmp_path: Path, mosquitto: Broker, game: str
) -> None:
    house, sides = GAMES[game]
    scenario = parse(f"seed 5\n{house}\nerror-rate 0.3\nunplug-seconds 0.3\nshoe\nplay 16")
    betting = BettingServer(mosquitto.host, mosquitto.port, "T1", betting_time=0.0, round_wait=3.0)
    expected: list[str] = []
    with (
        closing(make_device("framed", random.Random(scenario.seed), link=tmp_path / "shoe-1")) as device,
        live_table(
            tmp_path,
            mosquitto,
            "framed",
            channel=device.channel,
            in_process=True,
            rules=scenario.rules_for(device.reports_cut).model_dump(),
            display={"enabled": True, "listen": "127.0.0.1:0"},
        ) as table,
    ):
        server, daemon = table.server, table.daemon
        assert daemon is not None and daemon.display is not None
        server.wait_online("casino/tables/T1")
        open_page(browser, daemon.display.url)
        betting.start()
        try:
            ends = [0]

            def after(step: Step) -> None:
                """A dealer who looks at the table before the next card, as at a real table."""
                if isinstance(step.action, Unplug):
                    server.wait_for(lambda ms: any(b"DEVICE_RECONNECTED" in m.payload for m in ms), 30)
                if step.expect.round_end:
                    if step.expect.winner:
                        expected.append(step.expect.winner)
                    ends[0] += 1
                    server.wait_for(
                        lambda ms: (
                            len([r for r in rounds(server) if r["phase"] in ("complete", "void")]) >= ends[0]
                        ),
                        30,
                    )

            dealer = scenario.dealer(device_reports_cut=device.reports_cut, pace=0.0)
            Feeder(device, on_command=betting.perform, after=after).run(scenario.steps(dealer))
        finally:
            betting.stop()

        complete = rounds(server, "complete")
        assert [r["winner"] for r in complete] == expected and len(expected) >= 8
        for event in complete:
            parsed = RoundEvent.model_validate(event)
            assert parsed.facts is not None and parsed.times is not None
            assert all(getattr(parsed, side) is not None for side in sides)
        codes = {json.loads(m.payload)["code"] for m in server.messages("/alert")}
        assert len(codes & {"CARD_BEFORE_BETS_CLOSED", "EXTRA_CARD", "SHORT_DEAL", "UNREADABLE_CARD"}) >= 2

        names = "[...document.querySelectorAll('.hand h2')].map((h) => h.textContent)"
        wait_for(browser, lambda b: js(b, names) == [s.upper() for s in sides], 10, "the game's sides")
        shoe = [r for r in complete if r["shoe_id"] == complete[-1]["shoe_id"]]
        wait_for(browser, lambda b: text(b, "count-hands") == str(len(shoe)), 10, "the shoe's hands counted")
