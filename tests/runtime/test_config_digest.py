"""The effective configuration's digest, and the per-key digests a table keeps of its last start."""

from __future__ import annotations

import json
from pathlib import Path

from scannerd.runtime import config_digest
from scannerd.runtime.config import load_config
from tests.support.config import write_config

PASSWORD = "hunter2-but-longer"


def config_at(tmp_path: Path, password: str | None, **mqtt: object) -> config_digest.Config:
    keys: dict[str, object] = {"host": "broker.example", **mqtt}
    if password is not None:
        (tmp_path / "pw").write_text(password + "\n")
        keys["password_file"] = str(tmp_path / "pw")
    return load_config(write_config(tmp_path, None, "beetek", "/dev/shoe-1", mqtt=keys))


def test_the_digest_is_the_settings_and_whether_each_secret_is_set_not_its_value(tmp_path: Path) -> None:
    one = config_digest.effective(config_at(tmp_path, PASSWORD), "00" * 16)
    other_salt = config_digest.effective(config_at(tmp_path, PASSWORD), "11" * 16)
    rotated = config_digest.effective(config_at(tmp_path, "another-one"), "00" * 16)
    none = config_digest.effective(config_at(tmp_path, None), "00" * 16)
    assert one.digest == other_salt.digest == rotated.digest  # anyone can work it out from the settings
    assert none.digest != one.digest  # set or not is part of it
    assert one.keys != other_salt.keys  # the kept digests are the table's own
    assert config_digest.changed(one.keys, rotated.keys) == ["mqtt.password"]
    assert config_digest.changed(none.keys, one.keys) == ["mqtt.password", "mqtt.password_file"]


def test_the_kept_file_holds_no_secret_and_reads_back(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox.sqlite3"
    first = config_digest.LastStart.read(outbox)
    assert first.effective is None and first.path == tmp_path / "outbox.config"
    now = config_digest.effective(config_at(tmp_path, PASSWORD), first.salt)
    first.write(now)
    assert PASSWORD not in first.path.read_text()
    assert config_digest.LastStart.read(outbox).effective == now
    assert first.path.stat().st_mode & 0o077 == 0


def test_a_kept_file_that_is_not_one_says_no_change(tmp_path: Path) -> None:
    (tmp_path / "outbox.config").write_text(json.dumps({"digest": 1}))
    assert config_digest.LastStart.read(tmp_path / "outbox.sqlite3").effective is None
