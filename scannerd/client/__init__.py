"""The game server's client for the tables' MQTT contract; the guide is docs/client.md."""

from scannerd.client.anchors import keep_anchor
from scannerd.client.contract import Availability
from scannerd.client.table_client import ClientHealth, Forged, Gap, LoginRefused, RequestTimeout, TableClient

__all__ = [
    "Availability",
    "ClientHealth",
    "Forged",
    "Gap",
    "LoginRefused",
    "RequestTimeout",
    "TableClient",
    "keep_anchor",
]
