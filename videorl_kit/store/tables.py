"""Opening and creating the Lance tables of a store folder, and the store-level metadata.

Each table records the cache-schema version it was written with in its dataset config
(``videorl.cache_schema_version``) and in its Arrow schema metadata; the frames table also
lists every budget it holds (``videorl.budget.<hash>`` = the budget as canonical JSON).
Opening refuses a table written with another schema version.

Example:
    >>> import tempfile
    >>> store = StoreTables.create(tempfile.mkdtemp())
    >>> sorted(p.name for p in store.root.iterdir())
    ['failures.lance', 'frames.lance', 'samples.lance', 'trajectories.lance']
    >>> store.register_budget("video", {"fps": 2.0})
    'cbf5f76b20dffce2'
    >>> store.budgets()["cbf5f76b20dffce2"]["budget"]
    {'fps': 2.0}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa

from videorl_kit.store.errors import StoreMismatchError, StoreNotFoundError, rebuild_hint
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    CONFIG_BUDGET_PREFIX,
    CONFIG_SCHEMA_VERSION,
    CONFIG_TABLE,
    FRAMES_STORAGE_VERSION,
    FRAMES_TABLE,
    SCHEMAS,
    TABLE_NAMES,
    budget_hash,
    canonical_json,
)


class StoreTables:
    """The four tables of one store folder (``<root>/<table>.lance``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # -- locations ---------------------------------------------------------------------------
    def uri(self, name: str) -> str:
        """Filesystem path of table ``name``.

        Example:
            >>> StoreTables("/s").uri("frames")
            '/s/frames.lance'
        """
        if name not in SCHEMAS:
            raise ValueError(f"unknown table {name!r}; tables are {', '.join(TABLE_NAMES)}")
        return str(self.root / f"{name}.lance")

    def exists(self) -> bool:
        """True when the folder holds a frames table (the mark of a store)."""
        return Path(self.uri(FRAMES_TABLE)).is_dir()

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def create(cls, root: str | Path) -> StoreTables:
        """Open the store at ``root``, creating the folder and any missing table.

        Refuses (:class:`StoreMismatchError`) an existing table of another schema version.
        """
        store = cls(root)
        store.root.mkdir(parents=True, exist_ok=True)
        for name in TABLE_NAMES:
            if not Path(store.uri(name)).is_dir():
                store._create_table(name)
        store.check_schema_versions()
        return store

    @classmethod
    def open(cls, root: str | Path) -> StoreTables:
        """Open an existing store for reading; never creates or changes anything.

        Raises :class:`StoreNotFoundError` if ``root`` is not a store or lacks one of its
        tables (an interrupted first build; building again completes it), and
        :class:`StoreMismatchError` if a table was written with another schema version.
        Each message names the folder and the ``videorl-kit build-cache`` command to run.

        Example:
            >>> import tempfile
            >>> StoreTables.open(tempfile.mkdtemp())  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            videorl_kit.store.errors.StoreNotFoundError: ...: not a videorl-kit store (has no ...
        """
        store = cls(root)
        if not store.exists():
            what = "does not exist" if not store.root.exists() else "has no frames.lance table"
            raise StoreNotFoundError(
                f"{store.root}: not a videorl-kit store ({what}); {rebuild_hint(str(store.root))}"
            )
        missing = [f"{n}.lance" for n in TABLE_NAMES if not Path(store.uri(n)).is_dir()]
        if missing:
            raise StoreNotFoundError(
                f"{store.root}: incomplete videorl-kit store (no {', '.join(missing)}; was its "
                f"first build interrupted?); {rebuild_hint(str(store.root))}"
            )
        for name in TABLE_NAMES:
            try:
                store.table(name)
            except (OSError, ValueError) as exc:
                raise StoreNotFoundError(
                    f"{store.uri(name)}: not a readable Lance table ({exc}); "
                    f"{rebuild_hint(str(store.root), schema_changed=True)}"
                ) from None
        store.check_schema_versions()
        return store

    def _create_table(self, name: str) -> None:
        schema = SCHEMAS[name]
        empty = pa.Table.from_batches([], schema=schema)
        kwargs: dict[str, Any] = {"schema": schema, "mode": "create"}
        if name == FRAMES_TABLE:
            kwargs["data_storage_version"] = FRAMES_STORAGE_VERSION
        try:
            dataset = lance.write_dataset(empty, self.uri(name), **kwargs)
        except (OSError, ValueError) as exc:  # another process created it first
            if Path(self.uri(name)).is_dir():
                return
            raise StoreNotFoundError(f"{self.uri(name)}: cannot create table: {exc}") from exc
        dataset.update_config(
            {CONFIG_TABLE: name, CONFIG_SCHEMA_VERSION: str(CACHE_SCHEMA_VERSION)}
        )

    def table(self, name: str, version: int | None = None) -> lance.LanceDataset:
        """The latest committed version of table ``name`` (or ``version``)."""
        return lance.dataset(self.uri(name), version=version)

    def check_schema_versions(self) -> None:
        """Raise :class:`StoreMismatchError` if a table was written with another schema version."""
        for name in TABLE_NAMES:
            found = self.schema_version(name)
            if found != CACHE_SCHEMA_VERSION:
                raise StoreMismatchError(
                    f"{self.uri(name)}: written with cache schema version {found}, this "
                    f"videorl-kit reads version {CACHE_SCHEMA_VERSION}; "
                    f"{rebuild_hint(str(self.root), schema_changed=True)}"
                )
            missing = [f.name for f in SCHEMAS[name] if f.name not in self.table(name).schema.names]
            if missing:
                raise StoreMismatchError(
                    f"{self.uri(name)}: missing columns {', '.join(missing)}; "
                    f"{rebuild_hint(str(self.root), schema_changed=True)}"
                )

    def schema_version(self, name: str) -> int | None:
        """The cache-schema version table ``name`` was written with (None if unrecorded)."""
        dataset = self.table(name)
        raw = dataset.config().get(CONFIG_SCHEMA_VERSION)
        if raw is None:
            meta = dataset.schema.metadata or {}
            value = meta.get(CONFIG_SCHEMA_VERSION.encode())
            raw = value.decode() if value is not None else None
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    # -- budgets -----------------------------------------------------------------------------
    def register_budget(self, modality: str, budget: dict[str, Any]) -> str:
        """Record that the frames table holds ``budget`` (idempotent); return its hash."""
        digest = budget_hash(modality, budget)
        key = CONFIG_BUDGET_PREFIX + digest
        frames = self.table(FRAMES_TABLE)
        if key not in frames.config():
            frames.update_config({key: canonical_json({"modality": modality, "budget": budget})})
        return digest

    def budgets(self) -> dict[str, dict[str, Any]]:
        """Budgets recorded in the frames table: ``{budget_hash: {"modality", "budget"}}``."""
        found: dict[str, dict[str, Any]] = {}
        for key, value in self.table(FRAMES_TABLE).config().items():
            if key.startswith(CONFIG_BUDGET_PREFIX):
                found[key[len(CONFIG_BUDGET_PREFIX) :]] = json.loads(value)
        return found
