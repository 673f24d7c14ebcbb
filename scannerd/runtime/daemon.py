"""One table's daemon: the device reader, the validator, the outbox and the MQTT link, wired together.

Every input, whether a card from the reader thread, a request from the MQTT
thread or the once-a-second tick, goes through ``_apply`` under one lock:
the validator sees one ordered stream, and its events reach the outbox, with
the inputs that produced them (``scannerd.store.journal``), before anything else happens. Only once they
are synced to disk is a framed shoe told its card arrived, so a crash at any
moment loses nothing the shoe believes delivered.

The cards of one read from the device are judged one by one but stored
together, in one transaction with one fsync: a burst of cards costs one trip
to the disk, not one per card.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from drivers.base import Driver
from drivers.events import DeviceEvent, DeviceHello, LinkDown, LinkUp
from drivers.reader import DeviceReader
from drivers.registry import create_driver
from scannerd import __version__
from scannerd.archive.bucket import Credentials
from scannerd.archive.shipper import Shipper
from scannerd.contract.alert_catalogue import message
from scannerd.contract.command_catalogue import COMMANDS
from scannerd.contract.events import AlertData, EventData, GameIdentity
from scannerd.contract.payloads import ClockHealth, ReaderHealth, Software
from scannerd.contract.requests import Request, Response, Transaction
from scannerd.contract.topics import Topics
from scannerd.core.inputs import (
    TICK_S,
    Actor,
    Anchored,
    ClockStepped,
    ConfigChanged,
    Fault,
    Restarted,
    Tick,
    ValidatorInput,
)
from scannerd.core.listeners import TableListener
from scannerd.core.table import Outcome, SavedState, Table
from scannerd.core.validator import Validator
from scannerd.link.publisher import Publisher
from scannerd.link.request_path import RequestPath
from scannerd.recording import signing
from scannerd.recording.anchors import SealedFile
from scannerd.recording.recorder import OnSealed, Recorder, StateSource
from scannerd.runtime import build, config_digest, software
from scannerd.runtime.config import Config
from scannerd.runtime.health import TableHealth
from scannerd.runtime.instance_lock import InstanceLock
from scannerd.runtime.sentries import ClockSentry, SilenceSentry
from scannerd.runtime.shoe_alarm import ShoeAlarm
from scannerd.staff.roster import Roster, request_actor
from scannerd.store.journal import Schedule, encode
from scannerd.store.opening import open_table, reserve
from scannerd.store.outbox import Level, Outbox, OutboxHealth
from scannerd.store.seq_ceiling import SeqCeiling

if TYPE_CHECKING:
    from scannerd.display.server import Display
    from scannerd.runtime.metrics import MetricsServer

log = structlog.get_logger(__name__)

CLOCK_STEP_FORWARD_S = 0.5
"""A jump of the wall clock ahead of the monotonic one by this much is a step: NTP slews by half a
millisecond a second at most, and the two are read within a few milliseconds of each other."""
CLOCK_STEP_BACK_S = 0.05
"""Any jump back beyond reading noise is a step: a slewed clock never runs backwards."""
_READ_WINDOW_S = 0.005
"""Wall and monotonic readings farther apart than this (the thread was paused) are taken again."""

_NOTHING_YET = object()
"""The driver's state before any batch was written: unlike any state, None included."""

