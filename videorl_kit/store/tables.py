"""Opening and creating the Lance tables of a store folder, and the store-level metadata.

Each table records the cache-schema version it was written with in its dataset config
(``videorl.cache_schema_version``) and in its Arrow schema metadata; the frames table also
lists every budget it holds (``videorl.budget.<hash>`` = the budget as canonical JSON).
Opening refuses a table written with another schema version, and a damaged store: a data
file missing or truncated, or a table whose newest version is older than the one the kit last
committed (:mod:`videorl_kit.store.integrity`); each with one line naming the repair command.
Creating (for a build) also refuses a store the process cannot write to. Creating a store and
recording a budget happen under the store's write lock (:mod:`videorl_kit.store.lock`), so two
builds may create one store at the same moment; opening for reading takes no lock.

Example:
    >>> import tempfile
    >>> store = StoreTables.create(tempfile.mkdtemp())
    >>> sorted(p.name for p in store.root.iterdir())  # tables, version record, write lock
    ['.videorl_kit.lock', 'failures.lance', 'frames.lance', 'samples.lance',
     'trajectories.lance', 'videorl_kit_state.json']
    >>> store.register_budget("video", {"fps": 2.0})
    'cbf5f76b20dffce2'
    >>> store.budgets()["cbf5f76b20dffce2"]["budget"]
    {'fps': 2.0}
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa

from videorl_kit.store.errors import (
    StoreError,
    StoreIntegrityError,
    StoreMismatchError,
    StoreNotFoundError,
    rebuild_hint,
    repair_hint,
)
from videorl_kit.store.integrity import (
    STATE_NAME,
    damaged_files,
    record_versions,
    recorded_versions,
    rolled_back_tables,
    special_manifest,
    state_problem,
)
from videorl_kit.store.lock import retry_conflicts, write_lock
from videorl_kit.store.row_digest import first_malformed_key, malformed_key_problem
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    CONFIG_BUDGET_PREFIX,
    CONFIG_SCHEMA_VERSION,
    CONFIG_TABLE,
    FRAMES_STORAGE_VERSION,
    FRAMES_TABLE,
    SCHEMA_CHANGES,
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

        Refuses (:class:`StoreMismatchError`) an existing table of another schema version,
        a store this process cannot write to (:class:`StoreError`) and a damaged store
        (:class:`StoreIntegrityError`, see :meth:`check_integrity`).
        """
        store = cls(root)
        store.ensure_writable()
        with write_lock(store.root):  # another build may be creating the same store now
            # frames last: its folder is the mark of a store, so a reader that finds it finds
            # every table; each appears whole (written aside, then renamed into place)
            for name in sorted(TABLE_NAMES, key=lambda n: n == FRAMES_TABLE):
                if not Path(store.uri(name)).is_dir():
                    store._create_table(name)
            store.check_schema_versions()
            if not (store.root / STATE_NAME).exists() and not store.has_rows():
                store.record_versions()  # a new store: from now on its version record exists
            store.check_integrity()
        return store

    def ensure_writable(self) -> None:
        """Create the folder if needed; :class:`StoreError` if the process cannot write there.

        Probes the folder and every table folder with a temporary file (removed at once), so a
        read-only store is refused with one line before a build starts.
        """
        folders = [self.root]
        for name in TABLE_NAMES:
            table = Path(self.uri(name))
            folders += [table, table / "_versions", table / "data"]
        where = self.root
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            for where in (f for f in folders if f.is_dir()):
                handle, probe = tempfile.mkstemp(prefix=".write-probe-", dir=where)
                os.close(handle)
                os.unlink(probe)
        except OSError as exc:
            raise StoreError(
                f"{self.root}: cannot write to the store ({where}: {exc.strerror or exc}); "
                "build into a writable folder or fix its permissions"
            ) from None

    @classmethod
    def open(cls, root: str | Path, *, check: bool = True) -> StoreTables:
        """Open an existing store for reading; never creates or changes anything.

        Raises :class:`StoreNotFoundError` if ``root`` is not a store or lacks one of its
        tables (an interrupted first build; building again completes it), and
        :class:`StoreMismatchError` if a table was written with another schema version, and
        (unless ``check=False``, as ``cache repair`` opens it) :class:`StoreIntegrityError` if
        the store is damaged (:meth:`check_integrity`). Each message names the folder and the
        ``videorl-kit`` command to run.

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
        for name in TABLE_NAMES:  # before Lance opens a manifest: a FIFO there never returns
            special = special_manifest(Path(store.uri(name)))
            if special:
                raise StoreIntegrityError(
                    f"{store.root}: the store is damaged: {special}; remove that entry, then "
                    f"{repair_hint(str(store.root))}"
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
        if check:
            store.check_integrity()
        return store

    def _create_table(self, name: str) -> None:
        """Create table ``name`` with its config, whole: written in a folder beside it (named
        for this process) and renamed into place, so no process ever opens a table without
        its manifest or config. Called under the store's write lock."""
        schema = SCHEMAS[name]
        empty = pa.Table.from_batches([], schema=schema)
        kwargs: dict[str, Any] = {"schema": schema, "mode": "create"}
        if name == FRAMES_TABLE:
            kwargs["data_storage_version"] = FRAMES_STORAGE_VERSION
        final = Path(self.uri(name))
        aside = final.with_name(f".{final.name}.creating-{os.getpid()}")
        shutil.rmtree(aside, ignore_errors=True)  # left by a killed process of this pid
        try:
            dataset = lance.write_dataset(empty, str(aside), **kwargs)
            dataset.update_config(
                {CONFIG_TABLE: name, CONFIG_SCHEMA_VERSION: str(CACHE_SCHEMA_VERSION)}
            )
            try:
                os.rename(aside, final)
            except OSError as exc:
                if not final.is_dir():  # else: another writer (without a lock) was first
                    raise exc from None
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreNotFoundError(f"{final}: cannot create table: {exc}") from exc
        finally:
            shutil.rmtree(aside, ignore_errors=True)

    def table(self, name: str, version: int | None = None) -> lance.LanceDataset:
        """The latest committed version of table ``name`` (or ``version``)."""
        return lance.dataset(self.uri(name), version=version)

    # -- integrity ---------------------------------------------------------------------------
    def latest_versions(self) -> dict[str, int]:
        """The newest version of every table."""
        return {name: int(self.table(name).version) for name in TABLE_NAMES}

    def record_versions(self) -> None:
        """Remember the tables' newest versions (after a build or a repair has committed)."""
        with write_lock(self.root):
            record_versions(self.root, self.latest_versions())

    def has_rows(self) -> bool:
        """True when any table holds a row (counted from the manifests, no data read)."""
        return any(self.table(name).count_rows() for name in TABLE_NAMES)

    def check_integrity(self) -> None:
        """:class:`StoreIntegrityError` (one line) if a frames row's key is not a cache key, a
        table's data file is missing or truncated, the version record
        (:data:`~videorl_kit.store.integrity.STATE_NAME`) is unreadable, or missing while the
        tables hold rows, or a table went back to an older version than the kit last committed."""
        for name in TABLE_NAMES:
            folder = self.root / f"{name}.lance"
            if folder.is_symlink():
                raise StoreIntegrityError(
                    f"{self.root}: the store is damaged: table folder {folder} is a symbolic "
                    f"link to {os.readlink(folder)}; the kit reads and writes only inside the "
                    "store folder: replace the link with the folder itself"
                )
        damaged = [f for name in TABLE_NAMES for f in damaged_files(name, self.table(name))]
        if damaged:
            more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
            raise StoreIntegrityError(
                f"{self.root}: the store is damaged: {damaged[0]}{more}; "
                f"{repair_hint(str(self.root))}"
            )
        problem = state_problem(self.root, self.has_rows())
        if problem:
            raise StoreIntegrityError(
                f"{self.root}: the store is damaged: {problem}; run `videorl-kit cache repair "
                f"--store {shlex.quote(str(self.root))}` to record the tables' current versions "
                f"again (then `videorl-kit cache verify --store {shlex.quote(str(self.root))}` "
                "against the sources, or "
                "rebuild, if the store may have lost a version)"
            )
        # the record first, then the tables: a writer records a version after committing it,
        # so a commit made in between never looks like a rollback to this (lock-free) reader
        recorded = recorded_versions(self.root)
        rolled_back = rolled_back_tables(self.root, self.latest_versions(), recorded=recorded)
        if rolled_back:
            name, (found, recorded) = min(rolled_back.items())
            raise StoreIntegrityError(
                f"{self.root}: table {name} is at version {found} but the kit last committed "
                f"version {recorded}: the manifests of the newer versions are gone, and Lance "
                f"would silently serve older rows; {repair_hint(str(self.root))} to accept "
                f"version {found} (a later build decodes what was lost again)"
            )
        # files are named after keys: a store holding something else is never read
        keys = self.table(FRAMES_TABLE).to_table(columns=["cache_key"]).column("cache_key")
        bad = first_malformed_key(keys)
        if bad is not None:
            raise StoreIntegrityError(
                f"{self.root}: the store is damaged: "
                f"{malformed_key_problem(bad, keys[bad].as_py())}; {repair_hint(str(self.root))}"
            )

    def check_schema_versions(self) -> None:
        """Raise :class:`StoreMismatchError` if a table was written with another schema version."""
        for name in TABLE_NAMES:
            found = self.schema_version(name)
            if found != CACHE_SCHEMA_VERSION:
                changed = "; ".join(
                    f"version {v}: {SCHEMA_CHANGES[v]}"
                    for v in sorted(SCHEMA_CHANGES)
                    if found is not None and found < v <= CACHE_SCHEMA_VERSION
                )
                raise StoreMismatchError(
                    f"{self.uri(name)}: written with cache schema version {found}, this "
                    f"videorl-kit reads version {CACHE_SCHEMA_VERSION}"
                    f"{f' ({changed})' if changed else ''}; "
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
        if key in self.table(FRAMES_TABLE).config():
            return digest
        value = canonical_json({"modality": modality, "budget": budget})

        def record() -> None:  # re-read under the lock: another build may have recorded it
            frames = self.table(FRAMES_TABLE)
            if frames.config().get(key) != value:
                frames.update_config({key: value})

        with write_lock(self.root):
            retry_conflicts(record)
        return digest

    def budgets(self) -> dict[str, dict[str, Any]]:
        """Budgets recorded in the frames table: ``{budget_hash: {"modality", "budget"}}``."""
        found: dict[str, dict[str, Any]] = {}
        for key, value in self.table(FRAMES_TABLE).config().items():
            if key.startswith(CONFIG_BUDGET_PREFIX):
                found[key[len(CONFIG_BUDGET_PREFIX) :]] = json.loads(value)
        return found
