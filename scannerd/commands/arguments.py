"""Argument types shared by the commands: a bad value is refused by argparse, in one line, at once.

Without them a mistyped ``--table-id`` surfaced as a traceback deep in the
topic mapping, and ``--shoes 0`` meant "deal forever" to the simulator.
"""

from __future__ import annotations

import argparse
import math
import ssl
from pathlib import Path
from typing import get_args

from pydantic import ValidationError

from scannerd.archive.bucket import Reach
from scannerd.archive.settings import ArchiveSettings
from scannerd.client import BrokerRefused, ProtocolRefused
from scannerd.contract.idents import TABLE_ID_RULE, check_table_id
from scannerd.contract.topics import DEFAULT_PREFIX
from scannerd.core.house import GameName, HouseRules
from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings, MqttVersion
from scannerd.settings.config_errors import describe


def table_id(value: str) -> str:
    """A table id as the config allows it, since it becomes a topic level and a file name."""
    try:
        return check_table_id(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a table id: {TABLE_ID_RULE}") from None


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    return number


def positive_float(value: str) -> float:
    number = _number(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be above 0")
    return number


def non_negative_float(value: str) -> float:
    number = _number(value)
    if not 0 <= number < math.inf:
        raise argparse.ArgumentTypeError(f"{value!r} must be 0 or more")
    return number


def fraction(value: str) -> float:
    """A chance, from 0 to 1."""
    number = _number(value)
    if not 0 <= number <= 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be from 0 to 1")
    return number


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None


def listen_address(value: str) -> str:
    """``HOST:PORT`` as ``[display] listen`` takes it."""
    try:
        DisplaySettings(listen=value)
    except ValidationError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected HOST:PORT (or [IPv6]:PORT)") from None
    return value


def port_number(value: str) -> int:
    number = positive_int(value)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number (1-65535)")
    return number


def topic_prefix(value: str) -> str:
    """A topic prefix as ``[mqtt] prefix`` takes it: no wildcards, no leading or trailing '/'."""
    try:
        MqttSettings(prefix=value)
    except ValidationError:
        raise argparse.ArgumentTypeError(
            f"{value!r}: a topic prefix has no wildcards and no leading or trailing '/'"
        ) from None
    return value


def host_name(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("the host name is empty")
    return value


def add_archive_reading(parser: argparse.ArgumentParser) -> None:
    """How a command reads an archive named ``s3://BUCKET/PREFIX`` beside paths (archive/reading.py)."""
    parser.add_argument(
        "--endpoint",
        metavar="URL",
        help="the S3 API of the archive named s3://... (default: $AWS_ENDPOINT_URL, else Amazon S3); "
        "who reads it: the standard AWS credentials of the environment",
    )
    parser.add_argument(
        "--retention-days",
        type=positive_int,
        default=ArchiveSettings.model_fields["retention_days"].default,
        metavar="DAYS",
        help="the house's retention: each recording in the archive must be locked this long from its "
        "upload (default: %(default)s)",
    )


def archive_reach(args: argparse.Namespace) -> Reach:
    return Reach(args.endpoint)


def add_shuffle(parser: argparse.ArgumentParser) -> None:
    """``--shuffle`` and ``--first-shoe``: how the simulated dealer makes its shoes (docs/shuffle.md)."""
    from simulators.shuffles import FIRST_SHOES, KINDS  # the simulator's: only commands that run it

    parser.add_argument(
        "--shuffle",
        choices=KINDS,
        help="how each shoe after the first is shuffled (default: random, or the scenario's)",
    )
    parser.add_argument(
        "--first-shoe",
        choices=FIRST_SHOES,
        help="how the first shoe is made from new decks (default: random, or the scenario's)",
    )


def add_game(parser: argparse.ArgumentParser) -> None:
    """``--game`` and ``--commission``: what the simulated table deals (docs/rules.md)."""
    parser.add_argument("--game", choices=get_args(GameName), help="the game dealt (default: punto_banco)")
    parser.add_argument(
        "--commission",
        choices=get_args(HouseRules.model_fields["commission"].annotation),
        help="punto banco's variant (default: standard)",
    )


def game_rules(house: HouseRules, args: argparse.Namespace) -> HouseRules:
    """``house`` with the game and commission the command line gives, checked as a config's would be."""
    given = {k: v for k, v in (("game", args.game), ("commission", args.commission)) if v is not None}
    try:
        return house.with_changes(given) if given else house
    except ValidationError as exc:  # Dragon Tiger with a commission: one line, as a config's error
        raise ValueError(describe(exc, HouseRules)) from None


BROKER_WAIT_S = 10.0


def add_broker_wait(parser: argparse._ActionsContainer) -> None:
    """``--broker-wait``: a broker restarting at the same moment is waited for, not reported at once."""
    parser.add_argument(
        "--broker-wait",
        type=positive_float,
        default=BROKER_WAIT_S,
        metavar="SECONDS",
        help=f"how long to wait for the broker at start (default {BROKER_WAIT_S:g})",
    )


def add_broker_arguments(parser: argparse.ArgumentParser, protocol: MqttVersion) -> None:
    """Where a tool that listens to the tables finds them (broker, topic prefix) and who it is there.

    The login and TLS options are those of the tables' ``[mqtt]`` section: a casino's broker
    lets no one in anonymously (systemd/mosquitto-scannerd.conf.example). ``protocol`` is the
    MQTT version the tool speaks unless told otherwise, its own choice.
    """
    default = DEFAULT_PREFIX
    parser.add_argument("--host", type=host_name, default="localhost", help="broker host (default localhost)")
    parser.add_argument("--port", type=port_number, default=1883, help="broker port (default 1883)")
    parser.add_argument(
        "--prefix", type=topic_prefix, default=default, help=f"topic prefix (default {default})"
    )
    parser.add_argument(
        "--protocol",
        choices=get_args(MqttVersion),
        default=protocol,
        help=f"MQTT version (default {protocol}; 3.1.1 for a broker without MQTT 5, as the demo's)",
    )
    parser.add_argument("--username", help="broker user name (its ACL says what it may read and ask)")
    parser.add_argument("--password-file", type=Path, help="file whose first line is the broker password")
    parser.add_argument("--tls", action="store_true", help="connect with TLS (the broker's name is checked)")
    parser.add_argument("--tls-ca", type=Path, help="CA certificate to trust (implies --tls)")


def broker_settings(args: argparse.Namespace) -> MqttSettings:
    """The ``[mqtt]`` settings that :func:`add_broker_arguments`' options name.

    ValueError, in one line, for options that do not go together or a file named that cannot be
    read: said before connecting, not as a refused login or a traceback later.
    """
    try:
        settings = MqttSettings(
            host=args.host,
            port=args.port,
            prefix=args.prefix,
            protocol=args.protocol,
            username=args.username,
            password_file=args.password_file,
            tls=args.tls or args.tls_ca is not None,
            tls_ca=args.tls_ca,
        )
    except ValidationError as exc:
        raise ValueError(exc.errors(include_url=False)[0]["msg"]) from None
    # Each file read now as the client will read it (the password by the same function), so
    # what would fail there is one line here.
    try:
        settings.password()
    except OSError as exc:
        where = settings.password_path()
        raise ValueError(f"cannot read the password file {where}: {exc.strerror}") from None
    if args.tls_ca is not None:
        try:
            ssl.create_default_context(cafile=args.tls_ca)  # what the client's TLS set-up does with it
        except ssl.SSLError:  # an OSError too: the file was read, and holds no certificate
            raise ValueError(f"the CA certificate {args.tls_ca} holds no certificate in PEM form") from None
        except OSError as exc:
            raise ValueError(f"cannot read the CA certificate {args.tls_ca}: {exc.strerror}") from None
    return settings


def refusal_line(refusal: BrokerRefused) -> str:
    """A broker's refusal as a command says it: a version refused names the option that picks the other."""
    if isinstance(refusal, ProtocolRefused):
        other = next(version for version in get_args(MqttVersion) if version != refusal.version)
        return f"{refusal} (try --protocol {other})"
    return str(refusal)
