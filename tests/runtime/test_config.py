"""The config file, its environment overrides, and what a bad one looks like to an operator."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel

from scannerd.runtime.config import Config, ConfigError, load_config, redact
from tests.support.docs import markdown_table

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "systemd" / "scannerd.toml.example"

MINIMAL = """\
table_id = "T-1"
[device]
driver = "beetek"
port = "/dev/shoe-1"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scannerd.toml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(autouse=True)
def _no_scannerd_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("SCANNERD_"):
            monkeypatch.delenv(name)


def scannerd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("SCANNERD_")}
    return subprocess.run(
        [sys.executable, "-m", "scannerd", *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=60,
    )


# ---------------------------------------------------------------- loading


def test_minimal_file_takes_defaults_for_everything_else(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.table_id == "T-1"
    assert config.device.port == "/dev/shoe-1"
    assert config.rules.decks == 8
    assert config.mqtt.host == "localhost"
    assert config.display.host == "127.0.0.1" and config.display.port == 8080
    assert config.log.format == "auto"


def test_every_section_is_read(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            MINIMAL
            + """
            [rules]
            decks = 6
            burn = 3
            [mqtt]
            host = "broker.casino"
            port = 8883
            tls = true
            [outbox]
            path = "/var/lib/scannerd/t1.sqlite3"
            [record]
            dir = "/var/lib/scannerd/rec"
            rotate = "day"
            [display]
            listen = "[::1]:0"
            [log]
            level = "DEBUG"
            format = "json"
            """,
        )
    )
    assert config.rules.decks == 6 and config.rules.burn == 3
    assert (config.mqtt.host, config.mqtt.port, config.mqtt.tls) == ("broker.casino", 8883, True)
    assert config.outbox.path == Path("/var/lib/scannerd/t1.sqlite3")
    assert config.record.dir == Path("/var/lib/scannerd/rec") and config.record.rotate == "day"
    assert (config.display.host, config.display.port) == ("::1", 0)
    assert config.log.level == "debug"


@pytest.mark.parametrize("port", ["/dev/shoe-1", "socket://10.0.0.5:4001", "loop://", "usb:0403:6001:A9XK"])
def test_port_forms(tmp_path: Path, port: str) -> None:
    text = MINIMAL.replace('"/dev/shoe-1"', json.dumps(port))
    assert load_config(write(tmp_path, text)).device.port == port


# ---------------------------------------------------------------- environment


def test_environment_overrides_file_keys_and_nested_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, MINIMAL + '[mqtt]\nhost = "from-file"\nport = 1884\n')
    monkeypatch.setenv("SCANNERD_MQTT__HOST", "from-env")
    monkeypatch.setenv("SCANNERD_TABLE_ID", "T-2")
    monkeypatch.setenv("SCANNERD_RULES__DECKS", "6")
    config = load_config(path)
    assert config.mqtt.host == "from-env"
    assert config.mqtt.port == 1884  # the rest of the section still comes from the file
    assert config.table_id == "T-2"
    assert config.rules.decks == 6


