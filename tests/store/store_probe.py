"""Reading a store from the outside while, or after, a build is killed (crash tests)."""

from __future__ import annotations

from pathlib import Path

import lance

from videorl_kit.store.tables import StoreTables


def frames_content(store: Path) -> list[tuple[str, str]]:
    """Sorted ``(cache_key, frames_sha256)`` of every frames row, duplicates included."""
    table = StoreTables(store).table("frames").to_table(columns=["cache_key", "frames_sha256"])
    keys = table.column("cache_key").to_pylist()
    return sorted(zip(keys, table.column("frames_sha256").to_pylist(), strict=True))


def committed_rows(store: Path) -> int:
    """Rows of the frames table at its latest version; 0 while it does not exist yet."""
    uri = store / "frames.lance"
    if not uri.is_dir():
        return 0
    try:
        return lance.dataset(str(uri)).count_rows()
    except (OSError, ValueError):  # being created
        return 0
