"""The game server's client for the tables' MQTT contract; the guide is docs/client.md."""

from scannerd.client.anchors import keep_anchor
from scannerd.client.contract import Availability
from scannerd.client.table_client import (
    BrokerRefused,
    ClientHealth,
    Forged,
    Gap,
    LoginRefused,
    ProtocolRefused,
    RequestTimeout,
    TableClient,
)

__all__ = [
    "Availability",
    "BrokerRefused",
    "ClientHealth",
    "Forged",
    "Gap",
    "LoginRefused",
    "ProtocolRefused",
    "RequestTimeout",
    "TableClient",
    "keep_anchor",
]
