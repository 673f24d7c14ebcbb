"""A real Mosquitto for the tests, and a game-server client that records what arrives.

Each broker gets its own directory, config and free port; ``stop``/``start``
keep the port so a client's reconnect finds the broker again. The TLS
variant makes a throwaway CA with server and client certificates (openssl
CLI) and requires a client certificate.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from scannerd.contract.events import (
    AlertEvent,
    AnchorEvent,
    CardEvent,
    ConfigEvent,
    DealerEvent,
    DeckCheckEvent,
    Event,
    EventData,
    RevealEvent,
    RoundEvent,
    ShoeEvent,
    SuspensionEvent,
)
from scannerd.contract.requests import Request, Response
from scannerd.contract.topics import EVENT_KINDS

if TYPE_CHECKING:
    from scannerd.link.publisher import Publisher

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
SHIPPED_CONF = Path(__file__).resolve().parents[2] / "systemd" / "mosquitto-scannerd.conf.example"
SHIPPED_LIMITS = ("max_queued_messages ", "persistent_client_expiration ")
"""The shipped broker's limits on what it keeps for a client away: every test broker runs them."""
START_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], bool], timeout: float, what: str = "condition") -> None:
    """Poll ``predicate`` until true; the timeout only bounds a hang, it asserts nothing about speed."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


# --------------------------------------------------------------------------- TLS material


@dataclass(frozen=True)
class Tls:
    dir: Path
    ca: Path
    server_cert: Path
    server_key: Path

    def client(self, name: str) -> tuple[Path, Path]:
        """Certificate and key for a client whose certificate CN is ``name``."""
        return self.dir / f"{name}.crt", self.dir / f"{name}.key"


def _openssl(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=60)


def _issue(d: Path, ca: str, name: str, cn: str, ext: str | None = None) -> None:
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{name}.key", cwd=d)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={cn}", "-out", f"{name}.csr", cwd=d)
    args: list[str | Path] = ["x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key"]
    args += ["-CAcreateserial", "-days", "2", "-out", f"{name}.crt"]
    if ext:
        (d / f"{name}.ext").write_text(ext)
        args += ["-extfile", f"{name}.ext"]
    _openssl(*args, cwd=d)


def _self_signed(d: Path, name: str, cn: str) -> None:
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{name}.key", cwd=d)
    _openssl(
        "req",
        "-x509",
        "-new",
        "-key",
        f"{name}.key",
        "-subj",
        f"/CN={cn}",
        "-days",
        "2",
        "-out",
        f"{name}.crt",
        cwd=d,
    )


def make_tls(d: Path, clients: tuple[str, ...] = ("T1",)) -> Tls:
    """A CA, a server certificate for localhost/127.0.0.1, client certificates, and one from a stranger CA."""
    d.mkdir(parents=True, exist_ok=True)
    _self_signed(d, "ca", "scannerd test CA")
    _issue(d, "ca", "server", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in clients:
        _issue(d, "ca", name, name)
    _self_signed(d, "stranger-ca", "some other CA")
    _issue(d, "stranger-ca", "stranger", "stranger")
    return Tls(d, d / "ca.crt", d / "server.crt", d / "server.key")


# --------------------------------------------------------------------------- the broker


def shipped_limits() -> list[str]:
    return [line for line in SHIPPED_CONF.read_text().splitlines() if line.startswith(SHIPPED_LIMITS)]


@dataclass
class Broker:
    """One Mosquitto process; ``extra`` is appended to the listener's config."""

    dir: Path
    tls: Tls | None = None
    persistence: bool = False
    extra: str = "allow_anonymous true\n"
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> str:
        path = self.dir / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _config(self) -> str:
        lines = [
            "user root" if os.geteuid() == 0 else "",
            "per_listener_settings false",
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.dir}/",
            "log_dest stderr",
            "log_type all",
            *shipped_limits(),
            f"listener {self.port} {self.host}",
        ]
        if self.tls:
            lines += [
                f"cafile {self.tls.ca}",
                f"certfile {self.tls.server_cert}",
                f"keyfile {self.tls.server_key}",
                "require_certificate true",
            ]
        return "\n".join(lines) + "\n" + self.extra

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "mosquitto.conf"
        conf.write_text(self._config())
        logf = (self.dir / "mosquitto.log").open("ab")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=logf, stderr=logf)
        logf.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self.proc.returncode}:\n{self.log[-3000:]}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"mosquitto did not listen on {self.port}:\n{self.log[-3000:]}"
                    ) from None
                time.sleep(0.02)

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): with persistence on, sessions and queued messages are saved."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


