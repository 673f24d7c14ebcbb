"""``scannerd run`` as a real process for the fault tests, with the limits a service gets.

A process of its own is what a table PC runs: its own descriptors, its own
GIL, its own log. The tests that flood or starve the daemon need that, since
a daemon in the test's process would share them with the flood.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scannerd.runtime.config import Config, load_config
from scannerd.runtime.daemon import Daemon
from simulators.serial_pty import FramedPtyDevice, PtyPort
from tests.support.broker import Broker, GameServer
from tests.support.config import write_config

AUTO = {"burn": "none", "round_control": "auto"}
"""No game server needed: the first card opens a round."""


HELD = (
    "import sys, scannerd.cli, scannerd.runtime.daemon\n"
    "sys.stdin.readline()\n"
    "sys.exit(scannerd.cli.main(sys.argv[1:]))"
)
"""``scannerd run`` itself (``cli.main``), in a process that has done its imports and waits for a line
on stdin to start."""


def start_daemon(
    config: Path,
    log: Path,
    env: dict[str, str] | None = None,
    *,
    held: bool = False,
    prefix: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """``scannerd run --config`` as systemd starts it (with a service's descriptor limit), output to ``log``.

    ``env`` adds to the test's environment (a preloaded library, say); the test runner's own notify
    socket is left out, so the daemon has one only where ``env`` gives it a service manager the test plays.
    ``held``: its imports done, it waits for a line on stdin before it starts (``LiveTable.ready``).
    ``prefix`` is a command it runs under (the sandbox a unit sets up), which must exec the daemon's
    command line, so that the process signalled and waited for is the daemon itself.
    """
    base = {k: v for k, v in os.environ.items() if not k.upper().startswith(("SCANNERD_", "NOTIFY_"))}
    program = ["-c", HELD] if held else ["-m", "scannerd"]
    with log.open("ab") as out:
        return subprocess.Popen(
            [*prefix, sys.executable, *program, "run", "--config", str(config)],
            stdin=subprocess.PIPE if held else None,
            stdout=out,
            stderr=out,
            env=base | (env or {}),
            preexec_fn=table_pc_limits,
        )


def stop_daemon(proc: subprocess.Popen[bytes]) -> None:
    """Stop it as systemd would: SIGTERM, and SIGKILL if it hangs."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


@dataclass
class LiveTable:
    """Table T1 as a real ``scannerd run`` reading a simulated shoe on a pty, and a game server listening.

    ``start`` runs the same config and log again after a ``kill``, as systemd restarts a unit; after
    ``ready``, with the process readied beforehand.
    A framed shoe is ``shoe`` (it keeps what no host acknowledged); any other is written to ``port``.
    ``in_process`` runs the daemon in the test's process instead (``daemon``), for a test that asks
    it directly; ``kill`` is then its clean stop, the only one a process can do to itself, and
    ``start`` after it makes a new daemon from the same config, as a restart does, its dealer
    display on the port the last run had (a port 0 in the config would pick another).
    """

    pty: PtyPort | None
    config: Path
    log: Path
    server: GameServer
    shoe: FramedPtyDevice | None = None
    env: dict[str, str] | None = None
    proc: subprocess.Popen[bytes] | None = None
    in_process: bool = False
    daemon: Daemon | None = None
    adjust: Callable[[Config], Config] | None = None
    display_listen: str | None = None
    """Where the last in-process run's dealer display listened, for the next run to listen there too."""
    readied: subprocess.Popen[bytes] | None = None
    """The next start's process, its imports done while this run goes on (``ready``)."""
    prefix: tuple[str, ...] = ()
    """What every start of the process runs under (``start_daemon``)."""

    @property
    def port(self) -> PtyPort:
        """The pty the shoe is on (none when the test brought a shoe of its own)."""
        assert self.pty is not None, "the test's own shoe: write to it, not to a pty of the table's"
        return self.pty

    def build(self) -> Daemon:
        """In process: the daemon made from the config and not started yet, for a test that looks at what
        it restored or gives it a listener before it runs; ``start`` starts this one."""
        assert self.in_process, "only a daemon in the test's process can be handed to the test"
        if self.daemon is None:
            config = load_config(self.config)
            if self.adjust is not None:
                config = self.adjust(config)
            if self.display_listen is not None:
                # A table's display has a fixed port: a page left open on it finds the table again.
                display = config.display.model_copy(update={"listen": self.display_listen})
                config = config.model_copy(update={"display": display})
            self.daemon = Daemon(config)
        return self.daemon

    def start(self) -> None:
        if self.in_process:
            self.build().start()
        elif self.readied is not None:
            self.proc, self.readied = self.readied, None
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"\n")
            self.proc.stdin.close()
        else:
            self.proc = start_daemon(self.config, self.log, self.env, prefix=self.prefix)

    def ready(self) -> None:
        """Have the next ``start``'s process do its imports now, while this run goes on: that start is
        then a restart's own work alone, so many restarts fit in a short test."""
        assert not self.in_process and self.readied is None
        self.readied = start_daemon(self.config, self.log, self.env, held=True, prefix=self.prefix)

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` and wait for the process to end; its exit status."""
        if self.in_process:
            assert sig == signal.SIGTERM and self.daemon is not None, "in process, only a clean stop"
            if self.daemon.display is not None:
                host = self.daemon.config.display.listen.rpartition(":")[0]
                self.display_listen = f"{host}:{urlsplit(self.daemon.display.url).port}"
            self.daemon.stop()
            self.daemon = None
            return 0
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)

    def running(self) -> None:
        """Fail, with the end of its log, if the daemon has exited: whatever a fault test did to the
        table, the process a service manager watches must still be there."""
        assert self.proc is not None, "only a process of its own can exit by itself"
        code = self.proc.poll()
        assert code is None, f"the daemon exited ({code}):\n{self.log.read_text()[-3000:]}"

    def refused(self, config: Path | None = None) -> str:
        """Another ``scannerd run`` while this table runs, on its config or on ``config``, as an operator
        starts one by hand: it must exit 1, in one line and no traceback. What it logged."""
        log = self.log.with_name("refused.log")
        assert start_daemon(config or self.config, log).wait(30) == 1
        said = log.read_text()
        assert "Traceback" not in said, said
        return said

    def close(self) -> None:
        """Stop the daemon as systemd would (SIGTERM, SIGKILL if it hangs), and a readied process that
        never started; then the shoe and the server."""
        if self.daemon is not None:
            self.daemon.stop()
        if self.readied is not None:
            self.readied.kill()  # it never started: nothing of the table's is in it
            self.readied.communicate(timeout=30)  # waits for it, and closes the stdin it waited on
        if self.proc is not None:
            stop_daemon(self.proc)
        if self.shoe is not None:
            self.shoe.stop()
        self.server.close()
        if self.pty is not None:
            self.pty.close()


@contextmanager
def live_table(
    tmp_path: Path,
    broker: Broker,
    driver: str = "framed",
    *,
    table_id: str = "T1",
    channel: str | None = None,
    env: dict[str, str] | None = None,
    in_process: bool = False,
    adjust: Callable[[Config], Config] | None = None,
    server_id: str = "",
    topics: list[str] | None = None,
    prefix: tuple[str, ...] = (),
    start: bool = True,
    **sections: Any,
) -> Iterator[LiveTable]:
    """A live table on ``broker``: the shoe, its config (auto rounds unless ``rules`` says), a game
    server subscribed to the table, and the daemon started; all of it torn down whatever the test does.

    A table of its own id (not ``T1``) keeps clear of the machine-wide lock other tests' tables take.
    ``channel`` is a shoe the test brought (the simulator's, on a pty or a USB bus), read instead of
    one made here; the test closes it. ``adjust`` changes the loaded config of an in-process daemon
    where a config file cannot (a USB bus object for the driver). ``server_id`` gives the game server
    a persistent session, so what is published while it or the broker is away waits for it; ``topics``
    is what it subscribes to, where it must take less than the whole table (or more than one table).
    ``prefix`` is a command each start of the process runs under: a sandbox the unit would set up.
    ``start=False`` leaves the start to the test, for a daemon that must start after something else
    (the broker stopped, a listener added, the shoe unplugged)."""
    pty: PtyPort | None = None
    shoe: FramedPtyDevice | None = None
    if channel is None:
        framed = driver == "framed"
        pty = PtyPort(tmp_path / "shoe", baudrate=115200) if framed else PtyPort(tmp_path / "shoe")
        shoe = FramedPtyDevice(pty, retransmit_after=0.05).start() if framed else None
        channel = pty.path
    config = write_config(tmp_path, broker, driver, channel, table_id=table_id, **{"rules": AUTO, **sections})
    server = GameServer(broker, topics or [f"casino/tables/{table_id}/#"], client_id=server_id)
    log = tmp_path / "scannerd.log"
    table = LiveTable(
        pty, config, log, server, shoe, env, in_process=in_process, adjust=adjust, prefix=prefix
    )
    try:
        if start:
            table.start()
        yield table
    finally:
        table.close()


def table_pc_limits() -> None:
    """The descriptor limit a service gets by default (soft 1024), whatever the test runner has."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


def log_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def shoe_opened(got: list[Any], base: str = "casino/tables/T1") -> int:
    """How many times the daemon has reported the shoe's port open in ``got`` (its device topic)."""
    return sum(m.topic == f"{base}/device" and json.loads(m.payload)["link"] == "up" for m in got)


def wait_shoe_open(server: GameServer, base: str = "casino/tables/T1", times: int = 1) -> None:
    """Until the daemon has had the shoe's port open ``times`` times: a card sent before is lost
    (the tty's input waiting while nobody reads is discarded when the port is opened again)."""
    server.wait_for(lambda got: shoe_opened(got, base) >= times, 30)


IDLE_CONNECTIONS = 1100
"""More than the 1024 descriptors a service gets by default."""


def open_idle_streams(
    port: int,
    count: int,
    deadline_s: float = 60.0,
    *,
    source: str = "127.0.0.1",
    path: str | None = "/events",
) -> list[socket.socket]:
    """``count`` clients from ``source`` that ask for ``path`` (None: ask for nothing) and then never
    read or leave (loopback only)."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() if path else b""
    held: list[socket.socket] = []
    deadline = time.monotonic() + deadline_s
    while len(held) < count and time.monotonic() < deadline:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0))
            sock.sendall(request)
        except OSError:
            continue  # a daemon that ran out of descriptors stops accepting: keep trying until the deadline
        held.append(sock)
    return held


def served(port: int, path: str = "/api/state", source: str = "127.0.0.1") -> int | None:
    """The status ``path`` on ``port`` (loopback) answers a client at ``source`` with; None: no answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except OSError:
        return None
    finally:
        conn.close()


def state_answers(port: int) -> bool:
    """Whether the page on ``port`` (loopback) serves its view."""
    return served(port) == 200
