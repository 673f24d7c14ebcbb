"""Game-server requests: parsing (pure), running them on the validator, and the round trip over MQTT."""

import json
import threading
from collections.abc import Callable

import pytest

from scannerd.contract.requests import MAX_REQUEST_BYTES, Request, RequestError, Response, parse_request
from scannerd.contract.topics import encode_response
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn
from scannerd.core.table import execute
from scannerd.core.validator import Validator
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from tests.support.broker import Broker, GameServer, event_seqs, store

BASE = "casino/tables/T1"
TS = 1_700_000_000.0


def refused(command: str, payload: bytes) -> RequestError:
    with pytest.raises(RequestError) as info:
        parse_request(command, payload)
    return info.value


def test_a_good_request_keeps_its_arguments_and_transaction() -> None:
    req = parse_request("betting_open", b'{"round_id": "R-7", "transaction": "tx1"}')
    assert req == Request("betting_open", "tx1", {"round_id": "R-7"})
    assert parse_request("betting_close", b"") == Request("betting_close")
    assert parse_request("ack_alert", b'{"alert_id": 3, "transaction": 9}') == Request(
        "ack_alert", 9, {"alert_id": 3}
    )
    assert parse_request("void_round", b"{}").args == {}


@pytest.mark.parametrize(
    ("command", "payload", "text"),
    [
        ("new_shoe", b"{nope", "malformed JSON"),
        ("new_shoe", b"\xff\xfe", "not UTF-8"),
        ("new_shoe", b"[1, 2]", "must be a JSON object, not list"),
        ("explode", b"{}", "unknown command 'explode'"),
        ("ack_alert", b'{"alert_id": "5"}', "alert_id: Input should be a valid integer"),
        ("ack_alert", b'{"alert_id": true}', "alert_id: Input should be a valid integer"),
        ("ack_alert", b"{}", "alert_id: Field required"),
        ("betting_open", b'{"round_id": "   "}', "round_id: must not be blank"),
        ("betting_open", b'{"round_id": "' + b"x" * 65 + b'"}', "round_id: String should have at most 64"),
        ("betting_close", b'{"force": true}', "force: Extra inputs are not permitted"),
        ("get_state", b'{"transaction": [1]}', "transaction: must be a string"),
        ("new_shoe", b'{"shoe_id": "' + b"x" * MAX_REQUEST_BYTES + b'"}', "request too large"),
        # Within the size limit, yet beyond what Python's JSON parser takes without an exception of its own.
        ("new_shoe", b"[" * 5000 + b"]" * 5000, "malformed JSON"),
        ("ack_alert", b'{"alert_id": ' + b"9" * 5000 + b"}", "malformed JSON"),
    ],
)
def test_bad_requests_get_a_clear_text(command: str, payload: bytes, text: str) -> None:
    assert text in str(refused(command, payload))


@pytest.mark.parametrize(
    ("command", "payload", "text"),
    [
        ("new_shoe", b'{"shoe_id": "S\\u0000-1"}', "shoe_id: must not contain U+0000"),
        ("new_shoe", b'{"shoe_id": "S-\\u202e21"}', "U+202E (right-to-left override)"),
        ("betting_open", b'{"round_id": "R\\u200b1"}', "round_id: must not contain U+200B"),
        ("betting_open", b'{"round_id": "R1\\n"}', "round_id: must not contain U+000A"),
        ("void_round", b'{"reason": "dealer \\u001b[2Jerror"}', "reason: must not contain U+001B"),
    ],
)
def test_ids_and_texts_with_hidden_characters_are_refused(command: str, payload: bytes, text: str) -> None:
    assert text in str(refused(command, payload))


def test_an_id_may_be_any_visible_text() -> None:
    assert parse_request("new_shoe", '{"shoe_id": "Sabot 7 \u00e9t\u00e9"}'.encode()).args == {
        "shoe_id": "Sabot 7 \u00e9t\u00e9"
    }


def test_a_number_too_long_to_convert_is_said_in_plain_words() -> None:
    text = str(refused("ack_alert", b'{"alert_id": ' + b"9" * 5000 + b"}"))
    assert text == "malformed JSON: a number has more than 4300 digits"
    assert str(refused("new_shoe", b"[" * 5000 + b"]" * 5000)) == "malformed JSON: nested too deeply"


