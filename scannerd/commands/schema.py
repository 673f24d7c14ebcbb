"""``scannerd schema``: write the MQTT contract (JSON Schemas and an AsyncAPI 3 document) from the models.

The documents are generated, never edited: the pydantic models are the
contract, and a test fails when the committed ``docs/schema`` drifts from
them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from scannerd import __version__
from scannerd.contract.command_catalogue import COMMANDS
from scannerd.contract.events import (
    AlertEvent,
    AnchorEvent,
    CardEvent,
    ConfigEvent,
    DealerEvent,
    DeckCheckEvent,
    RevealEvent,
    RoundEvent,
    ShoeEvent,
    SuspensionEvent,
)
from scannerd.contract.payloads import DevicePayload, HealthPayload, StatusPayload
from scannerd.contract.requests import Response as SentResponse
from scannerd.contract.table_state import TableState
from scannerd.contract.topics import DEFAULT_PREFIX, RETAINED_KINDS

DRAFT = "https://json-schema.org/draft/2020-12/schema"
TABLE_PARAM = {"table_id": {"description": "The table's id (config [table] id); one topic tree per table."}}
OTHER_COMMAND = {
    "command": {
        "description": "Any last level that names none of the commands above: the table answers it on "
        "the response topic of the same name, with status 'error' naming the commands it knows."
    }
}
PIT_USER = {
    "user": {
        "description": "The broker user the pit logged in as: the broker's ACL lets only that user "
        "publish here, and the table records it as who acted."
    }
}
PIT_REQUEST = "The same request from a pit view, which the table records as taken by the pit's broker user."
OTHER_REQUEST = {
    "type": "object",
    "description": "Whatever was sent; only a usable 'transaction' is read from it, to be echoed.",
}

# topic name under the table -> (payload model, retained, what the topic is for)
PUBLISHED: dict[str, tuple[type[BaseModel], bool, str]] = {
    "card": (CardEvent, "card" in RETAINED_KINDS, "Every physical card drawn, with where it went."),
    "round": (RoundEvent, "round" in RETAINED_KINDS, "A round changed phase; results once complete."),
    "alert": (AlertEvent, "alert" in RETAINED_KINDS, "Misdeals and faults, and their acknowledgement."),
    "shoe": (ShoeEvent, "shoe" in RETAINED_KINDS, "The shoe's state, after every change and every round."),
    "dealer": (DealerEvent, "dealer" in RETAINED_KINDS, "Who is dealing: a dealer signed in, or out."),
    "anchor": (
        AnchorEvent,
        "anchor" in RETAINED_KINDS,
        "A recording the table sealed: keep it, so `scannerd verify --anchors` can prove none is missing.",
    ),
    "reveal": (
        RevealEvent,
        "reveal" in RETAINED_KINDS,
        "Squeeze tables: held-back cards the screens may now show face up.",
    ),
    "suspension": (
        SuspensionEvent,
        "suspension" in RETAINED_KINDS,
        "The table stopped after a malfunction until a supervisor resumes it, and its resumption.",
    ),
    "config": (
        ConfigEvent,
        "config" in RETAINED_KINDS,
        "The table started under another configuration than at its last start: the keys that changed.",
    ),
    "deck_check": (
        DeckCheckEvent,
        "deck_check" in RETAINED_KINDS,
        "A shoe counted at its end: the count begun, then the receipt of cards missing and surplus.",
    ),
    "status": (
        StatusPayload,
        True,
        "Availability: 'online' on connect; 'offline' on a clean stop and as the MQTT last will.",
    ),
    "device": (DevicePayload, True, "The dealing-shoe device, republished when it changes."),
    "health": (HealthPayload, True, "The link's counters, at an interval and on connect."),
}


# The response as documented: the table builds ``data`` as plain data (``Validator.state``), so the
# response it sends carries a dict; the documents say what that dict is.
Response = create_model(
    "Response",
    __base__=SentResponse,
    __doc__=SentResponse.__doc__,
    data=(TableState | None, Field(None, description=SentResponse.model_fields["data"].description)),
)


def _dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _schema(model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
    return {"$schema": DRAFT, **model.model_json_schema(mode=mode)}


def documents() -> dict[str, str]:
    """File name -> file text of every document under docs/schema."""
    docs = {
        f"{name}.json": _dump(_schema(model, "serialization")) for name, (model, _, _) in PUBLISHED.items()
    }
    for command, model in COMMANDS.items():
        docs[f"request-{command}.json"] = _dump(_schema(model, "validation"))
    docs["response.json"] = _dump(_schema(Response, "serialization"))
    docs["asyncapi.json"] = _dump(asyncapi())
    return docs


def asyncapi() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (m, "serialization") for m, _, _ in PUBLISHED.values()
    ]
    models += [(m, "validation") for m in COMMANDS.values()]
    models.append((Response, "serialization"))
    _, defs = models_json_schema(models, ref_template="#/components/schemas/{model}")
    schemas = defs["$defs"]
    doc = _Channels()
    for topic, (model, retained, description) in PUBLISHED.items():
        ref = doc.channel(topic, topic, model.__name__, description)
        doc.operations[f"publish_{topic}"] = {
            "action": "send",
            "channel": {"$ref": f"#/channels/{topic}"},
            "messages": [ref],
            "bindings": {"mqtt": {"qos": 1, "retain": retained, "bindingVersion": "0.2.0"}},
        }
    for command, model in COMMANDS.items():
        doc.command(command, model)
    schemas["OtherRequest"] = OTHER_REQUEST
    doc.other()
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "scannerd: a baccarat table's events and requests",
            "version": __version__,
            "description": f"Every table publishes under {DEFAULT_PREFIX}/{{table_id}} (the prefix is the "
            "[mqtt] prefix setting). Events carry a seq that strictly increases per table for the life of "
            "the installation: drop any event whose seq is not above the highest seen. See docs/mqtt.md.",
        },
        "defaultContentType": "application/json",
        "channels": doc.channels,
        "operations": doc.operations,
        "components": {"messages": doc.messages, "schemas": schemas},
    }


class _Channels:
    """The AsyncAPI document's channels, operations and messages, made together: each channel
    names its message, each operation its channel."""

    def __init__(self) -> None:
        self.channels: dict[str, Any] = {}
        self.operations: dict[str, Any] = {}
        self.messages: dict[str, Any] = {}

    def channel(self, key: str, address: str, name: str, description: str) -> dict[str, Any]:
        """A channel with one message, whose payload is the schema ``name``."""
        self.messages[name] = {
            "name": name,
            "title": name,
            "contentType": "application/json",
            "payload": {"$ref": f"#/components/schemas/{name}"},
        }
        self.channels[key] = {
            "address": f"{DEFAULT_PREFIX}/{{table_id}}/{address}",
            "description": description,
            "parameters": TABLE_PARAM,
            "messages": {name: {"$ref": f"#/components/messages/{name}"}},
        }
        return {"$ref": f"#/channels/{key}/messages/{name}"}

    def command(self, command: str, model: type[BaseModel]) -> None:
        """A command's request (from the game server and from a pit) and its answer."""
        req = self.channel(f"request_{command}", f"request/{command}", model.__name__, model.__doc__ or "")
        resp = self.channel(
            f"response_{command}",
            f"response/{command}",
            "Response",
            f"The answer to every {command} request.",
        )
        pit = self.channel(f"pit_{command}", f"request/{command}/pit/{{user}}", model.__name__, PIT_REQUEST)
        self.channels[f"pit_{command}"]["parameters"] = {**TABLE_PARAM, **PIT_USER}
        for key, ref in ((f"handle_{command}", req), (f"handle_{command}_from_pit", pit)):
            self.operations[key] = {
                "action": "receive",
                "channel": {"$ref": ref["$ref"].split("/messages/")[0]},
                "messages": [ref],
                "bindings": {"mqtt": {"qos": 1, "retain": False, "bindingVersion": "0.2.0"}},
                "reply": {"channel": {"$ref": f"#/channels/response_{command}"}, "messages": [resp]},
            }

    def other(self) -> None:
        """A command the table does not know, and its refusal."""
        req = self.channel("request_other", "request/{command}", "OtherRequest", OTHER_REQUEST["description"])
        resp = self.channel(
            "response_other", "response/{command}", "Response", "The refusal of a command not known."
        )
        for key in ("request_other", "response_other"):
            self.channels[key]["parameters"] = {**TABLE_PARAM, **OTHER_COMMAND}
        self.operations["refuse_other"] = {
            "action": "receive",
            "channel": {"$ref": "#/channels/request_other"},
            "messages": [req],
            "bindings": {"mqtt": {"qos": 1, "retain": False, "bindingVersion": "0.2.0"}},
            "reply": {"channel": {"$ref": "#/channels/response_other"}, "messages": [resp]},
        }


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in documents().items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write every document into DIR (the repository's is docs/schema); "
        "without it, the AsyncAPI document, which holds every schema, goes to stdout",
    )


def run(args: argparse.Namespace) -> int:
    if args.out is None:
        sys.stdout.write(documents()["asyncapi.json"])
        return 0
    try:
        written = write(args.out)
    except OSError as exc:
        print(f"schema: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
