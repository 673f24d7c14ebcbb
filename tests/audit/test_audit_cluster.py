"""``scannerd audit --cluster``: an archive audited on a real local Dask cluster, as in one process."""

from __future__ import annotations

from pathlib import Path

from simulators.week import write_week
from tests.support.command import scannerd


def test_on_a_dask_cluster_the_report_is_the_one_of_a_single_process(
    tmp_path: Path, dask_scheduler: str
) -> None:
    archive = tmp_path / "archive"
    lazy = [s for s in write_week(archive, tables=2, days=3, lazy=1, seed=3) if s.lazy]
    assert scannerd("audit", str(archive), "--out", str(tmp_path / "one"), "--workers", "1") == 1
    status = scannerd("audit", str(archive), "--out", str(tmp_path / "dask"), "--cluster", dask_scheduler)
    assert status == 1
    for name in ("report.json", "report.html"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    assert f'"shoe_id": "{lazy[0].shoe_id}"' in (tmp_path / "dask" / "report.json").read_text()