def test_environment_override_seen_by_check_config_subprocess(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    result = scannerd(
        "check-config", "--config", str(path), "--show", env={"SCANNERD_MQTT__HOST": "b.example"}
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["mqtt"]["host"] == "b.example"


def test_show_prints_every_key_an_unset_one_as_null(tmp_path: Path) -> None:
    # betting_time_s is left out of recording headers while unset; --show must still print it.
    result = scannerd("check-config", "--config", str(write(tmp_path, MINIMAL)), "--show")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    keys = {f"[{name}]": set(value) for name, value in shown.items() if isinstance(value, dict)}
    keys["(top)"] = {name for name, value in shown.items() if not isinstance(value, dict)}
    assert keys == _sections()
    assert shown["rules"]["betting_time_s"] is None and shown["rules"]["cut_card_remaining"] is None
    assert shown["rules"]["commission"] == "standard"  # a default recording headers leave out
    timed = write(tmp_path, MINIMAL + "[rules]\nbetting_time_s = 15\n")
    shown = json.loads(scannerd("check-config", "--config", str(timed), "--show").stdout)
    assert shown["rules"]["betting_time_s"] == 15.0


# ---------------------------------------------------------------- bad configs: exit 2, one line

BAD = [
    ("rules.decks: must be from 1 to 12", MINIMAL + "[rules]\ndecks = 0\n", {}),
    ("device.porty: unknown key", MINIMAL + 'porty = "x"\n', {}),
    ("mqtts: unknown key", MINIMAL + "[mqtts]\nhost = 'x'\n", {}),
    ("table_id: required key is missing", '[device]\ndriver = "beetek"\nport = "/dev/x"\n', {}),
    (
        "table_id: use letters, digits, '_', '.' and '-', starting with a letter or digit (1-64 characters)",
        MINIMAL.replace('"T-1"', '"T/1"'),
        {},
    ),
    ("device.driver: unknown driver 'beeteck'", MINIMAL.replace('"beetek"', '"beeteck"'), {}),
    ("device.port: expected a device path", MINIMAL.replace('"/dev/shoe-1"', '"COM3"'), {}),
    ("device.port: bad USB match", MINIMAL.replace('"/dev/shoe-1"', '"usb:zz:1"'), {}),
    (
        "rules.burn: expected 'first-card-value' or 'none', or a whole number",
        MINIMAL + '[rules]\nburn = "x"\n',
        {},
    ),
    (
        "rules.burn: expected 'first-card-value' or 'none', or a number from 0 to 60",
        MINIMAL + "[rules]\nburn = 99\n",
        {},
    ),
    ("mqtt.port: must be from 1 to 65535", MINIMAL + "[mqtt]\nport = 70000\n", {}),
    ("mqtt: tls_cert and tls_key go together", MINIMAL + "[mqtt]\ntls = true\ntls_cert = '/c'\n", {}),
    ("display.listen: expected HOST:PORT", MINIMAL + "[display]\nlisten = '8080'\n", {}),
    ("log.format: expected 'auto', 'console' or 'json'", MINIMAL + "[log]\nformat = 'xml'\n", {}),
    ("record.rotate: expected 'shoe' or 'day'", MINIMAL + "[record]\nrotate = 'hour'\n", {}),
    # The driver itself judges its port and options, so check-config catches what `run` would fail on.
    ("device: usb-hid needs a channel usb:VID:PID", MINIMAL.replace('"beetek"', '"usb-hid"'), {}),
    (
        "device: linecode table: unknown code table 'nonsense'",
        MINIMAL.replace('"beetek"', '"linecode"') + 'options = { table = "nonsense" }\n',
        {},
    ),
    ("Expected '=' after a key", MINIMAL + "[rules]\ndecks 8\n", {}),
    (
        "rules.decks: expected a whole number (from SCANNERD_RULES__DECKS)",
        MINIMAL,
        {"SCANNERD_RULES__DECKS": "eight"},
    ),
    ("SCANNERD_MQTT_HOST: unknown key 'mqtt_host'", MINIMAL, {"SCANNERD_MQTT_HOST": "b"}),
    ("mqtt.hots: unknown key (from SCANNERD_MQTT__HOTS)", MINIMAL, {"SCANNERD_MQTT__HOTS": "b"}),
    (
        "SCANNERD_DEVICE: a section set from the environment must be a JSON object",
        MINIMAL,
        {"SCANNERD_DEVICE": "{"},
    ),
]


def assert_config_error(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("config error: ")
    assert expected in lines[0]


@pytest.mark.parametrize(("expected", "text", "env"), BAD, ids=[b[0][:40] for b in BAD])
def test_bad_config_stops_run_with_exit_2_and_one_line(
    tmp_path: Path, expected: str, text: str, env: dict[str, str]
) -> None:
    result = scannerd("run", "--config", str(write(tmp_path, text)), env=env)
    assert_config_error(result, expected)


@pytest.mark.parametrize(("expected", "text", "env"), [BAD[0], BAD[-2]], ids=["file", "environment"])
def test_check_config_judges_as_run_does(
    tmp_path: Path, expected: str, text: str, env: dict[str, str]
) -> None:
    result = scannerd("check-config", "--config", str(write(tmp_path, text)), env=env)
    assert_config_error(result, expected)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    result = scannerd("check-config", "--config", str(tmp_path / "nope.toml"))
    assert result.returncode == 2
    assert result.stderr == f"config error: {tmp_path / 'nope.toml'}: No such file or directory\n"


def test_several_problems_stay_on_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, MINIMAL + "[rules]\ndecks = 0\nlast_hand = 'never'\n"))
    message = str(caught.value)
    assert "\n" not in message
    assert "rules.decks:" in message and "rules.last_hand:" in message


# ---------------------------------------------------------------- durations, types, ids, numbers

DURATIONS = {
    "device.stale_after_s": ("0.5 to 3600", "[device]", 5.0),
    "rules.stall_timeout_s": ("1 to 3600", "[rules]", 30.0),
    "rules.reveal_timeout_s": ("1 to 600", "[rules]", 60.0),
    "rules.confirm_within_s": ("1 to 600", "[rules]", 30.0),
    "rules.pin_lockout_s": ("1 to 86400", "[rules]", 300.0),
    "mqtt.health_interval_s": ("0.1 to 3600", "[mqtt]", 30.0),
    "clock.max_error_s": ("0.001 to 60", "[clock]", 0.1),
}


def _with_key(key: str, value: str) -> str:
    """MINIMAL with ``section.name = value`` added (``[device]`` is MINIMAL's last section)."""
    section, name = key.split(".")
    header = "" if section == "device" else f"[{section}]\n"
    return MINIMAL + f"{header}{name} = {value}\n"


def test_every_duration_in_the_config_has_a_finite_range() -> None:
    found = set()
    for section, fields in Config.model_fields.items():
        model = fields.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            found |= {f"{section}.{name}" for name, f in model.model_fields.items() if f.annotation is float}
    # Every float key is either one of these durations or a documented fraction.
    assert found == {*DURATIONS, "outbox.warn_fraction"}


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400", "0.0", "1e9"])
@pytest.mark.parametrize("key", DURATIONS)
def test_a_duration_outside_its_range_is_refused_naming_the_range(
    tmp_path: Path, key: str, value: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, _with_key(key, value)))
    assert f"{key}: must be from {DURATIONS[key][0]} seconds" in str(caught.value)


