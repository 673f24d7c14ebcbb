"""What the benchmarks share: a Mosquitto of their own, daemons as processes, a timed subscriber, figures.

The benchmarks measure the daemon as it runs on a table PC: ``scannerd run``
in its own process, reading a real pty, publishing through a real Mosquitto
started on a free port (the test suite's harness, ``tests.support.broker``). Run them
from the repository root as modules (``python -m bench.latency``) so that
harness is importable.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command
from scannerd.core.validator import Validator
from simulators.serial_pty import PtyPort
from tests.support.broker import MOSQUITTO, Broker, wait_until
from tests.support.nats_cluster import NatsCluster, Node

__all__ = ["Broker", "wait_until"]

PREFIX = "casino/tables"

RULES = 'round_control = "auto"\nburn = "none"\ncut_card_remaining = 14\n'
"""No game server for betting: the first card opens a round. Cards come as real 8-deck shoes, each
opened with ``new_shoe`` (:func:`new_shoe`), so the table's per-shoe state stays as bounded as live."""


def frame(card: str) -> bytes:
    """One Bee-Tek card frame as the shoe sends it, CRLF-terminated."""
    return f" [Game]<Card:{card}> \r\n".encode("ascii")


def one_shoe(rng: random.Random) -> list[str]:
    """A shuffled 8-deck shoe, up to the card that ends its last hand under :data:`RULES`.

    The validator itself says where the shoe ends (the cut card, then the last hand).
    """
    cards = [c for c in ALL_CARDS for _ in range(8)]
    rng.shuffle(cards)
    validator = Validator("SHOE", HouseRules(round_control="auto", burn="none", cut_card_remaining=14))
    validator.handle(Command(0.0, "new_shoe", {}))
    dealt: list[str] = []
    for card in cards:
        if validator.shoe is None or validator.shoe.closed:
            break
        validator.handle(CardDrawn(float(len(dealt) + 1), card))
        dealt.append(card)
    return dealt


def start_broker(root: Path) -> Broker:
    """The test suite's Mosquitto, without its per-message log (as a production broker runs)."""
    broker = Broker(root / "broker", extra="allow_anonymous true\nlog_dest none\n")
    broker.start()
    return broker


# ------------------------------------------------------------------ the daemon as a process


def daemon_config(
    path: Path,
    *,
    table_id: str,
    port: str,
    broker: Broker | NatsCluster,
    outbox: Path,
    driver: str = "beetek",
    rules: str = RULES,
    display: bool = False,
    log_level: str = "warning",
) -> Path:
    """A config file for ``scannerd run``, logging at ``log_level`` to stderr.

    ``display``: serve the dealer display (on by default in a real config) on a free port.
    """
    path.write_text(
        f'table_id = "{table_id}"\n'
        f'[device]\ndriver = "{driver}"\nport = "{port}"\n'
        f"[rules]\n{rules}"
        f"[mqtt]\n{mqtt_keys(broker)}"
        f'[outbox]\npath = "{outbox}"\n'
        f'[display]\nenabled = {str(display).lower()}\nlisten = "127.0.0.1:0"\n'
        f'[log]\nlevel = "{log_level}"\nformat = "json"\n'
        # The bench machine's clock is nobody's table clock: an alert raised at start would be the
        # first event, which the store-less run of latency_stages never has on disk to publish.
        "[clock]\nalert = false\n"
    )
    return path


def mqtt_keys(broker: Broker | NatsCluster) -> str:
    """The ``[mqtt]`` keys for one Mosquitto, or for every node of a cluster (which speaks 3.1.1)."""
    if isinstance(broker, NatsCluster):
        nodes = ", ".join(f'"{node.address}"' for node in broker.nodes)
        return f'brokers = [{nodes}]\nprotocol = "3.1.1"\nreconnect_max_s = 2\n'
    return f'host = "{broker.host}"\nport = {broker.port}\n'


