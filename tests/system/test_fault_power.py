"""Fault: the machine loses power, and what makes its detection fail.

A power cut is told from a crash by the kernel's boot id kept in the outbox:
after one, seq moves on past the batch that may have been published and not
synced, and the round open is void. Two ways that once went unseen: a start
after the cut that itself dies before it has dealt with it (the boot id was
already overwritten), and a /proc where the boot id cannot be read (systemd's
``ProcSubset=pid``), where every boot looked the same.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.events import DeviceCard
from scannerd.store.opening import SEQ_SKIP_AFTER_POWER_LOSS
from tests.support.broker import Broker, wait_until
from tests.support.process import live_table
from tests.system.test_fault_restart import kept

BASE = "casino/tables/T1"


def power_cut(outbox: Path, boot_id: str = "an-earlier-boot") -> None:
    """What the machine dying leaves: the outbox still marked open, by another boot."""
    db = sqlite3.connect(outbox)
    db.execute("UPDATE meta SET value = '1' WHERE key = 'open'")
    db.execute("UPDATE meta SET value = ? WHERE key = 'boot_id'", (boot_id,))
    db.commit()
    db.close()


def test_a_start_that_dies_before_dealing_with_a_power_cut_leaves_it_for_the_next(
    tmp_path: Path, mosquitto: Broker
) -> None:
    with live_table(
        tmp_path,
        mosquitto,
        "beetek",
        in_process=True,
        start=False,
        rules={"burn": "none"},
    ) as table:
        daemon = table.build()
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})
        next_seq = daemon.validator.next_seq
        table.kill(signal.SIGTERM)
        power_cut(tmp_path / "outbox.sqlite3")
        # The first start after the cut is killed while it builds the daemon, before it voided anything.
        built = subprocess.run(
            [
                sys.executable,
                "-c",
                "import os; from scannerd.runtime.config import load_config; "
                "from scannerd.runtime.daemon import Daemon; "
                f"Daemon(load_config({str(table.config)!r})); os._exit(9)",
            ],
            cwd=Path(__file__).parents[2],
            capture_output=True,
        )
        assert built.returncode == 9, built.stderr.decode()[-2000:]
        again = table.build()
        assert again.validator.next_seq == next_seq + SEQ_SKIP_AFTER_POWER_LOSS
        again.start(device_wait_s=0)
        state = again.validator.state()
        assert (state["round"]["round_id"], state["round"]["phase"]) == ("R1", "void")
        table.kill(signal.SIGTERM)
        after = table.build()  # dealt with and stored: the next start is an ordinary one
        assert after.validator.next_seq == again.validator.next_seq


PROC_SUBSET_PID = (
    "unshare",
    "--mount",
    "sh",
    "-c",
    'mount -t proc -o subset=pid,hidepid=invisible proc /proc && exec "$@"',
    "sh",
)
"""``scannerd run`` under the /proc that ``ProcSubset=pid`` and ``ProtectProc=invisible`` give: systemd
mounts it in the unit's own mount namespace, in the machine's pid namespace; the shell execs the daemon."""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
@pytest.mark.timeout(120)
def test_a_power_cut_is_assumed_where_the_boot_id_cannot_be_read(tmp_path: Path, mosquitto: Broker) -> None:
    """No way to tell a power cut from a crash: the daemon takes the safe side (seq moves on, round void)."""
    with live_table(tmp_path, mosquitto, prefix=PROC_SUBSET_PID) as table:
        server, shoe, log = table.server, table.shoe, table.log
        assert shoe is not None
        server.wait_online(BASE)
        for card in ("9H", "2S"):
            shoe.send(DeviceCard(card))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        assert shoe.wait_idle(10)
        table.kill(signal.SIGTERM)
        power_cut(tmp_path / "outbox.sqlite3", boot_id="unknown")  # all such a /proc ever shows
        before = max(e["seq"] for e in kept(server, "card"))
        table.start()
        wait_until(lambda: log.read_text().count("daemon started") >= 2, 30, "started again")
        server.wait_for(lambda _: any(a["code"] == "DAEMON_RESTARTED" for a in kept(server, "alert")))
    restart = next(a for a in kept(server, "alert") if a["code"] == "DAEMON_RESTARTED")
    assert restart["seq"] > before + SEQ_SKIP_AFTER_POWER_LOSS
    assert "the boot id cannot be read" in log.read_text()
