"""Shared fixtures."""

from __future__ import annotations

import os
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from scannerd.link.embedded_broker import EmbeddedBroker
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from scannerd.link.request_path import Handler, RequestPath
from scannerd.store.outbox import Outbox
from simulators.serial_pty import FramedPtyDevice, PtyPort
from simulators.usb_backend import VirtualUsbBus
from tests.support.broker import Broker
from tests.support.browser import browser  # noqa: F401 (the headless Chromium fixture)
from tests.support.netns import own_network
from tests.support.seaweed import Seaweed, seaweed_server

# The fuzz tests' full count (docs/reliability.md): 12 tests x 10,000 inputs.
#   pytest tests/drivers/test_fuzz_codecs.py tests/contract/test_fuzz_requests.py --hypothesis-profile=fuzz
settings.register_profile("fuzz", max_examples=10_000)


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n 2`` every worker but the first runs in a network of its own (support/netns.py)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if worker != "gw0":
        why = own_network()
        if why is not None:
            raise pytest.UsageError(
                f"{worker} cannot have a network of its own ({why}); run the suite in one process: -n 0"
            )


@pytest.fixture
def make_broker(tmp_path: Path) -> Iterator[Callable[..., Broker]]:
    """Start Mosquitto brokers (``Broker`` keyword arguments: tls, persistence, extra); all stopped after."""
    brokers: list[Broker] = []

    def make(**kwargs: Any) -> Broker:
        broker = Broker(tmp_path / f"broker{len(brokers)}", **kwargs)
        broker.start()
        brokers.append(broker)
        return broker

    yield make
    for broker in brokers:
        broker.stop()


@pytest.fixture
def mosquitto(make_broker: Callable[..., Broker]) -> Broker:
    """A plain Mosquitto on a free port: anonymous, no persistence."""
    return make_broker()


@pytest.fixture
def embedded_broker() -> Iterator[EmbeddedBroker]:
    """The demo's broker, which speaks MQTT 3.1.1 only: a broker that refuses MQTT 5."""
    broker = EmbeddedBroker()
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def make_publisher(tmp_path: Path) -> Iterator[Callable[..., Publisher]]:
    """Start publishers (settings, table_id, outbox path, on_request, Publisher keywords); stopped after.

    ``on_request`` runs the requests on a request path of the table's, as the daemon builds it.
    """
    made: list[tuple[Publisher, RequestPath]] = []

    def make(
        settings: MqttSettings,
        table_id: str = "T1",
        outbox: Path | None = None,
        on_request: Handler | None = None,
        **kwargs: Any,
    ) -> Publisher:
        box = Outbox(outbox or tmp_path / f"outbox{len(made)}.sqlite3")
        pub = Publisher(settings, table_id, box, **kwargs)
        requests = RequestPath.over(pub, on_request)
        requests.start()
        pub.start()
        made.append((pub, requests))
        return pub

    yield make
    for pub, requests in made:
        requests.stop(5.0)
        pub.stop()
        pub.outbox.close()


@pytest.fixture
def shoe(tmp_path: Path) -> Iterator[FramedPtyDevice]:
    """Our framed shoe on a pty at 115200 baud, repeating unacknowledged messages after 50 ms.

    The USB test modules define a ``shoe`` of their own.
    """
    port = PtyPort(tmp_path / "shoe", baudrate=115200)
    device = FramedPtyDevice(port, retransmit_after=0.05).start()
    yield device
    device.stop()
    port.close()


@pytest.fixture
def pty() -> Iterator[tuple[int, str]]:
    """A raw pty: the test writes the shoe's bytes to the master, a driver opens the slave's name."""
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


@pytest.fixture
def usb_bus() -> VirtualUsbBus:
    """A simulated USB bus, a pyusb backend: plug simulated devices in, pass it as ``backend``."""
    return VirtualUsbBus()


@pytest.fixture(scope="module")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seaweed]:
    """A real S3 server with Object Lock (SeaweedFS), one per test module: each test makes its buckets."""
    yield from seaweed_server(tmp_path_factory.mktemp("seaweed"))


@pytest.fixture(scope="session")
def dask_scheduler() -> Iterator[str]:
    """The address of a real local Dask cluster (two worker processes), started once for the session."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address