@pytest.mark.parametrize("key", DURATIONS)
def test_infinity_from_the_environment_is_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    name = "SCANNERD_" + key.upper().replace(".", "__")
    monkeypatch.setenv(name, "inf")
    with pytest.raises(
        ConfigError, match=f"{key}: must be from .* seconds, not inf or nan \\(from {name}\\)"
    ):
        load_config(write(tmp_path, MINIMAL))


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("mqtt.session_expiry_s", "4294967296", "must be from 0 to 4294967295 seconds"),
        ("mqtt.reconnect_max_s", "100000", "must be from 1 to 3600 seconds"),
        ("mqtt.reconnect_min_s", "100000", "must be from 1 to 3600 seconds"),
        ("outbox.warn_fraction", "nan", "must be more than 0, less than 1, not inf or nan"),
        ("outbox.max_bytes", "1e400", "expected a whole number"),
        ("rules.cut_card_remaining", "100000", "must be from 0 to 624"),
    ],
)
def test_other_numbers_have_finite_ranges_too(tmp_path: Path, key: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, _with_key(key, value)))
    assert f"{key}: {expected}" in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("rules.decks", '"8"', "rules.decks: expected a whole number, without quotes"),
        ("rules.decks", "8.0", "rules.decks: expected a whole number"),
        ("display.enabled", '"yes"', "display.enabled: expected true or false, without quotes"),
        ("record.compress", "1", "record.compress: expected true or false"),
        ("mqtt.port", '"1883"', "mqtt.port: expected a whole number, without quotes"),
        ("mqtt.health_interval_s", '"30"', "mqtt.health_interval_s: expected a number, without quotes"),
        ("mqtt.host", "10", "mqtt.host: expected text in quotes"),
        ("device.stale_after_s", "true", "device.stale_after_s: expected a number"),
        ("record.dir", "5", "record.dir: expected a path in quotes"),
        ("display.token_file", "5", "display.token_file: expected a path in quotes"),
        ("mqtt.client_id", '""', "mqtt.client_id: must not be empty"),
        ("mqtt.client_id", '"' + "x" * 129 + '"', "mqtt.client_id: must be at most 128 characters"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_not_converted(
    tmp_path: Path, key: str, value: str, expected: str
) -> None:
    result = scannerd("check-config", "--config", str(write(tmp_path, _with_key(key, value))))
    assert_config_error(result, expected)
    assert str(tmp_path / "scannerd.toml") in result.stderr


def test_the_environment_is_text_and_read_as_each_keys_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "SCANNERD_DISPLAY__ENABLED": "false",
        "SCANNERD_MQTT__HEALTH_INTERVAL_S": "2.5",
        "SCANNERD_RULES__BURN": "3",
        "SCANNERD_LOG__FILE": "/var/log/scannerd/t.log",
    }.items():
        monkeypatch.setenv(name, value)
    config = load_config(write(tmp_path, MINIMAL))
    assert config.display.enabled is False and config.mqtt.health_interval_s == 2.5
    assert config.rules.burn == 3 and config.log.file == Path("/var/log/scannerd/t.log")


