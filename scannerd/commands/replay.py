"""``scannerd replay FILE|DIR``: what recordings came to, what they publish (JSON lines), or to a broker.

House settings come from the recording's header; ``--config`` overrides the
ones its ``[rules]`` section sets, and supplies the broker for ``--emit
mqtt``. A replay to a broker publishes as ``<table>-replay`` unless
``--table-id`` says otherwise, so that it never passes for the live table
(its retained shoe and status topics would overwrite the table's own).

A directory's recordings are replayed in parallel (``scannerd.recording.replay_many``),
as fast as they go, on every core or on a Dask cluster (``--cluster``); what
is printed is what replaying each file in turn prints, in the order that
module defines.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from drivers.base import DriverInitError
from scannerd.commands import arguments
from scannerd.contract.events import EventData
from scannerd.contract.requests import Response
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.recording.format import RecordingError, RecordingReader, recordings_under
from scannerd.recording.replay import Published, messages
from scannerd.recording.replay_many import (
    ClusterUnavailable,
    executor_for,
    reader_notes,
    replay_many,
)
from scannerd.recording.replay_summary import summary_text
from scannerd.runtime import logs
from scannerd.runtime.config import ConfigError, load_config
from scannerd.runtime.log_settings import LogSettings

EXIT_BAD_INPUT = 2
EXIT_MQTT = 1
CONNECT_TIMEOUT_S = 15.0
FLUSH_TIMEOUT_S = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=Path,
        metavar="FILE|DIR",
        help="a recording (.jsonl or .jsonl.gz), or a directory of them: replayed in parallel, at full speed",
    )
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument("--fast", action="store_true", help="ignore the recorded timing: as fast as possible")
    pace.add_argument(
        "--speed",
        type=arguments.positive_float,
        default=1.0,
        metavar="X",
        help="play at X times the recorded pace (default 1)",
    )
    parser.add_argument(
        "--emit",
        choices=["summary", "jsonl", "mqtt"],
        default="summary",
        help="summary: hands, results, alerts by code and voids (default, at once); "
        "jsonl: one {topic, payload} per line on stdout; mqtt: publish to the config's broker",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a scannerd config: its [rules] override the recording's; its [mqtt] is where --emit mqtt goes",
    )
    parser.add_argument(
        "--table-id",
        type=arguments.table_id,
        metavar="ID",
        help="publish as this table (default: the recording's; with --emit mqtt, '<that>-replay')",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=arguments.positive_int,
        metavar="N",
        help="with a directory: replay N files at a time, each in its own process (default: every core)",
    )
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="with a directory: replay on the Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tcp://10.0.0.5:8786; its workers must see the same paths; needs the 'dask' extra)",
    )


def run(args: argparse.Namespace) -> int:
    rules: dict[str, Any] = {}
    mqtt = MqttSettings()
    log_settings = LogSettings(level="warning")
    if args.config is not None:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            print(exc, file=sys.stderr)
            return EXIT_BAD_INPUT
        rules = config.rules.model_dump(include=config.rules.model_fields_set)
        mqtt = config.mqtt
        log_settings = config.log
    # Logs to stderr (or the config's file), never into the messages on stdout.
    logs.configure(log_settings, args.table_id or "replay")
    if args.file.is_dir():
        return run_directory(args, rules, mqtt.prefix)
    try:
        with RecordingReader(args.file) as reader:
            table_id = args.table_id or reader.header.table_id + ("-replay" if args.emit == "mqtt" else "")
            stream = messages(reader, rules=rules, prefix=mqtt.prefix, table_id=table_id)
            batches: Iterable[list[Published]] = (
                list(group) for _, group in itertools.groupby(stream, key=lambda m: m.ts)
            )
            if not args.fast and args.emit != "summary":  # a summary is for now, not at the table's pace
                batches = paced(batches, args.speed)
            if args.emit == "summary":
                sys.stdout.write(summary_text(args.file, reader.header, stream))
                status = 0
            elif args.emit == "jsonl":
                status = emit_jsonl(batches, flush_each=not args.fast)
            else:
                status = emit_mqtt(batches, mqtt, table_id)
            for note in reader_notes(reader):
                _note(note)
            return status
    except (RecordingError, DriverInitError) as exc:
        _note(str(exc))
        return EXIT_BAD_INPUT


def run_directory(args: argparse.Namespace, rules: dict[str, Any], prefix: str) -> int:
    """Each recording in a directory as a replay of it alone prints it; a bad one is named and skipped."""
    if args.emit == "mqtt":
        _note(f"{args.file} is a directory: --emit mqtt publishes one recording at a time")
        return EXIT_BAD_INPUT
    try:
        paths = recordings_under([args.file])
    except RecordingError as exc:
        _note(str(exc))
        return EXIT_BAD_INPUT
    try:
        executor, release = executor_for(args.cluster, args.workers, len(paths))
    except ClusterUnavailable as exc:
        _note(str(exc))
        return EXIT_BAD_INPUT
    failed = False

    def texts() -> Iterator[str]:
        nonlocal failed
        options = {"emit": args.emit, "rules": rules, "prefix": prefix, "table_id": args.table_id}
        for result in replay_many(paths, executor, **options):
            for note in result.notes:
                _note(note)
            failed |= result.failed
            yield result.text

    try:
        write_out(texts(), flush_each=True)
    finally:
        release()
    return EXIT_BAD_INPUT if failed else 0


def _note(text: str) -> None:
    print(f"replay: {text}", file=sys.stderr)


def paced(
    batches: Iterable[list[Published]],
    speed: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[list[Published]]:
    """Hold each batch of messages until its recorded time, scaled by ``speed``, has come."""
    origin: tuple[float, float] | None = None
    for batch in batches:
        ts = batch[0].ts
        if origin is None:
            origin = (ts, clock())
        delay = (ts - origin[0]) / speed - (clock() - origin[1])
        if delay > 0:
            sleep(delay)
        yield batch


def emit_jsonl(batches: Iterable[list[Published]], flush_each: bool = False) -> int:
    write_out(("".join(message.to_json() + "\n" for message in batch) for batch in batches), flush_each)
    return 0


def write_out(texts: Iterable[str], flush_each: bool = False) -> None:
    """Text to stdout until it ends or the reader goes away."""
    out = sys.stdout
    try:
        for text in texts:
            out.write(text)
            if flush_each:
                out.flush()
        out.flush()
    except BrokenPipeError:  # `| head` closed the pipe: that is the reader's choice, not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's own flush at exit


def emit_mqtt(batches: Iterable[list[Published]], settings: MqttSettings, table_id: str) -> int:
    """Publish through the daemon's own publisher and a throwaway outbox, so order and QoS are as live."""
    from scannerd.link.publisher import Publisher
    from scannerd.store.outbox import Outbox

    # Its own client id and no lingering session: the live table's session must stay untouched.
    settings = settings.model_copy(
        update={"client_id": f"scannerd-replay-{os.getpid()}", "session_expiry_s": 0}
    )
    with tempfile.TemporaryDirectory(prefix="scannerd-replay-") as tmp:
        outbox = Outbox(Path(tmp) / "outbox.sqlite3")
        publisher = Publisher(settings, table_id, outbox)
        publisher.start()
        try:
            if not _wait(lambda: publisher.connected, CONNECT_TIMEOUT_S):
                _note(f"no broker at {settings.host}:{settings.port}")
                return EXIT_MQTT

            def send(events: list[EventData]) -> None:
                # A throwaway outbox: nothing to sync, nothing waits for the disk.
                publisher.send(outbox.write(publisher.topics.messages(events)))

            for batch in batches:
                events: list[EventData] = []
                for message in batch:
                    if isinstance(message.source, Response):
                        if events:
                            send(events)
                        events = []
                        publisher.send_answer(message.source)
                    else:
                        events.append(message.source)
                if events:
                    send(events)
            if not publisher.flush(FLUSH_TIMEOUT_S):
                _note("the broker did not acknowledge every event in time")
                return EXIT_MQTT
            return 0
        finally:
            publisher.stop()
            outbox.close()


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