# --------------------------------------------------------------------------- a game-server client


class GameServer:
    """A consumer: subscribes, records every message, can send requests.

    ``client_id`` gives it a persistent session, so messages published while
    it is away (broker restart) are queued for it by the broker.
    """

    def __init__(
        self,
        broker: Broker,
        topics: list[str],
        *,
        client_id: str = "",
        tls_client: str | None = None,
        username: str | None = None,
        password: str | None = None,
        protocol: int = mqtt.MQTTv311,
        qos: int = 1,
    ) -> None:
        self.received: list[mqtt.MQTTMessage] = []
        self.connections = 0  # made so far: a second one means the broker dropped or replaced us
        self._qos = qos
        self._cond = threading.Condition()
        self._topics = topics
        self._subscribed = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=None if protocol == mqtt.MQTTv5 else not client_id,
            protocol=protocol,
        )
        if broker.tls:
            cert, key = broker.tls.client(tls_client) if tls_client else (None, None)
            self.client.tls_set(
                ca_certs=str(broker.tls.ca), certfile=cert and str(cert), keyfile=key and str(key)
            )
        if username:
            self.client.username_pw_set(username, password)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(1, 1)
        self.client.connect_async(broker.host, broker.port, 30)
        self.client.loop_start()
        if not self._subscribed.wait(START_TIMEOUT_S):
            self.close()
            raise AssertionError("game server could not subscribe")

    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, rc: Any, _props: Any) -> None:
        if not rc.is_failure:
            self.connections += 1
            client.subscribe([(t, self._qos) for t in self._topics])

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.received.append(msg)
            self._cond.notify_all()

    def messages(self, suffix: str = "") -> list[mqtt.MQTTMessage]:
        with self._cond:
            return [m for m in self.received if m.topic.endswith(suffix)]

    def payloads(self, suffix: str = "") -> list[dict[str, Any]]:
        return [json.loads(m.payload) for m in self.messages(suffix)]

    def wait_for(self, predicate: Callable[[list[mqtt.MQTTMessage]], bool], timeout: float = 20.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self.received), timeout):
                raise AssertionError(
                    f"timed out; got {[(m.topic, m.payload[:80]) for m in self.received[-10:]]}"
                )

    def wait_online(self, base: str, timeout: float = 20.0) -> None:
        """Wait for the table's ``online`` status: it follows its request subscription on the same
        connection, so a request sent after this is sure to reach the table."""
        status = f"{base}/status"
        self.wait_for(lambda got: any(m.topic == status and b'"online"' in m.payload for m in got), timeout)

    def request(self, topic: str, payload: bytes | str | dict[str, Any], retain: bool = False) -> None:
        data = json.dumps(payload) if isinstance(payload, dict) else payload
        self.client.publish(topic, data, qos=1, retain=retain).wait_for_publish(START_TIMEOUT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# --------------------------------------------------------------------------- events to send


def store(pub: Publisher, events: Sequence[Event | EventData], state: Any = None) -> bool:
    """Store events as the daemon does: as built, written, handed to the publisher, synced.

    True once on disk for good. Tests that write their events by hand write
    models; the daemon stores what the validator builds, so those are converted.
    """
    written = pub.outbox.write(pub.topics.messages(as_built(events)), state)
    pub.send(written)
    pub.outbox.sync()
    return not written.held


def sample_events(first: int, n: int, table_id: str = "T1") -> list[Event]:
    """Events with seq first..first+n-1, every kind in turn, built by hand (no validator needed)."""
    out: list[Event] = []
    for seq in range(first, first + n):
        common: dict[str, Any] = {
            "seq": seq,
            "ts": 1_700_000_000.0 + seq,
            "table_id": table_id,
            "shoe_id": "S1",
        }
        kind = seq % 4
        if kind == 0:
            out.append(ShoeEvent(**common, status="dealing", decks=8, cards_dealt=seq, cards_remaining=0))
        elif kind == 1:
            out.append(CardEvent(**common, round_id=f"R{seq}", position="player1", card="AS"))
        elif kind == 2:
            out.append(RoundEvent(**common, round_id=f"R{seq}", phase="betting", hand_no=seq))
        else:
            out.append(AlertEvent(**common, alert_id=seq, code="EXTRA_CARD", severity="misdeal", message="x"))
    return out


def the_other_kinds(first: int, table_id: str = "T1") -> list[Event]:
    """One event of every kind ``sample_events`` does not make, with seq first..first+5: with them, every
    kind there is (``EVENT_KINDS``); a kind added to the contract is added here."""
    ts = 1_700_000_000.0 + first
    common: dict[str, Any] = {"table_id": table_id, "shoe_id": "S1"}
    return [
        DealerEvent(seq=first, ts=ts, **common, dealer_id="D-7"),
        AnchorEvent(
            seq=first + 1, ts=ts + 1, table_id=table_id, file="T1.jsonl.gz", lines=9, digest="0" * 64
        ),
        RevealEvent(
            seq=first + 2, ts=ts + 2, **common, round_id="R1", positions=["player1"], reason="timeout"
        ),
        ConfigEvent(
            seq=first + 3, ts=ts + 3, table_id=table_id, digest="1" * 64, previous_digest="0" * 64,
            changed=["mqtt.host"],
        ),
        SuspensionEvent(
            seq=first + 4, ts=ts + 4, **common, suspended=True, cause="FOREIGN_CARD", alert_id=first,
            since=ts + 4, message="Foreign card 9H: more than 8 in this shoe - call the supervisor",
        ),
        DeckCheckEvent(
            seq=first + 5, ts=ts + 5, **common, status="counting", started=ts + 5, expected=416, dealt=402,
            counted=0, device=None,
        ),
    ]  # fmt: skip


def answer_get_state(seq: int, table_id: str = "T1") -> Callable[[Request], Response]:
    """A table's request handler whose state says it has published up to ``seq``.

    A consumer takes a table's first event, and one past a gap, only on the table's word.
    """

    def answer(request: Request) -> Response:
        data = {"table_id": table_id, "seq": seq, "link_up": True, "shoe": None, "round": None, "alerts": []}
        return Response(command=request.command, status="ok", transaction=request.transaction, data=data)

    return answer


_BUILT = {cls.model: cls for cls in EventData.__subclasses__()}


def as_built(events: Sequence[Event | EventData]) -> list[EventData]:
    """Events as the validator builds them (plain data), which is what a publisher takes; data stays."""
    return [e if isinstance(e, EventData) else _BUILT[type(e)].of(e) for e in events]


def event_seqs(messages: list[mqtt.MQTTMessage]) -> list[int]:
    """The seq of every event message, in arrival order."""
    kinds = tuple(f"/{kind}" for kind in EVENT_KINDS)
    return [json.loads(m.payload)["seq"] for m in messages if m.topic.endswith(kinds)]


def assert_complete_in_order(arrived: list[int], last: int, first: int | None = None) -> None:
    """What a consumer that drops ``seq <= highest seen`` gets: every event once, in order, no gap.

    ``first`` defaults to the first seq that arrived: a new table starts from its clock floor.
    """
    first = arrived[0] if first is None and arrived else first or 1
    highest = first - 1
    kept = []
    for seq in arrived:
        assert seq <= highest + 1, f"seq {seq} arrived before {highest + 1}"
        if seq > highest:
            kept.append(seq)
            highest = seq
    assert kept == list(range(first, last + 1))
