"""An MQTT broker inside the process, for the demo: nothing else to install or start.

It runs amqtt on its own thread and event loop, listening on loopback only.
A table in production talks to the casino's own broker; this one exists so
that ``scannerd demo`` works on a laptop with nothing but the package.

amqtt speaks MQTT 3.1.1 only, and reads a CONNECT as 3.1.1 before it looks
at the version: an MQTT 5 CONNECT's properties, read as the client id's
length, left it waiting for bytes that never come, and the client was told
nothing. So this listener reads each connection's protocol level first and
refuses any other version at once, as a 3.1.1 broker answers it; the rest
goes to amqtt as an external connection, those first bytes included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from functools import partial

from amqtt.adapters import ReaderAdapter, StreamWriterAdapter
from amqtt.broker import Broker

from scannerd.link.mqtt_settings import MqttVersion

START_TIMEOUT_S = 10.0
LISTENER = "default"
MQTT_311_LEVEL = 4
"""The protocol level of an MQTT 3.1.1 CONNECT (3.1 is 3, 5 is 5)."""
REFUSED_VERSION = bytes([0x20, 0x02, 0x00, 0x01])
"""CONNACK, "unacceptable protocol version": amqtt's own answer, which paho names for MQTT 5 clients too."""
HEAD_TIMEOUT_S = 10.0
"""How long a new connection has to say which version it speaks."""


class _Replayed(ReaderAdapter):
    """A connection's stream with the bytes already read from it put back in front, for amqtt."""

    def __init__(self, head: bytes, stream: asyncio.StreamReader) -> None:
        self._head = head
        self._stream = stream

    async def read(self, n: int = -1) -> bytes:
        if n == -1:
            data, self._head = self._head, b""
            return data + await self._stream.read(-1)
        data, self._head = self._head[:n], self._head[n:]
        return data + await self._stream.readexactly(n - len(data)) if len(data) < n else data

    def feed_eof(self) -> None:
        self._stream.feed_eof()


async def _connect_head(stream: asyncio.StreamReader) -> tuple[bytes, int]:
    """A CONNECT's bytes up to its protocol level, and the level (-1: not a CONNECT)."""
    head = await stream.readexactly(1)
    if head[0] >> 4 != 1:
        return head, -1
    while True:  # the remaining length: up to four bytes, the last without its top bit
        byte = await stream.readexactly(1)
        head += byte
        if not byte[0] & 0x80 or len(head) == 5:
            break
    size = await stream.readexactly(2)
    name = await stream.readexactly(int.from_bytes(size, "big"))
    level = await stream.readexactly(1)
    return head + size + name + level, level[0]


async def _handed_over(broker: Broker, stream: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A new connection to amqtt, unless it asks for a version amqtt would not answer in time."""
    try:
        head, level = await asyncio.wait_for(_connect_head(stream), HEAD_TIMEOUT_S)
    except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
        writer.close()
        return
    if level not in (-1, MQTT_311_LEVEL):  # not a CONNECT at all: amqtt says so itself
        with contextlib.suppress(ConnectionError):
            writer.write(REFUSED_VERSION)
            await writer.drain()
        writer.close()
        return
    await broker.external_connected(_Replayed(head, stream), StreamWriterAdapter(writer), LISTENER)


class EmbeddedBroker:
    """``start()`` returns once clients can connect to ``host:port``; ``stop()`` shuts it down."""

    protocol: MqttVersion = "3.1.1"
    """The only MQTT version amqtt speaks: a client asking for another is refused."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port  # 0 until started: then the one the OS chose
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mqtt-broker", daemon=True)
        self._broker: Broker | None = None
        self._server: asyncio.Server | None = None
        # amqtt logs every connection at INFO; the demo's own output is what the user reads.
        logging.getLogger("amqtt").setLevel(logging.WARNING)
        logging.getLogger("transitions").setLevel(logging.WARNING)

    def start(self) -> None:
        self._thread.start()
        config = {
            # Served by this listener's socket, not amqtt's (see the module's docstring).
            "listeners": {LISTENER: {"type": "external", "bind": f"{self.host}:{self.port}"}},
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }

        async def boot() -> tuple[Broker, asyncio.Server]:
            broker = Broker(config)
            await broker.start()
            server = await asyncio.start_server(partial(_handed_over, broker), self.host, self.port)
            return broker, server

        future = asyncio.run_coroutine_threadsafe(boot(), self._loop)
        self._broker, self._server = future.result(START_TIMEOUT_S)
        self.port = int(self._server.sockets[0].getsockname()[1])

    def stop(self) -> None:
        async def shut(broker: Broker, server: asyncio.Server) -> None:
            server.close()  # no new connections, then amqtt ends those it has
            await broker.shutdown()

        if self._broker is not None and self._server is not None:
            stopping = asyncio.run_coroutine_threadsafe(shut(self._broker, self._server), self._loop)
            stopping.result(START_TIMEOUT_S)
            self._broker = self._server = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