def start_daemon(config: Path, log: Path) -> subprocess.Popen[bytes]:
    """``scannerd run --config`` as systemd would start it (minus the notify socket)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCANNERD_", "NOTIFY_SOCKET"))}
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "scannerd", "run", "--config", str(config)],
            stdout=out,
            stderr=out,
            env=env,
        )


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


# ------------------------------------------------------------------ the consumer


class Subscriber:
    """A game-server stand-in that stamps every message with ``time.perf_counter()`` on arrival.

    With ``keep`` set to False it only counts (a soak of a million cards needs no list of them).

    The stamp is taken first thing in paho's callback, on the same clock the
    feeding thread stamps its writes with, so a latency is one subtraction.
    """

    def __init__(self, broker: Broker | Node, topics: Sequence[str]) -> None:
        self.arrivals: list[tuple[float, str, bytes]] = []
        self.counts: Counter[str] = Counter()  # messages per topic, kept or not
        self.keep = True
        self._cond = threading.Condition()
        self._topics = list(topics)
        self._ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-sub-{os.getpid()}")
        self.client.on_connect = lambda c, *_: c.subscribe([(t, 1) for t in self._topics])
        self.client.on_subscribe = lambda *_: self._ready.set()
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port, 60)
        self.client.loop_start()
        if not self._ready.wait(10):
            raise RuntimeError("subscriber could not subscribe")

    def _on_message(self, _c: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        with self._cond:
            self.counts[msg.topic] += 1
            if self.keep:
                self.arrivals.append((now, msg.topic, msg.payload))
            self._cond.notify_all()

    def count(self, predicate: Callable[[str], bool]) -> int:
        with self._cond:
            return sum(1 for _, topic, _ in self.arrivals if predicate(topic))

    def wait_count(self, topic: str, n: int, timeout: float) -> bool:
        """Wait until ``n`` messages have arrived on ``topic`` in all; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self.counts[topic] >= n, timeout)

    def wait(self, predicate: Callable[[list[tuple[float, str, bytes]]], bool], timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.arrivals), timeout)

    def take(self, predicate: Callable[[str], bool]) -> list[tuple[float, bytes]]:
        """Remove and return the arrivals on matching topics."""
        with self._cond:
            kept, taken = [], []
            for item in self.arrivals:
                (taken if predicate(item[1]) else kept).append(item)
            self.arrivals = kept
        return [(t, payload) for t, _, payload in taken]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def wait_device_up(sub: Subscriber, table_id: str, timeout: float = 30.0) -> None:
    """The daemon says so on its retained device topic once it has the shoe open."""
    topic = f"{PREFIX}/{table_id}/device"

    def up(arrivals: list[tuple[float, str, bytes]]) -> bool:
        return any(t == topic and json.loads(p).get("link") == "up" for _, t, p in arrivals)

    if not sub.wait(up, timeout):
        raise RuntimeError(f"daemon {table_id} never reported its device link up")


def wait_bare_bridge(sub: Subscriber, pty: PtyPort, topic: str, timeout: float = 30.0) -> None:
    """The bare bridge says nothing when it is up: feed it until a card comes through, then forget those."""
    deadline = time.monotonic() + timeout
    while not sub.count(lambda t: t == topic):
        if time.monotonic() > deadline:
            raise RuntimeError("the bare bridge never published")
        pty.write(frame("AS"))
        time.sleep(0.2)
    time.sleep(0.5)
    sub.take(lambda t: t == topic)


def new_shoe(sub: Subscriber, table_id: str, timeout: float = 30.0) -> None:
    """Start a shoe as the game server does, and wait for the answer (``sub`` must hear responses)."""
    topic = f"{PREFIX}/{table_id}/response/new_shoe"
    answers = sub.counts[topic]
    sub.client.publish(f"{PREFIX}/{table_id}/request/new_shoe", b"{}", qos=1)
    if not sub.wait_count(topic, answers + 1, timeout):
        raise RuntimeError(f"{table_id} did not answer new_shoe")


# ------------------------------------------------------------------ figures


def quantiles(ordered: list[int]) -> dict[str, int | None]:
    """The median, p90 and p99 of values already sorted (None for none): where in a shoe alerts came."""

    def at(q: float) -> int | None:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None

    return {"median": at(0.5), "p90": at(0.9), "p99": at(0.99)}


def summary_ms(seconds: Iterable[float]) -> dict[str, float | int]:
    """p50, p99, max and mean in milliseconds (nearest-rank percentiles)."""
    data = sorted(seconds)
    if not data:
        return {"n": 0}

    def rank(p: float) -> float:
        return data[min(len(data) - 1, max(0, round(p / 100 * len(data)) - 1))]

    return {
        "n": len(data),
        "p50_ms": round(rank(50) * 1e3, 3),
        "p99_ms": round(rank(99) * 1e3, 3),
        "max_ms": round(data[-1] * 1e3, 3),
        "mean_ms": round(statistics.fmean(data) * 1e3, 3),
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on; the machine is shared, so the load is part of the story."""
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    version = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, check=False).stdout
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "mosquitto": version.splitlines()[0].strip() if version else "unknown",
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def work_dir(prefix: str) -> Path:
    """A scratch directory on the disk the outbox would be on (not tmpfs, unless asked)."""
    return Path(tempfile.mkdtemp(prefix=f"scannerd-{prefix}-", dir=os.environ.get("BENCH_TMPDIR")))


def report(
    result: dict[str, Any], out: Path | None, name: str, plot: Callable[[Path], None] | None = None
) -> None:
    """Print the one JSON object; with ``out``, also keep it there as ``name.json``, and ``name.png``."""
    text = json.dumps(result, indent=None if out is None else 1)
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(text + "\n")
        if plot is not None:
            plot(out / f"{name}.png")


def pyplot() -> Any:
    """matplotlib's pyplot without a display, or None when the ``bench`` extra is not installed."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib not installed (pip install -e '.[bench]'): no plot written", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
