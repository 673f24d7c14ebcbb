"""The status line systemd shows says what an operator at the table PC must see, the archive's lag too."""

from __future__ import annotations

from scannerd.contract.payloads import ArchiveHealth, HealthPayload
from scannerd.runtime.health import TableHealth


def _health(archive: ArchiveHealth | None) -> TableHealth:
    payload = HealthPayload(
        ts=0.0,
        table_id="T1",
        connected=True,
        published=0,
        pending=2,
        in_flight=0,
        outbox_bytes=0,
        outbox_max_bytes=1 << 20,
        outbox_level="ok",
        reconnects=0,
        refused=0,
        requests=0,
        rejected_requests=0,
        errors=0,
        archive=archive,
    )
    shoe = {"shoe_id": "S1", "status": "dealing"}
    return TableHealth(payload, link_up=True, device=None, suspended=None, shoe=shoe, round=None)


def _archive(state: str, behind: int) -> ArchiveHealth:
    return ArchiveHealth.model_validate(
        {
            "url": "s3://b/casino",
            "state": state,
            "behind": behind,
            "oldest": "T1-x.jsonl.gz" if behind else None,
            "oldest_age_s": 7200.0 if behind else None,
            "archived": 4,
            "errors": 0,
            "last_error": None,
            "alive": True,
        }
    )


def test_a_table_that_archives_nothing_says_nothing_of_an_archive() -> None:
    assert _health(None).status_line() == "shoe S1 dealing, link up, mqtt connected, 2 pending"


def test_an_archive_behind_is_on_the_status_line_with_its_state() -> None:
    assert _health(_archive("retrying", 3)).status_line().endswith("2 pending, archive retrying, 3 behind")
    assert _health(_archive("shipping", 0)).status_line().endswith("2 pending, archive shipping")
