"""An MQTT broker inside the process, for the demo: nothing else to install or start.

It runs amqtt on its own thread and event loop, listening on loopback only.
A table in production talks to the casino's own broker; this one exists so
that ``scannerd demo`` works on a laptop with nothing but the package.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading

from amqtt.broker import Broker

START_TIMEOUT_S = 10.0


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class EmbeddedBroker:
    """``start()`` returns once clients can connect to ``host:port``; ``stop()`` shuts it down."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or _free_port(host)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mqtt-broker", daemon=True)
        self._broker: Broker | None = None
        # amqtt logs every connection at INFO; the demo's own output is what the user reads.
        logging.getLogger("amqtt").setLevel(logging.WARNING)
        logging.getLogger("transitions").setLevel(logging.WARNING)

    def start(self) -> None:
        self._thread.start()
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }

        async def boot() -> Broker:
            broker = Broker(config)
            await broker.start()
            return broker

        self._broker = asyncio.run_coroutine_threadsafe(boot(), self._loop).result(START_TIMEOUT_S)

    def stop(self) -> None:
        if self._broker is not None:
            asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop).result(START_TIMEOUT_S)
            self._broker = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
