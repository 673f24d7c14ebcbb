"""The daemon's configuration: one TOML file, any key overridable from the environment.

Everything a table PC can be told lives in :class:`Config`, so that ``scannerd
check-config`` judges a file exactly as ``scannerd run`` would. Unknown keys are
errors: a typo in a casino's config must not silently fall back to a default.

Precedence, highest first: ``SCANNERD_*`` environment variables (``__`` between
nesting levels, e.g. ``SCANNERD_MQTT__HOST``), then the TOML file, then defaults.

The file's values are taken strictly as typed (``decks = "8"`` is an error, not
8): a quoted number or ``enabled = "yes"`` is a mistake worth a word. The
environment is text by nature, so its values are read as their key's type.

Each section is declared beside the code it configures (the imports below
say where), on the strict base in ``config_section.py``. This module only
assembles them, reads the file and the environment, and words the problems.
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
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from scannerd.archive.settings import ArchiveSettings
from scannerd.contract.idents import TableId
from scannerd.core.house import HouseRules
from scannerd.display.settings import DisplaySettings, OverlaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.recording.settings import RecordSettings
from scannerd.runtime.clock_sync import ClockSettings
from scannerd.runtime.device_settings import DeviceSettings
from scannerd.runtime.log_settings import LogSettings
from scannerd.runtime.metrics_settings import MetricsSettings
from scannerd.settings.config_errors import TOO_MANY_DIGITS, describe, section_type
from scannerd.staff.settings import StaffSettings
from scannerd.store.outbox_settings import OutboxSettings

DEFAULT_PATH = Path("/etc/scannerd/scannerd.toml")
ENV_PREFIX = "SCANNERD_"
EXIT_CONFIG = 2
"""Exit status for a bad config; the units do not restart on it (RestartPreventExitStatus=2)."""


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
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    display: DisplaySettings = Field(default_factory=DisplaySettings)
    overlay: OverlaySettings = Field(default_factory=OverlaySettings)
    staff: StaffSettings = Field(default_factory=StaffSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    clock: ClockSettings = Field(default_factory=ClockSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)

    @model_validator(mode="after")
    def _overlay_needs_display(self) -> Config:
        if self.overlay.listen is not None and not self.display.enabled:
            raise ValueError("[overlay] listen needs [display] enabled: the display's server serves it")
        if self.archive.url is not None and self.record.dir is None:
            raise ValueError("[archive] url needs [record] dir: the archive takes the table's recordings")
        return self

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
        elif isinstance(value, str) and section is None and field.annotation is not None:
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