def test_an_error_text_never_shows_a_regular_expression_or_pydantic_phrasing(tmp_path: Path) -> None:
    texts = []
    for _, text, env in BAD:
        with pytest.MonkeyPatch.context() as mp:
            for name, value in env.items():
                mp.setenv(name, value)
            with pytest.raises(ConfigError) as caught:
                load_config(write(tmp_path, text))
        texts.append(str(caught.value))
    for text in texts:
        assert not re.search(r"\^|\[A-Z|Input should|String should|valid integer|type=", text), text


@pytest.mark.parametrize(
    "table_id",
    ["T\\u0000-1", "T-1\\n", "T-\\u202e1", "B\\u0410C-01"],
    ids=["NUL", "final newline", "bidi override", "Cyrillic A"],
)
def test_a_table_id_with_a_hidden_or_foreign_character_is_refused(tmp_path: Path, table_id: str) -> None:
    with pytest.raises(ConfigError, match="table_id: use letters, digits"):
        load_config(write(tmp_path, MINIMAL.replace('"T-1"', f'"{table_id}"')))


@pytest.mark.parametrize(
    ("key", "value", "char"),
    [
        ("mqtt.prefix", '"casino/\\u202etables"', "U+202E (right-to-left override)"),
        ("mqtt.client_id", '"scannerd-\\u0000"', "U+0000"),
        ("mqtt.username", '"T\\u200b1"', "U+200B (zero width space)"),
        ("mqtt.host", '"broker\\u001b[2J"', "U+001B"),
    ],
)
def test_names_sent_to_the_broker_may_not_hide_characters(
    tmp_path: Path, key: str, value: str, char: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, _with_key(key, value)))
    assert f"{key}: must not contain {char}" in str(caught.value)


def test_a_number_too_long_to_convert_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, _with_key("mqtt.port", "1" + "0" * 5000))
    result = scannerd("check-config", "--config", str(path))
    assert_config_error(result, f"config error: {path}: a number has more than 4300 digits")


@pytest.mark.parametrize("name", ["SCANNERD_MQTT__PORT", "SCANNERD_MQTT"])
def test_a_number_too_long_in_the_environment_is_one_line_naming_the_variable(
    tmp_path: Path, name: str
) -> None:
    digits = "1" + "0" * 5000
    value = digits if name.endswith("PORT") else f'{{"port": {digits}}}'
    result = scannerd("check-config", "--config", str(write(tmp_path, MINIMAL)), env={name: value})
    assert_config_error(result, "config error: SCANNERD_MQTT...: a number has more than 4300 digits")


def test_a_section_nested_too_deeply_in_the_environment_is_one_line(tmp_path: Path) -> None:
    result = scannerd(
        "check-config", "--config", str(write(tmp_path, MINIMAL)), env={"SCANNERD_DEVICE": "[" * 5000}
    )
    assert_config_error(result, "config error: SCANNERD_DEVICE: nested too deeply")


def test_deeply_nested_toml_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "[rules]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    for command in ("check-config", "run"):
        result = scannerd(command, "--config", str(path))
        assert_config_error(result, f"config error: {path}: arrays or tables nested too deeply")


def test_a_directory_as_config_is_one_line(tmp_path: Path) -> None:
    result = scannerd("check-config", "--config", str(tmp_path))
    assert_config_error(result, f"config error: {tmp_path}: Is a directory")


# ---------------------------------------------------------------- a password in the clear


