"""TLS with client certificates, and passwords from files, against Mosquitto configured for them."""

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import structlog

from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from scannerd.store.outbox import Outbox
from tests.support.broker import (
    Broker,
    GameServer,
    Tls,
    event_seqs,
    free_port,
    make_tls,
    sample_events,
    store,
    wait_until,
)

BASE = "casino/tables/T1"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(tmp_path_factory.mktemp("tls"), clients=("T1", "gameserver"))


def tls_settings(broker: Broker, tls: Tls, client: str | None) -> MqttSettings:
    cert, key = tls.client(client) if client else (None, None)
    return MqttSettings(
        host="localhost",
        port=broker.port,
        tls=True,
        tls_ca=tls.ca,
        tls_cert=cert,
        tls_key=key,
        reconnect_max_s=1,
    )


def test_events_flow_over_tls_with_a_client_certificate(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher], tls: Tls
) -> None:
    broker = make_broker(tls=tls)
    gs = GameServer(broker, [f"{BASE}/#"], tls_client="gameserver")
    pub = make_publisher(tls_settings(broker, tls, "T1"))
    store(pub, sample_events(1, 20))
    assert pub.flush(30)
    gs.wait_for(lambda got: len(event_seqs(got)) >= 20)
    assert event_seqs(gs.messages()) == list(range(1, 21))
    gs.close()


@pytest.mark.parametrize("client", [None, "stranger"])
def test_a_broker_that_requires_a_certificate_refuses_none_or_a_strangers(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher], tls: Tls, client: str | None
) -> None:
    broker = make_broker(tls=tls)
    pub = make_publisher(tls_settings(broker, tls, client))
    # Wait until the broker has turned the client away at least twice (a retry happened too).
    wait_until(lambda: broker.log.count("OpenSSL Error") >= 2, 30, "the broker to refuse the handshake")
    assert not pub.connected
    assert "New client connected" not in broker.log


def passwords(broker_dir: Path, users: dict[str, str]) -> Path:
    path = broker_dir.parent / f"{broker_dir.name}.passwd"
    path.write_text("")
    for user, password in users.items():
        subprocess.run(["mosquitto_passwd", "-b", str(path), user, password], check=True, timeout=30)
    return path


def test_password_comes_from_the_credentials_directory_and_is_never_logged(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher], tmp_path: Path
) -> None:
    secret = "s3cret-Pa55"
    pwfile = passwords(tmp_path / "broker0", {"T1": secret})
    broker = make_broker(extra=f"allow_anonymous false\npassword_file {pwfile}\n")
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "mqtt-password").write_text(secret + "\n")
    settings = MqttSettings(host=broker.host, port=broker.port, username="T1")
    with structlog.testing.capture_logs() as logs:
        pub = Publisher(
            settings, "T1", Outbox(tmp_path / "o.sqlite3"), environ={"CREDENTIALS_DIRECTORY": str(creds)}
        )
        pub.start()
        try:
            wait_until(lambda: pub.connected, 30, "an authenticated connection")
        finally:
            pub.stop()
            pub.outbox.close()
    assert logs and secret not in repr(logs)
    assert secret not in repr(settings) and secret not in repr(pub.health())


def test_a_wrong_password_is_refused_and_said_so(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher], tmp_path: Path
) -> None:
    pwfile = passwords(tmp_path / "broker0", {"T1": "right"})
    broker = make_broker(extra=f"allow_anonymous false\npassword_file {pwfile}\n")
    (tmp_path / "pw").write_text("wrong")
    settings = MqttSettings(host=broker.host, port=broker.port, username="T1", password_file=tmp_path / "pw")
    with structlog.testing.capture_logs() as logs:
        pub = make_publisher(settings, environ={})
        wait_until(lambda: pub.failed_attempts >= 2, 30, "a refused attempt and its retry")
        pub.stop()
    assert not any("wrong" in repr(e) for e in logs)
    # Said once, not at every retry.
    assert failures(logs) == [("mqtt connection refused", "Not authorized")]


def failures(logs: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(e["event"], e["reason"]) for e in logs if str(e["event"]).startswith("mqtt connection ")]


@pytest.mark.parametrize(
    "fault", ["certificate-from-another-ca", "host-name-not-in-certificate", "broker-down"]
)
def test_a_connection_that_fails_says_why_once_not_at_every_retry(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher], tls: Tls, fault: str
) -> None:
    cert, key = tls.client("T1")
    settings = MqttSettings(
        host="localhost", port=free_port(), tls=True, tls_cert=cert, tls_key=key, reconnect_max_s=1
    )
    if fault == "certificate-from-another-ca":  # the table trusts a CA that did not sign the broker's
        broker = make_broker(tls=tls)
        settings = settings.model_copy(update={"port": broker.port, "tls_ca": tls.dir / "stranger-ca.crt"})
        expected = (
            "TLS: the broker's certificate is not accepted: self-signed certificate in certificate chain"
        )
    elif fault == "host-name-not-in-certificate":  # reached by an address its certificate does not name
        broker = make_broker(tls=tls, host="127.0.0.2")
        settings = settings.model_copy(update={"host": "127.0.0.2", "port": broker.port, "tls_ca": tls.ca})
        expected = (
            "TLS: the broker's certificate is not accepted: "
            "IP address mismatch, certificate is not valid for '127.0.0.2'."
        )
    else:
        settings = settings.model_copy(update={"tls_ca": tls.ca})
        expected = "connection refused: no broker listens on that port"
    with structlog.testing.capture_logs() as logs:
        pub = make_publisher(settings)
        wait_until(lambda: pub.failed_attempts >= 2, 30, "a failed attempt and its retry")
        assert failures(logs) == [("mqtt connection failed", expected)]
        if fault == "broker-down":
            make_broker(tls=tls, port=settings.port)
            wait_until(lambda: pub.connected, 30, "the connection once the broker is up")
            (connected,) = [e for e in logs if e["event"] == "mqtt connected"]
            assert connected["failed_attempts"] >= 2
            assert pub.failed_attempts == 0
        pub.stop()
    assert len(failures(logs)) == 1
