"""The ``[staff]`` config section: where the house keeps the table's staff list."""

from __future__ import annotations

from pydantic import Field

from scannerd.settings.config_section import FilePath, Section


class StaffSettings(Section):
    """The staff list; without one the table takes any dealer id and says so in its status."""

    file: FilePath | None = Field(
        None,
        description="The staff list `scannerd staff add` writes: ids, roles and salted PIN hashes. "
        "Readable by the service's user only. Unset: no staff list.",
    )
