"""A refused login ends the tools a person runs against the broker (``scannerd pit``, ``scannerd watch``).

The table client retries a refused connection like any other, with a log line
each time: right for a server that must come back once its credentials are
put right. A person who typed a wrong password wants to be told once, with
the broker and the user named, and to get the prompt back.
"""

from __future__ import annotations

import threading
from typing import Any

import paho.mqtt.client as mqtt

from scannerd.client.table_client import TableClient

LOGIN_REFUSALS = frozenset(
    {"Bad user name or password", "Not authorized", "Banned", "Bad authentication method"}
)
"""The broker's answers that name who is connecting as the fault (MQTT 3.1.1 and 5 alike), not its load."""


class LoginRefused(ConnectionError):
    """The broker will not have this user: retrying the same login cannot help."""


class AttendedClient(TableClient):
    """A :class:`TableClient` that stops at a refused login instead of retrying it.

    ``refused`` is set, with the reason in ``refusal``, the moment the broker
    refuses; ``start`` with a timeout raises it at once rather than waiting
    the timeout out. Any other failure (no broker, a broker too busy) is
    retried as the table client does.
    """

    def __init__(self, host: str, port: int = 1883, *, username: str | None = None, **kwargs: Any) -> None:
        super().__init__(host, port, username=username, **kwargs)
        self.username = username
        self.refusal: LoginRefused | None = None
        self.refused = threading.Event()

    def start(self, timeout: float | None = 10.0) -> None:
        super().start(timeout)
        if self.refusal is not None:
            self.stop()
            raise self.refusal

    def _on_connect(self, client: mqtt.Client, ud: Any, flags: Any, reason: Any, props: Any) -> None:
        if not (reason.is_failure and str(reason) in LOGIN_REFUSALS):
            super()._on_connect(client, ud, flags, reason, props)
            return
        who = f"user {self.username!r}" if self.username else "a login with no user name"
        self.refusal = LoginRefused(f"broker {self.host}:{self.port} refused {who}: {reason}")
        client.disconnect()  # no retry: the same login would be refused again
        self.refused.set()
        self._subscribed.set()  # wakes a start() waiting for the subscription, which will never come