_OUTBOX_FAULTS: dict[str, Callable[[float, OutboxHealth], Fault]] = {
    "warn": lambda ts, h: Fault(
        ts,
        "OUTBOX_NEARLY_FULL",
        message("OUTBOX_NEARLY_FULL", pending=h.pending, percent=h.bytes * 100 // h.max_bytes),
    ),
    "full": lambda ts, h: Fault(ts, "OUTBOX_FULL", message("OUTBOX_FULL", held=h.held)),
}


class Daemon:
    """Owns the threads of one table; ``scannerd.runtime.service`` owns the process around it."""

    def __init__(self, config: Config, *, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.table_id = config.table_id
        self.started_at = clock()
        self.request_counts: Counter[tuple[str, str]] = Counter()  # (command, status), under _lock
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._closed = False  # no request or tick is judged any more: the recording has ended (under _lock)
        self.listeners: list[TableListener] = []  # told in this order (scannerd/core/listeners.py)

        # Read first: a broken list stops the start (no list would let anyone sign in).
        self.roster = Roster(config.staff.file) if config.staff.file is not None else None
        outbox_path = Path(config.outbox.path)
        # Then: a second daemon for this table touches neither outbox nor shoe.
        self._instance = InstanceLock(outbox_path, config.table_id)
        self.outbox = Outbox.from_settings(config.outbox, on_level=self._on_outbox_level)
        self._ceiling = SeqCeiling(outbox_path)
        # What this start runs, and under which configuration: stated in status, every recording and
        # every round's identity.
        self.software = installed_software()
        self._last_start = config_digest.LastStart.read(outbox_path)
        self.effective = config_digest.effective(config, self._last_start.salt)
        saved = self._open_table()
        self.clock_sentry = ClockSentry(config.clock)
        self.silence_sentry = SilenceSentry(config.device.stale_after_s)
        device = config.device
        self.driver: Driver = create_driver(device.driver, device.port, **device.driver_options())
        if saved is not None and saved.device is not None:
            self.driver.restore_state(saved.device)
        self.publisher = self._make_publisher()
        self.publisher.set_suspended(self.validator.suspended)  # a table restored suspended says so
        # The game server's requests, run one at a time on a thread of their own (docs/mqtt.md: Busy).
        self.requests = RequestPath.over(self.publisher, self._on_request)
        self.reader = DeviceReader(
            self.driver,
            on_event=self._on_device_event,
            on_read_done=self._on_read_done,
            on_rx=self._on_rx,
            hold=self._lock,  # a read is judged whole: no request or tick between its time and its cards
            clock=self._now,
        )
        self._ticker: threading.Thread | None = None
        self._unacked: list[int] = []  # framed seqs whose events are not yet on disk
        self._unstored: list[EventData] = []  # events judged during the current read, stored at its end
        self._unjournalled: list[ValidatorInput] = []  # the inputs that made them, journalled with them
        self._device_written: Any = _NOTHING_YET  # the driver's state in the last batch written or held
        self._snapshots = Schedule()
        self._faults: deque[Fault] = deque()  # raised where a store is under way; sent by the ticker
        self._sealed: deque[SealedFile] = deque()  # files the recorder sealed; anchored by the ticker
        self._wall_mono: tuple[float, float] | None = None  # the last input's wall and monotonic times
        self._add_listeners()

    def _open_table(self) -> SavedState | None:
        """The table as the outbox and the seq ceiling left it (``scannerd/store/opening.py``); the
        saved state found, whose driver's part the driver takes back."""
        config, device = self.config, self.config.device

        def make_table(saved: SavedState | None) -> Table:
            return Table(self.table_id, config.rules, driver=device.driver, channel=device.port, saved=saved)

        opened = open_table(
            self.outbox, self._ceiling, make_table, Topics(config.mqtt.prefix, self.table_id), self.clock()
        )
        self.table, self._state_lost = opened.table, opened.state_lost
        # The journal was judged again under what ran when it was written (the snapshot's); from
        # here on, what runs now. The first store after a start is a snapshot, which keeps it.
        self.table.validator.run_under(
            GameIdentity.running(__version__, self.software, self.effective.digest)
        )
        self._restored = opened.saved is not None
        return opened.saved

    def _make_publisher(self) -> Publisher:
        """The broker link, its health topic told of every part's health."""
        return Publisher(
            self.config.mqtt,
            self.table_id,
            self.outbox,
            display=lambda: self.display.health if self.display is not None else None,
            reader=lambda: ReaderHealth.model_validate(self.reader.counters()),
            recorder=lambda: self.recorder.health() if self.recorder is not None else None,
            archive=lambda: self.archive.health() if self.archive is not None else None,
            clock_health=self.clock_health,
            software=self.software,
            config_digest=self.effective.digest,
            staff_list=self.roster is not None,
            started_at=self.started_at,
        )

    def _add_listeners(self) -> None:
        """What hears every batch, in the order it is told: the recorder, the shoe's alarm, the
        display, the metrics' counts (``scannerd/core/listeners.py``)."""
        config = self.config
        self.recorder: Recorder | None = None
        if config.record.dir is not None:
            self.recorder = _recorder_for(
                config, self.saved_state, self._on_sealed, self.software, self.effective.digest
            )
            self.listeners.append(self.recorder)
        self.archive: Shipper | None = None
        if config.archive.url is not None and config.record.dir is not None:
            self.archive = Shipper(
                config.archive,
                table_id=self.table_id,
                directory=Path(config.record.dir),
                compress=config.record.compress,
                writing=lambda: self.recorder.path if self.recorder is not None else None,
                credentials=Credentials.of(config.archive),
            )
            self.listeners.append(self.archive)
        self.alarm = ShoeAlarm(self.reader.set_alert, self.validator.state()["alerts"])
        self.listeners.append(self.alarm)
        self.display: Display | None = None
        if config.display.enabled:
            # Only here: the web server (aiohttp) is a quarter of the daemon's start-up and some
            # megabytes, and a table whose screen is driven elsewhere never needs it.
            from scannerd.display.server import Display

            self.display = Display(
                config.display,
                self.table_id,
                lambda: self.request("get_state", {}).data or {},
                self.request,
                staff=self.roster,
                overlay=config.overlay,
                ack_needs_pin=config.rules.ack_needs_pin,
                round_control=config.rules.round_control,
                on_health=self.publisher.health_changed,
            )
            self.listeners.append(self.display)
        self.metrics: MetricsServer | None = None
        if config.metrics.listen is not None:
            # Only here, as the display: the client library is loaded by a table that serves metrics.
            from scannerd.runtime.metrics import MetricsServer

            self.metrics = MetricsServer(config.metrics, self)
            self.publisher.on_acked = self.metrics.acked
            self.listeners.append(self.metrics.counts)

    @property
    def validator(self) -> Validator:
        """The table's validator: what the status line, ``seq`` and the tests read."""
        return self.table.validator

    # ------------------------------------------------------------------ lifecycle

    def start(self, device_wait_s: float = 3.0) -> None:
        """Start every thread; returns once the device is open, or after ``device_wait_s`` without it.

        The service says READY when this returns, so a table whose shoe is there
        is ready only once it can read cards; an absent shoe does not hold the
        daemon back (its link-down alert says what is wrong).
        """
        if self._state_lost:
            # Before the recorder: a recording cannot replay this alert (its cause is no input), so
            # the first file's header holds the state after it, seq and all.
            self._lost_state_alert()
        with self._lock:
            self._check_clock(self._now())  # the same: a clock wrong from the start is in no file's lines
        log.info(
            "software and configuration",
            version=self.software.model_dump(),
            config_digest=self.effective.digest,
        )
        if self.recorder is not None:
            self.recorder.start(self.clock())  # its header holds the state before any input
        if self.archive is not None:
            self.archive.start()
        if self.display is not None:
            self.display.start()  # before any event, so it sees the state they apply to
        if self.metrics is not None:
            self.metrics.start()
        self._resume()  # before the broker can hand over requests queued for us meanwhile
        self._config_changed()
        self.requests.start()
        self.publisher.start()
        self.reader.start()
        self._ticker = threading.Thread(target=self._tick_loop, name="ticker", daemon=True)
        self._ticker.start()
        deadline = time.monotonic() + device_wait_s
        while not self.reader.link_up and time.monotonic() < deadline:
            self._stopping.wait(0.02)
        self.alarm.start()  # once the shoe is open, so the restated alarm reaches it at once
        log.info("daemon started", device=self.driver.description, link_up=self.reader.link_up)

    def _lost_state_alert(self) -> None:
        with self._lock:
            self._apply(Fault(self._now(), "STATE_LOST", message("STATE_LOST")))

    def _resume(self) -> None:
        """A start on saved state: the validator judges what may have been missed while nobody read.

        Opening a serial port discards what waited in it, and most shoes send a
        card once, so the round left open lost cards it cannot get back. Only a
        shoe that repeats what was not acknowledged loses none, unless the
        machine itself died: then a batch published but not yet synced is
        missing from the restored state, and its round cannot be trusted either.
        The validator decides what that means for the round (``Restarted``).
        """
        if not self._restored:
            return
        repeats = False
        if self.outbox.power_lost:
            detail = "the table PC stopped without a clean shutdown"
            if not self.outbox.boot_known:
                log.warning("the boot id cannot be read: every unclean stop counts as a power cut")
        else:
            repeats = self.driver.repeats_unacknowledged
            detail = "scannerd was not reading the shoe while it was stopped"
        with self._lock:
            self._apply(Restarted(self._now(), detail, repeats))
            if self.outbox.power_lost:
                self._store()  # the state with seq moved on is on disk: a start after this need not
                self.outbox.power_loss_handled()

    def _config_changed(self) -> None:
        """A start under another configuration than the last one's says which keys changed, as an event.

        What this start runs under is kept only once the event is stored: a start killed before
        that says the change again at the next.
        """
        kept, now = self._last_start.effective, self.effective
        keys = config_digest.changed(kept.keys, now.keys) if kept is not None else []
        if kept is not None and keys:
            log.info("the configuration changed since the last start", keys=keys)
            with self._lock:
                self._apply(ConfigChanged(self._now(), now.digest, kept.digest, keys))
        if kept is None or keys or kept.digest != now.digest:
            try:
                self._last_start.write(now)
            except OSError as exc:  # a full disk: the next start says the change again
                log.error(
                    "could not keep this start's config", file=str(self._last_start.path), error=str(exc)
                )

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.reader.stop()
        deadline = time.monotonic() + timeout
        # Nothing is judged from here on: the last file is sealed next, and an event judged after it
        # would be published but recorded nowhere. So the anchors still waiting go out now, into the
        # last file, and that file's own anchor waits for the next start, which anchors the file its
        # chain continues from and records it.
        self.requests.stop(1.0)
        with self._lock:
            if not self._closed:  # a second stop judges nothing: the outbox may be closed already
                self._anchor_sealed(self._now())
            self._closed = True  # the dealer display's buttons too, which take no MQTT path, and the ticker
        if self.recorder is not None:
            self.recorder.stop()
        if self.archive is not None:
            self.archive.stop()
        if self.publisher.connected:
            self.publisher.flush(max(deadline - time.monotonic() - 1.0, 0.1))
        self.publisher.stop(max(deadline - time.monotonic(), 0.5))
        if self._ticker is not None:
            self._ticker.join(1.0)
        if self.display is not None:
            self.display.stop()
        if self.metrics is not None:
            self.metrics.stop()
        with self._lock:
            state = self.saved_state().to_dict()
        self.outbox.close(state)  # a snapshot last: the next start has no journal to judge
        with contextlib.suppress(OSError):  # a full disk: the ceiling still holds
            self._ceiling.note_published(self.validator.next_seq - 1)
        if self.outbox.lost_at_close:
            log.error("events lost: no room on disk for them at stop", events=self.outbox.lost_at_close)
        self._instance.release()
        log.info("daemon stopped")

    def check(self) -> list[str]:
        """Components that are dead after an attempt to restart them ([] when all is well)."""
        dead = []
        if not self.reader.alive and not self._stopping.is_set():
            log.error("device reader died; restarting", error=str(self.reader.last_error))
            self.reader.start()
            if not self.reader.alive:
                dead.append("reader")
        if self._ticker is None or not self._ticker.is_alive():
            dead.append("ticker")
        if self.recorder is not None and not self.recorder.alive and not self._stopping.is_set():
            dead.append("recorder")
        if self.archive is not None and not self.archive.alive and not self._stopping.is_set():
            dead.append("archive")
        if not self.publisher.alive and not self._stopping.is_set():
            dead.append("publisher")  # its loop has no restart of its own: the service restarts us
        if self.metrics is not None and not self.metrics.alive and not self._stopping.is_set():
            self.metrics.start()  # it ends only when it may not serve (logged) or by a bug: not the table's
        if self.display is not None and not self.display.alive and not self._stopping.is_set():
            log.error("dealer display died; restarting")
            self.display.start()
            if not self.display.alive:
                dead.append("display")
        return dead

    def health(self) -> TableHealth:
        """The table at this moment, for the status line, ``/metrics`` and ``/healthz`` alike (any thread)."""
        with self._lock:
            state = self.validator.state(results=False)
        return TableHealth(
            payload=self.publisher.health_payload(),
            link_up=self.reader.link_up,
            device=self.publisher.device,
            suspended=state.get("suspended"),
            shoe=state["shoe"],
            round=state["round"],
        )

    def status_line(self) -> str:
        return self.health().status_line()

    def reload(self) -> None:
        """Nothing of the deal can change under a running table; only log files reopen (in service)."""
        log.info("reload: nothing to reload in the daemon")

    # ------------------------------------------------------------------ inputs

    def _on_device_event(self, ts: float, event: DeviceEvent) -> None:
        if self._stopping.is_set() and isinstance(event, LinkDown):
            return  # the daemon let go of the device; the shoe did not fail, so no round is voided
        with self._lock:  # the ticker judges silence under the same lock
            back = self.silence_sentry.heard(event)
            if back is not None:
                self._device_event(ts, back)
            # Link changes come on their own; anything else is stored when its read is done.
            self._device_event(ts, event, defer=not isinstance(event, LinkUp | LinkDown))

    def _device_event(self, ts: float, event: DeviceEvent, defer: bool = False) -> None:
        outcome = self.table.device_event(ts, event)
        if outcome.device is not None:
            self.publisher.set_device(outcome.device)
            for listener in self.listeners:
                listener.on_device(outcome.device)
        if isinstance(event, DeviceHello):
            log.info("device hello", model=event.model, serial=event.serial, firmware=event.firmware)
        if outcome.ack_now is not None:
            self.reader.acknowledge(outcome.ack_now)
        if outcome.judged is not None:
            self._take(outcome, defer)

    def _on_read_done(self, ts: float) -> None:
        with self._lock:
            if self._unstored or self._unacked:
                self._store()

    def _on_rx(self, ts: float, data: bytes) -> None:
        for listener in self.listeners:
            listener.on_rx(ts, data)

    def request(self, command: str, args: dict[str, Any], actor: Actor | None = None) -> Response:
        """Run a command as if it came over MQTT, by ``actor`` (the dealer display's buttons)."""
        return self._judge_request(lambda ts: self.table.command(command, args, ts, actor), command)

    def _on_request(self, request: Request) -> Response | None:
        actor = request_actor(request, self.roster)
        return self._judge_request(
            lambda ts: self.table.request(request, ts, actor), request.command, request.transaction
        )

    def _judge_request(
        self, judge: Callable[[float], Outcome], command: str, transaction: Transaction | None = None
    ) -> Response:
        with self._lock:
            if self._closed:
                text = "the table is stopping: not run"
                return Response(command=command, status="error", transaction=transaction, error=text)
            outcome = judge(self._now())
            self._take(outcome)
            assert outcome.response is not None  # every request is answered
            self.request_counts[_command_label(command), outcome.response.status] += 1
        return outcome.response

    def _tick_loop(self) -> None:
        while not self._stopping.wait(TICK_S):
            try:
                with self._lock:
                    if self._closed:
                        return  # the recording has ended: what a tick judged now would be in no file
                    now = self._now()  # first: a step of the clock is judged before what follows it
                    while self._faults:
                        self._apply(self._faults.popleft())
                    self._anchor_sealed(now)
                    self._check_clock(now)
                    self._check_silence(now)
                    self._apply(Tick(now))
            except Exception:  # a tick must never kill its thread silently
                log.exception("tick failed")

    def _on_sealed(self, sealed: SealedFile) -> None:
        """The recorder's thread: the file's anchor is judged by the ticker; the archive looks at once."""
        self._sealed.append(sealed)
        if self.archive is not None:
            self.archive.wake()

    def _anchor_sealed(self, now: float) -> None:
        """Each file the recorder sealed goes out as an anchor, numbered with the rest. Caller holds the lock.

        Judged, not sent aside: an anchor numbered outside the table's order would look like a gap."""
        while self._sealed:
            sealed = self._sealed.popleft()
            self._apply(Anchored(now, sealed.file, sealed.lines, sealed.digest))

    def _now(self) -> float:
        """The wall time for an input; a step of the wall clock since the last one is judged first.

        Events carry wall-clock times, so a step moves them; what is judged by
        elapsed time (a stalled round) must not move with it, so the validator
        is told of the step as an input, before the input stamped after it.
        Caller holds the lock.
        """
        for _ in range(3):
            before = time.monotonic()
            wall = self.clock()
            after = time.monotonic()
            if after - before <= _READ_WINDOW_S:
                break
        mono = (before + after) / 2
        last, self._wall_mono = self._wall_mono, (wall, mono)
        if last is not None:
            step = (wall - last[0]) - (mono - last[1])
            if step >= CLOCK_STEP_FORWARD_S or step <= -CLOCK_STEP_BACK_S:
                log.warning("the wall clock stepped", seconds=round(step, 3))
                self._apply(ClockStepped(wall, step))
        return wall

    def _check_clock(self, now: float) -> None:
        """Judge what the clock sentry says of the clock now (``scannerd/runtime/sentries.py``).

        Caller holds the lock."""
        raised = any(a["code"] == "CLOCK_UNSYNCED" for a in self.validator.open_alerts.values())
        said = self.clock_sentry.check(now, raised)
        if said is not None:
            self._apply(said)

    def clock_health(self) -> ClockHealth | None:
        """The last reading and the table's judgement of it, for the health topic (any thread)."""
        return self.clock_sentry.health

    def _check_silence(self, now: float) -> None:
        """Judge a shoe gone quiet as unplugged, as the silence sentry says (``sentries.py``)."""
        with self._lock:
            down = self.silence_sentry.check(self.reader.link_up)
            if down is not None:
                self._device_event(now, down)

    def _apply(self, inp: ValidatorInput) -> None:
        """Judge an input that is not the device's and store its events (and any deferred) now."""
        with self._lock:
            self._take(self.table.judge(inp))

    def _take(self, outcome: Outcome, defer: bool = False) -> None:
        """Add what the table judged to the batch; store it now, or with the rest of its read."""
        with self._lock:
            self._unstored += outcome.events
            if outcome.ack is not None:
                self._unacked.append(outcome.ack)
            judged = outcome.judged
            if judged is not None and not (isinstance(judged, Tick) and not outcome.events):
                self._unjournalled.append(judged)  # a tick that did nothing changed nothing
            if judged is not None and not isinstance(judged, Tick):
                for listener in self.listeners:
                    listener.on_input(judged)
            if any(event["kind"] == "suspension" for event in outcome.events):
                self.publisher.set_suspended(self.validator.suspended)  # the status says it at once
            if defer:
                return
            # A tick also retries what the outbox could not store: room may come back with nothing new
            # to store (the disk freed, the broker back), and a framed shoe waits for its ack meanwhile.
            retry = isinstance(judged, Tick) and bool(self._unacked or self.outbox.health().held)
            if self._unstored or self._unacked or retry:
                self._store()

    def saved_state(self, ack: int | None = None) -> SavedState:
        """What a restart restores: the validator's part and what the driver keeps (a framed shoe's).

        ``ack`` is the newest framed seq about to be acknowledged: it counts as
        acknowledged in the saved state, since the state is stored before the shoe is told.
        """
        return self.table.saved_state(self.driver.saved_state(ack))

    def _store(self) -> None:
        """The durability order, in one place. Caller holds the lock.

        1. write the events and the inputs that made them (now and then the whole state
           after them instead: ``scannerd.store.journal.Schedule``) to the outbox, one commit:
           from here they survive a killed process;
        2. hand them to the publisher, which sends them if they are next in line:
           the broker need not wait for the disk;
        3. sync the outbox: from here they survive a power cut;
        4. acknowledge the framed shoe's cards, only now, so it forgets none that
           could still be lost (none while the outbox holds the batch in memory);
        5. tell the listeners (the shoe's alarm, the display).
        """
        events, self._unstored = self._unstored, []
        inputs, self._unjournalled = self._unjournalled, []
        if events and not self._ceiling.covers(events[-1].seq):
            reserve(self._ceiling, events[-1].seq)
        newest_ack = self._unacked[-1] if self._unacked else None
        device = self.driver.saved_state(newest_ack)
        messages = self.publisher.topics.messages(events)
        if not events and not inputs and device == self._device_written:
            # A tick's retry with nothing new to say: a row for it would only be held too.
            written = self.outbox.retry()
        elif self._snapshots.snapshot_now(len(inputs), self.validator.shoe):
            written = self.outbox.write(messages, self.table.saved_state(device).to_dict())
        else:
            written = self.outbox.write(messages, None, encode(inputs, device))
        self._device_written = device
        self.publisher.send(written)
        self.outbox.sync()
        log_alerts(events)
        if not written.held:
            for seq in self._unacked:
                self.reader.acknowledge(seq)
            self._unacked.clear()
        for listener in self.listeners:
            try:
                listener.on_events(events)
            except Exception:
                log.exception("event listener failed", listener=repr(listener))

    def _on_outbox_level(self, level: Level, health: OutboxHealth) -> None:
        """Called from inside a store: the alert is raised by the next tick, not re-entrantly."""
        # Back to ok is good news; only a filling outbox is the table's trouble in the journal.
        say = log.info if level == "ok" else log.warning
        say("outbox level", outbox_level=level, pending=health.pending, bytes=health.bytes)
        if level != "ok":
            self._faults.append(_OUTBOX_FAULTS[level](self.clock(), health))


def _command_label(command: str) -> str:
    """A command of the catalogue names itself; any other is 'other', so the metrics' labels stay bounded."""
    return command if command in COMMANDS else "other"


def log_alerts(events: Sequence[EventData]) -> None:
    """Every alert raised goes into the log too, so ``journalctl -p warning`` lists the table's trouble.

    Misdeals and warnings are at warning; an info alert (the cut card, a
    reconnected shoe) and an acknowledgement are at info.
    """
    for event in events:
        if isinstance(event, AlertData):
            say = log.warning if event.severity != "info" and not event.acknowledged else log.info
            say(
                "alert acknowledged" if event.acknowledged else "alert",
                code=event.code,
                severity=event.severity,
                round_id=event.round_id,
                card=event.card,
                message=event.message,
                seq=event.seq,
            )


def installed_software() -> Software:
    """The installed files held to their wheel's hashes (``scannerd selfcheck``), or that there are none."""
    try:
        installed = software.check()
    except (software.NotFromAWheel, PackageNotFoundError) as exc:
        log.info("software not installed from a wheel: no digest to state", detail=str(exc))
        return Software(source="not_from_a_wheel", build=build.running())
    if not installed.intact:
        log.error(
            "installed files differ from what the wheel recorded",
            differing=installed.differing,
            missing=installed.missing,
        )
    return Software(source="wheel", digest=installed.digest, intact=installed.intact, build=build.running())


def _recorder_for(
    config: Config,
    state: StateSource,
    on_sealed: OnSealed,
    installed: Software | None = None,
    config_digest: str | None = None,
) -> Recorder:
    """The table's recorder as its config sets it up, its headers holding what ``state`` gives.

    Here rather than on the recorder: the recording knows its own section, not the whole config.
    """
    key_path = signing.private_key_path(config.record.key_file)
    return Recorder(
        config.record,
        table_id=config.table_id,
        driver=config.device.driver,
        rules=config.rules,
        driver_options=dict(config.device.options),
        state=state,
        key=signing.load_private_key(key_path) if key_path is not None else None,
        on_sealed=on_sealed,
        software=installed,
        config_digest=config_digest,
    )