def test_a_transaction_no_answer_could_carry_is_refused_with_an_answer_that_can_be_sent() -> None:
    """JSON may spell half a surrogate pair (``\\ud800``); echoed, no answer could be written and the
    game server would hear nothing. Refused instead, without it, by the model and the fast path alike."""
    for command, payload in (
        ("get_state", b'{"transaction": "t\\ud800"}'),
        ("betting_close", b'{"transaction": "\\udfff"}'),
    ):
        err = refused(command, payload)
        said = (
            "transaction: must be text: half of a UTF-16 surrogate pair is not, and no answer could carry it"
        )
        assert str(err) == f"invalid request: {said}"
        assert err.transaction is None
        assert json.loads(encode_response(err.response()))["error"] == str(err)
    assert parse_request("get_state", b'{"transaction": "t\\ud83c\\udca1"}').transaction == "t\U0001f0a1"


def test_the_transaction_is_echoed_even_when_the_request_is_refused() -> None:
    err = refused("ack_alert", b'{"alert_id": "x", "transaction": "t-42"}')
    assert err.response() == Response(
        command="ack_alert", status="error", transaction="t-42", error=str(err), data=None
    )
    assert refused("explode", b'{"transaction": 5}').transaction == 5


def test_commands_run_on_the_validator_and_nonsense_is_rejected_without_changing_state() -> None:
    v = Validator("T1", HouseRules(burn="none"))
    resp, events = execute(parse_request("new_shoe", b'{"shoe_id": "S9"}'), v, TS)
    assert resp.status == "ok" and [e.kind for e in events] == ["shoe"]
    assert resp.data is not None and resp.data["shoe"]["shoe_id"] == "S9"

    before = v.snapshot()
    resp, events = execute(parse_request("betting_close", b'{"transaction": 1}'), v, TS + 1)
    assert (resp.status, resp.error, resp.transaction, events) == ("error", "betting is not open", 1, [])
    assert v.snapshot() == before

    resp, events = execute(parse_request("betting_open", b'{"round_id": "R1"}'), v, TS + 2)
    assert resp.status == "ok" and events[0].kind == "round"
    resp, events = execute(parse_request("get_state", b""), v, TS + 3)
    assert resp.status == "ok" and events == []
    assert resp.data is not None and resp.data["round"]["round_id"] == "R1"
    assert execute(parse_request("ack_alert", b'{"alert_id": 77}'), v, TS + 4)[0].error == "no open alert 77"


def test_only_get_state_answers_with_the_shoes_results() -> None:
    """A command's answer stays the same size all shoe long; the scoreboard is get_state's."""
    v = Validator("T1", HouseRules(burn="none"))
    execute(parse_request("new_shoe", b"{}"), v, TS)
    execute(parse_request("betting_open", b"{}"), v, TS + 1)
    execute(parse_request("betting_close", b"{}"), v, TS + 2)
    for i, card in enumerate(["9H", "2S", "KH", "3C"]):
        v.handle(CardDrawn(TS + 3 + i, card))
    opened, _ = execute(parse_request("betting_open", b"{}"), v, TS + 10)
    state, _ = execute(parse_request("get_state", b"{}"), v, TS + 11)
    assert opened.data is not None and "results" not in opened.data
    assert opened.data["round"]["phase"] == "betting" and opened.data["shoe"]["hands_dealt"] == 2
    assert state.data is not None and state.data["results"] == [
        {"winner": "player", "natural": True, "player_pair": False, "banker_pair": False}
    ]
    assert {
        k: value for k, value in state.data.items() if k not in ("results", "roads", "recall")
    } == opened.data
    assert [hand["winner"] for hand in state.data["recall"]] == ["player"]  # the last hands: get_state's
    assert (
        "roads" not in opened.data
        and "recall" not in opened.data
        and state.data["roads"]["big"] == [("P", None, None, None, None, None)]
    )


class Table:
    """The daemon's part in miniature: a validator behind a lock, events to the outbox with its snapshot."""

    def __init__(self, make_publisher: Callable[..., Publisher], broker: Broker) -> None:
        self.validator = Validator("T1", HouseRules(burn="none"))
        self.lock = threading.Lock()
        self.publisher = make_publisher(
            MqttSettings(host=broker.host, port=broker.port), on_request=self.handle
        )

    def handle(self, request: Request) -> Response:
        with self.lock:
            response, events = execute(request, self.validator, TS)
            store(self.publisher, events, self.validator.snapshot())
        return response


@pytest.fixture
def table(make_publisher: Callable[..., Publisher], mosquitto: Broker) -> Table:
    return Table(make_publisher, mosquitto)