def test_a_password_without_tls_is_a_warning_naming_the_key(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("hunter2\n")
    text = MINIMAL + f'[mqtt]\nhost = "broker.casino"\npassword_file = "{secret}"\n'
    result = scannerd("check-config", "--config", str(write(tmp_path, text)))
    assert result.returncode == 0
    assert result.stderr == (
        f"config warning: {tmp_path / 'scannerd.toml'}: mqtt: tls is false, so the broker password goes to "
        "broker.casino unencrypted; set tls = true\n"
    )
    result = scannerd("check-config", "--config", str(write(tmp_path, text + "tls = true\n")))
    assert (result.returncode, result.stderr) == (0, "")


def test_a_systemd_credential_without_tls_is_warned_about_too(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "mqtt-password").write_text("hunter2\n")
    result = scannerd(
        "check-config", "--config", str(write(tmp_path, MINIMAL)), env={"CREDENTIALS_DIRECTORY": str(creds)}
    )
    assert (
        result.returncode == 0
        and "config warning:" in result.stderr
        and "mqtt: tls is false" in result.stderr
    )
    assert scannerd("check-config", "--config", str(write(tmp_path, MINIMAL))).stderr == ""


# ---------------------------------------------------------------- the annotated example


def _uncommented(text: str) -> str:
    """The example with every ``#key = value`` line switched on."""
    return re.sub(r"^#(?=[a-z_]+ = )", "", text, flags=re.MULTILINE)


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys = set()
    for name, field in model.model_fields.items():
        keys.add(prefix + name)
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            keys |= _keys(sub, f"{prefix}{name}.")
    return keys


def _present(data: dict[str, object], prefix: str = "") -> set[str]:
    keys = set()
    for name, value in data.items():
        keys.add(prefix + name)
        if isinstance(value, dict) and prefix + name != "device.options":
            keys |= _present(value, f"{prefix}{name}.")
    return keys


def test_example_config_is_valid_as_shipped(tmp_path: Path) -> None:
    config = load_config(EXAMPLE)
    assert config.table_id == "BAC-01"


def test_example_config_documents_every_key(tmp_path: Path) -> None:
    full = _uncommented(EXAMPLE.read_text())
    path = write(tmp_path, full)
    load_config(path)  # every example value is valid, too
    missing = _keys(Config) - _present(tomllib.loads(full))
    assert not missing, f"keys missing from {EXAMPLE.name}: {sorted(missing)}"


def _sections() -> dict[str, set[str]]:
    """Each section's keys by its header (``[mqtt]``), the top level's under ``(top)``."""
    sections = {"(top)": set()}
    for name, field in Config.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            sections[f"[{name}]"] = set(sub.model_fields)
        else:
            sections["(top)"].add(name)
    return sections


def _named(text: str) -> set[str]:
    """The keys a list such as "`host`, `port` (a number), `tls`" names: each item's first word."""
    items = re.sub(r"\([^)]*\)", "", text)  # what a parenthesis says of a key is no key
    return {match.group(1) for match in re.finditer(r"(?:^|,)\s*`([a-z_]+)`", items)}


def test_the_operations_guide_lists_every_key_of_every_section() -> None:
    rows = markdown_table(REPO / "docs" / "operations.md", "## Configuration")
    assert {row[0].strip("`"): _named(row[1]) for row in rows} == _sections()


def test_the_mqtt_contract_lists_every_mqtt_and_outbox_key() -> None:
    text = (REPO / "docs" / "mqtt.md").read_text().split("## Settings", 1)[1].split("\n## ", 1)[0]
    listed = dict(re.findall(r"`(\[[a-z]+\])`: (.*?)\.(?:\s|$)", text, flags=re.DOTALL))
    sections = _sections()
    assert {name: _named(keys) for name, keys in listed.items()} == {
        name: sections[name] for name in ("[mqtt]", "[outbox]")
    }


def test_the_ranges_table_has_every_bounded_number() -> None:
    """A key whose range the model bounds is one the operator must be told the range of."""
    rows = markdown_table(REPO / "docs" / "operations.md", "**Ranges.**")
    documented = {key for row in rows for key in re.findall(r"`([a-z_]+\.[a-z_]+)`", row[0])}
    bounded = {
        f"{section}.{name}"
        for section, field in Config.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        for name, sub in field.annotation.model_fields.items()
        if any(isinstance(rule, (annotated_types.Le, annotated_types.Lt)) for rule in sub.metadata)
    }
    assert bounded - documented == set()


# ---------------------------------------------------------------- secrets


def test_redact_masks_secret_names_but_not_paths_to_them() -> None:
    data = {"mqtt": {"password": "hunter2", "password_file": "/etc/pw", "username": "T-1"}, "token": "t"}
    assert redact(data) == {
        "mqtt": {"password": "**********", "password_file": "/etc/pw", "username": "T-1"},
        "token": "**********",
    }


def test_show_never_prints_a_secret(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("hunter2\n")
    path = write(tmp_path, MINIMAL + f'[mqtt]\npassword_file = "{secret}"\n')
    result = scannerd("check-config", "--config", str(path), "--show")
    assert result.returncode == 0
    assert "hunter2" not in result.stdout
    assert json.loads(result.stdout)["mqtt"]["password_file"] == str(secret)
