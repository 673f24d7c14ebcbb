"""The committed contract (docs/schema) is what the code publishes."""

import json
from pathlib import Path

import pytest

from scannerd.cli import main
from scannerd.commands.schema import Response, documents
from scannerd.contract.command_catalogue import COMMANDS
from scannerd.contract.requests import RequestError, parse_request
from scannerd.contract.topics import EVENT_KINDS, RETAINED_KINDS, STATE_TOPICS, Topics
from tests.support.broker import as_built, sample_events, the_other_kinds

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schema"


def test_committed_schemas_match_the_models() -> None:
    expected = documents()
    committed = {p.name: p.read_text(encoding="utf-8") for p in SCHEMA_DIR.glob("*.json")}
    stale = sorted(
        name for name in expected.keys() | committed.keys() if expected.get(name) != committed.get(name)
    )
    assert not stale, (
        f"docs/schema is out of date ({', '.join(stale)}): run `scannerd schema --out docs/schema`"
    )


def test_the_command_writes_every_document(tmp_path: Path) -> None:
    assert main(["schema", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == set(documents())


def test_without_a_directory_the_asyncapi_document_goes_to_stdout(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == documents()["asyncapi.json"]
    assert list(tmp_path.iterdir()) == [], "nothing written where it ran"


def test_a_place_the_command_cannot_write_to_is_one_line_and_status_2(tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("")
    assert main(["schema", "--out", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"schema: {tmp_path / 'file'}: File exists\n"


def test_asyncapi_describes_every_topic_with_the_delivery_the_publisher_uses() -> None:
    doc = json.loads(documents()["asyncapi.json"])
    assert doc["asyncapi"] == "3.0.0"
    topics = Topics("casino/tables", "{table_id}")
    events = as_built([*sample_events(1, 4, table_id="{table_id}"), *the_other_kinds(5, "{table_id}")])
    for event in events:
        message = topics.message(event)
        op = doc["operations"][f"publish_{event.kind}"]
        assert doc["channels"][event.kind]["address"] == message.topic
        assert op["bindings"]["mqtt"] == {
            "qos": message.qos,
            "retain": message.retain,
            "bindingVersion": "0.2.0",
        }
    assert {e.kind for e in events} == set(EVENT_KINDS)
    for name in STATE_TOPICS:
        assert doc["channels"][name]["address"] == topics.of(name)
        assert doc["operations"][f"publish_{name}"]["bindings"]["mqtt"]["retain"] is True
    for command in COMMANDS:
        op = doc["operations"][f"handle_{command}"]
        assert doc["channels"][f"request_{command}"]["address"] == topics.request(command)
        assert op["reply"]["channel"]["$ref"] == f"#/channels/response_{command}"
        from_pit = doc["operations"][f"handle_{command}_from_pit"]
        assert doc["channels"][f"pit_{command}"]["address"] == topics.request(command, "{user}")
        assert from_pit["reply"] == op["reply"]
    assert {"shoe", "dealer", "suspension"} == RETAINED_KINDS


def test_every_reference_in_the_asyncapi_document_resolves() -> None:
    doc = json.loads(documents()["asyncapi.json"])

    def refs(node: object) -> list[str]:
        if isinstance(node, dict):
            return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    for ref in refs(doc):
        node = doc
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]


def _route(doc: dict, topic: str) -> list[str]:
    """The channels whose address matches ``topic``: each ``{parameter}`` stands for one topic level."""
    levels = topic.split("/")
    found = []
    for key, ch in doc["channels"].items():
        parts = ch["address"].split("/")
        if len(parts) == len(levels) and all(
            p == t or (p.startswith("{") and p.endswith("}")) for p, t in zip(parts, levels, strict=True)
        ):
            found.append(key)
    return found


def test_a_client_generated_from_the_document_routes_and_validates_a_refused_unknown_command() -> None:
    """The table answers a command it does not know on ``response/<that command>``: the document
    declares that channel, and its message's schema is the answer's."""
    doc = json.loads(documents()["asyncapi.json"])
    topics = Topics("casino/tables", "T1")
    with pytest.raises(RequestError) as refused:
        parse_request("frobnicate", b'{"transaction": 7}')
    answer = refused.value.response()
    assert _route(doc, topics.request("frobnicate")) == ["request_other"]
    assert _route(doc, topics.response("frobnicate")) == ["response_other"]
    (message,) = doc["channels"]["response_other"]["messages"].values()
    assert doc["components"]["messages"][message["$ref"].rsplit("/", 1)[1]]["payload"] == {
        "$ref": "#/components/schemas/Response"
    }
    assert answer.status == "error" and answer.transaction == 7
    assert Response.model_validate(answer.model_dump(mode="json")).model_dump() == answer.model_dump()
    for command in COMMANDS:  # a known command routes to its own channel and to the generic one only
        assert _route(doc, topics.response(command)) == [f"response_{command}", "response_other"]


def test_the_answers_data_is_declared_as_the_tables_state() -> None:
    doc = json.loads(documents()["asyncapi.json"])
    data = doc["components"]["schemas"]["Response"]["properties"]["data"]
    assert {"$ref": "#/components/schemas/TableState"} in data["anyOf"]
    state = doc["components"]["schemas"]["TableState"]
    assert {"table_id", "seq", "link_up", "shoe", "round", "alerts"} <= set(state["required"])
    assert state["properties"]["alerts"]["items"] == {"$ref": "#/components/schemas/AlertEvent"}