def test_every_bad_request_gets_an_error_and_the_next_good_one_works(mosquitto: Broker, table: Table) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/response/+", f"{BASE}/round", f"{BASE}/shoe", f"{BASE}/status"])
    gs.wait_online(BASE)
    sent = [
        ("new_shoe", {"shoe_id": "S1", "transaction": 1}, "ok"),
        ("new_shoe", b"{not json", "error"),
        ("betting_open", {"round_id": "R1", "transaction": 2}, "ok"),
        ("launch_rockets", {"transaction": 3}, "error"),
        ("betting_open", {"round_id": "R2", "transaction": 4}, "error"),  # already open
        ("ack_alert", {"alert_id": "one", "transaction": 5}, "error"),
        ("void_round", {"reason": "x" * (MAX_REQUEST_BYTES + 1), "transaction": 6}, "error"),
        ("betting_close", b"[]", "error"),
        ("betting_close", {"transaction": 7}, "ok"),
        ("betting_close", {"transaction": 8}, "error"),  # no longer open
        ("get_state", {"transaction": 9}, "ok"),
    ]
    for command, payload, _ in sent:
        gs.request(f"{BASE}/request/{command}", payload)
    gs.wait_for(lambda got: len([m for m in got if "/response/" in m.topic]) >= len(sent))

    answers = [
        (m.topic.rsplit("/", 1)[1], json.loads(m.payload)) for m in gs.messages() if "/response/" in m.topic
    ]
    assert [(cmd, a["status"]) for cmd, a in answers] == [(cmd, status) for cmd, _, status in sent]
    assert all(a["error"] for _, a in answers if a["status"] == "error")
    assert [a["transaction"] for _, a in answers] == [1, None, 2, 3, 4, 5, None, None, 7, 8, 9]
    assert answers[-1][1]["data"]["round"] == {
        **answers[-1][1]["data"]["round"],
        "round_id": "R1",
        "phase": "dealing",
    }
    # The events the accepted commands caused went out like any other, in order.
    gs.wait_for(lambda got: len(event_seqs(got)) >= 3)
    assert event_seqs(gs.messages()) == [1, 2, 3]
    health = table.publisher.health()
    assert (health["requests"], health["rejected_requests"]) == (11, 7)
    gs.close()


def test_a_retained_request_is_not_run_again_at_each_connect(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/response/+"])
    gs.request(f"{BASE}/request/new_shoe", {"transaction": "stale"}, retain=True)
    t = Table(make_publisher, mosquitto)
    gs.wait_for(lambda got: len(got) >= 1)
    answer = gs.payloads()[0]
    assert answer["status"] == "error" and "retained" in answer["error"]
    assert answer["transaction"] == "stale"
    assert t.validator.shoe is None
    gs.close()


def test_a_request_published_retained_while_the_table_listens_is_not_run(
    mosquitto: Broker, table: Table
) -> None:
    """The broker clears the retain flag on live delivery: the table must still see it was retained."""
    gs = GameServer(mosquitto, [f"{BASE}/response/+", f"{BASE}/status"])
    gs.wait_online(BASE)
    gs.request(f"{BASE}/request/new_shoe", {"transaction": "stale"}, retain=True)
    gs.request(f"{BASE}/request/get_state", {"transaction": "after"})
    gs.wait_for(lambda got: len([m for m in got if "/response/" in m.topic]) >= 2)
    answer = gs.payloads("/response/new_shoe")[0]
    assert answer["status"] == "error" and "retained" in answer["error"]
    assert answer["transaction"] == "stale"
    assert table.validator.shoe is None
    gs.close()


def test_a_failing_handler_is_answered_and_the_table_keeps_listening(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    def handler(request: Request) -> Response:
        if request.command == "new_shoe":
            raise RuntimeError("disk on fire")
        return Response(command=request.command, status="ok", transaction=request.transaction)

    pub = make_publisher(MqttSettings(host=mosquitto.host, port=mosquitto.port), on_request=handler)
    gs = GameServer(mosquitto, [f"{BASE}/response/+", f"{BASE}/status"])
    gs.wait_online(BASE)
    gs.request(f"{BASE}/request/new_shoe", {"transaction": 1})
    gs.request(f"{BASE}/request/get_state", {"transaction": 2})
    gs.wait_for(lambda got: len([m for m in got if "/response/" in m.topic]) >= 2)
    first, second = [json.loads(m.payload) for m in gs.messages() if "/response/" in m.topic]
    assert (first["status"], first["error"]) == ("error", "internal error: disk on fire")
    assert (second["status"], second["transaction"]) == ("ok", 2)
    assert pub.alive
    gs.close()
