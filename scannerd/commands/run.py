"""``scannerd run``: the daemon, as systemd (or a terminal) runs it.

Order matters: the config first (a bad one exits 2 before anything starts, so
systemd does not restart into the same error), then logging (which needs the
table id), then the daemon inside the service shell.
"""

from __future__ import annotations

import argparse
import sys

import structlog

from scannerd import __version__
from scannerd.runtime import logs
from scannerd.runtime.config import EXIT_CONFIG, add_config_argument, load_config_or_report
from scannerd.runtime.descriptors import raise_fd_limit
from scannerd.runtime.log_settings import LOG_LEVELS
from scannerd.runtime.sdnotify import Notifier
from scannerd.runtime.service import EXIT_FAILURE, Service


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="overrides [log] level from the config",
    )


def run(args: argparse.Namespace) -> int:
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_CONFIG
    try:
        output = logs.configure(config.log, config.table_id, args.log_level)
    except OSError as exc:  # [log] file in a directory that is not there, or not ours
        print(
            f"scannerd run: cannot open the log file {config.log.file}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    log = structlog.get_logger("scannerd")
    log.info(
        "starting",
        version=__version__,
        config=str(args.config),
        driver=config.device.driver,
        port=config.device.port,
    )
    for key, problem in config.warnings():
        log.warning("config warning", key=key, problem=problem)

    from scannerd.runtime.daemon import (
        Daemon,  # the heavy imports (drivers, MQTT, web) only once config is good
    )
    from scannerd.runtime.instance_lock import AlreadyRunning
    from scannerd.staff.roster import StaffListError

    raise_fd_limit()
    notifier = Notifier()
    try:
        daemon = Daemon(config)
    except AlreadyRunning as exc:
        log.error(str(exc))
        return EXIT_FAILURE
    except StaffListError as exc:  # fixed by the house, not by starting again: no restart loop
        log.error(str(exc))
        return EXIT_CONFIG
    except OSError as exc:  # a file it needs: the outbox's directory, the password, a TLS file
        log.error(
            "daemon could not be built", error=f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
        )
        return EXIT_FAILURE
    except Exception:
        log.exception("daemon could not be built")
        return EXIT_FAILURE
    try:
        return Service(daemon, notifier, reopen_logs=output.reopen).run()
    finally:
        notifier.close()
