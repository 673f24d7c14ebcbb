"""The game server's client for the tables' MQTT contract; the guide is docs/client.md."""

from scannerd.client.contract import Availability
from scannerd.client.table_client import Gap, RequestTimeout, TableClient

__all__ = ["Availability", "Gap", "RequestTimeout", "TableClient"]
