"""The daemon's configuration: one TOML file, any key overridable from the environment.

Everything a table PC can be told lives in :class:`Config`, so that ``scannerd
check-config`` judges a file exactly as ``scannerd run`` would. Unknown keys are
errors: a typo in a casino's config must not silently fall back to a default.

Precedence, highest first: ``SCANNERD_*`` environment variables (``__`` between
nesting levels, e.g. ``SCANNERD_MQTT__HOST``), then the TOML file, then defaults.

The file's values are taken strictly as typed (``decks = "8"`` is an error, not
8): a quoted number or ``enabled = "yes"`` is a mistake worth a word. The
environment is text by nature, so its values are read as their key's type.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from drivers.base import DriverInitError
from drivers.registry import create_driver, driver_names
from drivers.usb_match import UsbPortMatch
from scannerd.config_errors import describe, section_type
from scannerd.durations import seconds
from scannerd.house import HouseRules
from scannerd.idents import TOO_MANY_DIGITS, TableId
from scannerd.mqtt_settings import FilePath, MqttSettings, OutboxSettings

DEFAULT_PATH = Path("/etc/scannerd/scannerd.toml")
ENV_PREFIX = "SCANNERD_"
EXIT_CONFIG = 2
"""Exit status for a bad config; the units do not restart on it (RestartPreventExitStatus=2)."""

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class DeviceSettings(_Section):
    """Which shoe or scanner to read, and how to reach it."""

    driver: str = Field(description="A registered driver's name (the built-in ones: docs/devices.md).")
    port: str = Field(
        description="A device path (/dev/shoe-1), a pyserial URL (socket://host:port, rfc2217://...) "
        "or a USB selector usb:VID:PID[:SERIAL] (hex ids)."
    )
    baudrate: int | None = Field(
        None, gt=0, le=10_000_000, description="Serial speed; None for the driver's default."
    )
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Driver-specific settings, passed to the driver as given."
    )
    stale_after_s: float = seconds(
        5.0,
        0.5,
        3600,
        "A device that sends heartbeats and goes this long without a word counts as "
        "disconnected (a cable pulled at the shoe end of an adapter that stays plugged in).",
    )

    @field_validator("driver")
    @classmethod
    def _known_driver(cls, driver: str) -> str:
        known = driver_names()
        if driver not in known:
            raise ValueError(f"unknown driver {driver!r}; known: {', '.join(known)}")
        return driver

    @field_validator("port")
    @classmethod
    def _port_shape(cls, port: str) -> str:
        if port.startswith("usb:"):
            try:
                UsbPortMatch.parse(port)
            except DriverInitError as exc:
                raise ValueError(str(exc)) from None
        elif not (port.startswith("/") or _URL.match(port)):
            raise ValueError(
                "expected a device path (/dev/...), a pyserial URL (scheme://...) or usb:VID:PID[:SERIAL]"
            )
        return port

    def driver_options(self) -> dict[str, Any]:
        """The keyword arguments the driver is built with: ``options``, and ``baudrate`` when set."""
        options: dict[str, Any] = dict(self.options)
        if self.baudrate is not None:
            options["baudrate"] = self.baudrate
        return options

    @model_validator(mode="after")
    def _driver_takes_it(self) -> DeviceSettings:
        # The driver judges its own port and options (a USB driver on a /dev path, an unknown linecode
        # table), so check-config refuses what `run` would fail on, and systemd does not restart into it.
        try:
            create_driver(self.driver, self.port, **self.driver_options())
        except DriverInitError as exc:
            raise ValueError(str(exc)) from None
        return self


class RecordSettings(_Section):
    """Recording of raw device traffic for replay (docs/recording.md)."""

    dir: FilePath | None = Field(None, description="Directory for recordings; None to record nothing.")
    rotate: Literal["shoe", "day"] = Field("shoe", description="Start a new file per shoe or per day.")
    compress: bool = Field(True, description="Gzip finished recordings.")
    key_file: FilePath | None = Field(
        None,
        description="File holding the Ed25519 private key (PEM, made by scannerd keygen) that signs each "
        "finished recording. A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/recording-key if it exists, else files are chained but not signed.",
    )


class DisplaySettings(_Section):
    """The dealer display web page."""

    enabled: bool = True
    listen: str = Field("127.0.0.1:8080", description="HOST:PORT, or [IPv6]:PORT; port 0 picks a free one.")
    max_connections: int = Field(
        8,
        ge=1,
        le=256,
        description="Browser connections served at once (a kiosk page needs two); more are answered "
        "503, so the display can never use the descriptors the shoe and the broker need.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names the page is opened under, besides IP addresses and localhost; "
        "a request naming any other host is refused (DNS rebinding).",
    )
    token_file: Path | None = Field(
        None,
        description="File holding a token (first line) that acknowledging needs, for a display "
        "on another machine. A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/display-token if it exists, else no token.",
    )

    @field_validator("listen")
    @classmethod
    def _listen_shape(cls, listen: str) -> str:
        _split_listen(listen)
        return listen

    @field_validator("token_file", mode="before")
    @classmethod
    def _path_from_text(cls, value: object) -> object:
        return Path(value) if isinstance(value, str) else value  # TOML has no path type

    @property
    def host(self) -> str:
        return _split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        return _split_listen(self.listen)[1]


def _split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("expected HOST:PORT (or [IPv6]:PORT) with a port from 0 to 65535")
    return host, int(port)


LogLevel = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)


class LogSettings(_Section):
    """Where log lines go and how they look."""

    level: LogLevel = "info"
    format: Literal["auto", "console", "json"] = Field(
        "auto", description="'auto': readable on a terminal, JSON lines otherwise (journald, files)."
    )
    file: FilePath | None = Field(
        None, description="Append to this file instead of stderr; SIGHUP reopens it."
    )

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, level: object) -> object:
        return level.lower() if isinstance(level, str) else level


class Config(BaseSettings):
    """The whole configuration of one table's daemon."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        strict=True,
    )

    table_id: TableId = Field(description="This table's id: topic level, log field.")
    device: DeviceSettings
    rules: HouseRules = Field(default_factory=HouseRules)
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    outbox: OutboxSettings = Field(default_factory=OutboxSettings)
    record: RecordSettings = Field(default_factory=RecordSettings)
    display: DisplaySettings = Field(default_factory=DisplaySettings)
    log: LogSettings = Field(default_factory=LogSettings)

    def warnings(self, environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
        """Allowed but unsafe settings as (key, problem); the daemon runs with them, and says so."""
        return [("mqtt", text) for text in self.mqtt.warnings(environ)]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # No .env or secrets-dir lookups: what configures a table is the file and the environment.
        return (init_settings, env_settings)


class ConfigError(Exception):
    """A configuration that cannot be used; ``str()`` is the one line to show the operator."""


def load_config(path: Path | str = DEFAULT_PATH) -> Config:
    """Read ``path`` and apply the process's ``SCANNERD_*`` environment overrides.

    Raises :class:`ConfigError` with a single line naming the file, the key and the problem.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            tomllib.load(f)  # fail here, naming the file, rather than deep inside the settings source
    except OSError as exc:
        raise ConfigError(f"config error: {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(_one_line(f"config error: {path}: {exc}")) from None
    except ValueError:  # not the parser's own error: an integer too long to convert
        raise ConfigError(f"config error: {path}: {TOO_MANY_DIGITS}") from None
    except RecursionError:
        raise ConfigError(f"config error: {path}: arrays or tables nested too deeply") from None
    overrides = _env_overrides()
    for name, key in overrides.items():
        if key.split(".")[0] not in Config.model_fields:
            raise ConfigError(f"config error: {name}: unknown key {key!r} in the environment")
    try:
        sources = (_TypedEnvSource(Config), TomlConfigSettingsSource(Config, toml_file=path))
        return Config(_build_sources=(sources, {}))
    except ValidationError as exc:
        raise ConfigError(_one_line(f"config error: {path}: " + describe(exc, Config, overrides))) from None
    except RecursionError:  # a section given as JSON: name the variables that hold JSON
        names = (
            ", ".join(n for n in overrides if os.environ[n].lstrip()[:1] in ("[", "{")) or ENV_PREFIX + "*"
        )
        raise ConfigError(f"config error: {names}: nested too deeply") from None
    except SettingsError as exc:
        # Raised when a whole section set from the environment is not JSON, or holds (or is) a number
        # too long to convert: the settings source tries every value of a section as JSON.
        field = re.search(r'field "(\w+)"', str(exc))
        cause = exc.__cause__
        if field and isinstance(cause, ValueError) and not isinstance(cause, json.JSONDecodeError):
            raise ConfigError(f"config error: {ENV_PREFIX}{field[1].upper()}...: {TOO_MANY_DIGITS}") from None
        if field:
            raise ConfigError(
                f"config error: {ENV_PREFIX}{field[1].upper()}: a section set from the environment must be "
                f"a JSON object (or set its keys one by one: {ENV_PREFIX}{field[1].upper()}__KEY)"
            ) from None
        raise ConfigError(_one_line(f"config error: {exc}")) from None


class _TypedEnvSource(EnvSettingsSource):
    """The environment, each value read as its key's type: "6" is 6 for ``decks``, as it cannot be typed."""

    def __call__(self) -> dict[str, Any]:
        return _as_typed(super().__call__(), Config)


def _as_typed(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    typed = dict(data)
    for name, value in data.items():
        field = model.model_fields.get(name)
        if field is None:
            continue  # an unknown key: validation names it
        section = section_type(field.annotation)
        if isinstance(value, dict) and isinstance(section, type) and issubclass(section, BaseModel):
            typed[name] = _as_typed(value, section)
        elif isinstance(value, str) and section is None:
            # Text that is not of the key's type stays text: the strict validation then names the problem.
            with contextlib.suppress(ValidationError):
                typed[name] = TypeAdapter(field.annotation).validate_python(value, strict=False)
    return typed


def load_config_or_report(path: Path | str) -> Config | None:
    """For commands: the config, or None after printing its one-line error to stderr."""
    try:
        return load_config(path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return None


def _env_overrides() -> dict[str, str]:
    """``SCANNERD_*`` variable name -> the dotted key it sets (``SCANNERD_MQTT__HOST`` -> ``mqtt.host``)."""
    return {
        name: name[len(ENV_PREFIX) :].lower().replace("__", ".")
        for name in os.environ
        if name.upper().startswith(ENV_PREFIX)
    }


def _one_line(text: str) -> str:
    return " ".join(text.split())


MASK = "**********"
_SECRET_NAME = re.compile(r"password|passwd|secret|token|credential", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether a key names a secret value (a ``*_file``/``*_path``/``*_dir`` only names where one is)."""
    return bool(_SECRET_NAME.search(name)) and not name.endswith(("_file", "_path", "_dir"))


def redact(data: Any) -> Any:
    """``data`` with every secret-named value masked, at any depth; used for display and logs."""
    if isinstance(data, Mapping):
        return {k: MASK if is_secret_name(str(k)) and v else redact(v) for k, v in data.items()}
    if isinstance(data, list):
        return [redact(v) for v in data]
    if type(data) is tuple:
        return tuple(redact(v) for v in data)
    return data


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--config FILE`` option, the same for every command that reads the config."""
    parser.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_PATH,
        metavar="FILE",
        help=f"config file (default {DEFAULT_PATH}); SCANNERD_* environment variables override its keys",
    )
